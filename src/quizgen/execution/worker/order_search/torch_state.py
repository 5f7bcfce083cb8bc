"""torch's global settings and the random number generators: part of a candidate order's state.

The settings are those a job starts with reset (runner.reset_state): default dtype and device, grad
mode, anomaly detection, deterministic algorithms, threads, print options, warning filters.
"""

from __future__ import annotations

import ctypes
import random
import sys
import warnings
from dataclasses import dataclass
from typing import Any

import torch
from torch._tensor_str import PRINT_OPTS


@dataclass
class Settings:
    """torch's global settings and the random number generators."""

    values: tuple[Any, ...]
    torch_rng: torch.Tensor
    python_rng: object
    numpy_rng: object

    def token(self) -> tuple[object, ...]:
        rng = ctypes.string_at(self.torch_rng.data_ptr(), self.torch_rng.numel())  # (bytes: uint8)
        return (self.values, rng, self.python_rng, _numpy_token(self.numpy_rng))


def _numpy_token(state: object) -> object:
    if isinstance(state, tuple):
        return tuple(bytes(p.data) if hasattr(p, "tobytes") else p for p in state)
    return state


def _settings_values() -> tuple[Any, ...]:
    return (
        torch.get_default_dtype(),
        _default_device(),
        torch.is_grad_enabled(),
        torch.is_anomaly_enabled(),
        torch.is_anomaly_check_nan_enabled(),
        torch.are_deterministic_algorithms_enabled(),
        torch.is_deterministic_algorithms_warn_only_enabled(),
        torch.get_num_threads(),
        tuple(vars(PRINT_OPTS).items()),
        tuple(warnings.filters),
    )


def _default_device() -> str:
    """ "cpu" unless a default device or a torch function mode is set (reading it is slow)."""
    context = getattr(getattr(torch, "_GLOBAL_DEVICE_CONTEXT", None), "device_context", None)
    if context is None and not torch._C._len_torch_function_stack():
        return "cpu"
    if not hasattr(torch, "get_default_device"):  # before 2.3: the context's, if any (none before 2.0)
        return str(getattr(context, "device", "cpu"))
    return str(torch.get_default_device())


def settings(generators: bool = True) -> Settings:
    """The settings and generators now; Python's and numpy's global generators only with `generators`
    (they are slow to read: a search that leaves them out checks at its end that no step moved them)."""
    numpy = sys.modules.get("numpy")
    numpy_rng = numpy.random.get_state() if numpy is not None and generators else None
    python_rng = random.getstate() if generators else None
    return Settings(_settings_values(), torch.get_rng_state(), python_rng, numpy_rng)


def generators_state() -> object:
    """Python's and numpy's global generators, comparable."""
    numpy = sys.modules.get("numpy")
    return random.getstate(), _numpy_token(numpy.random.get_state()) if numpy is not None else None


def restore_settings(saved: Settings) -> None:
    """Put the settings and generators back as `saved` has them (setting only what differs)."""
    now = _settings_values()
    dtype, device, grad, anomaly, nan, determ, warn_only, threads, printing, filters = saved.values
    if now[0] != dtype:
        torch.set_default_dtype(dtype)
    if now[1] != device and hasattr(torch, "set_default_device"):
        torch.set_default_device(None if device == "cpu" else device)
    if now[2] != grad:
        torch.set_grad_enabled(grad)
    if now[3:5] != (anomaly, nan):
        torch.autograd.set_detect_anomaly(anomaly, check_nan=nan)
    if now[5:7] != (determ, warn_only):
        torch.use_deterministic_algorithms(determ, warn_only=warn_only)
    if now[7] != threads:
        torch.set_num_threads(threads)
    if now[8] != printing:
        for key, value in printing:
            setattr(PRINT_OPTS, key, value)
    if now[9] != filters:
        current: list[object] = warnings.filters  # type: ignore[assignment]
        current[:] = list(filters)
        warnings._filters_mutated()  # type: ignore[attr-defined]
    torch.set_rng_state(saved.torch_rng)
    if saved.python_rng is not None:
        random.setstate(saved.python_rng)  # type: ignore[arg-type]
    numpy = sys.modules.get("numpy")
    if numpy is not None and saved.numpy_rng is not None:
        numpy.random.set_state(saved.numpy_rng)
