"""What differs between the torch releases the worker runs under (1.13 to today), in one place.

A pool may run under another torch than the installed one (torch_versions/environments.py); the settings the
worker reads and resets are spelled differently there. Only worker processes import this (torch).
"""

from __future__ import annotations

import contextlib
from types import ModuleType
from typing import Any

_DEVICES = (("cpu", "bfloat16"), ("cuda", "float16"))  # autocast's devices and their default dtypes


def autocast_settings() -> dict[str, object]:
    """Whether autocast is on, and at which dtype, for the CPU and CUDA."""
    import torch

    settings: dict[str, object] = {}
    for device, _ in _DEVICES:
        if hasattr(torch, "get_autocast_dtype"):  # 2.4 and later: one function, the device an argument
            settings[f"autocast_{device}"] = torch.is_autocast_enabled(device)
            settings[f"autocast_{device}_dtype"] = torch.get_autocast_dtype(device)
        else:
            old = _old_names(torch, device)
            settings[f"autocast_{device}"] = old["is_enabled"]()
            settings[f"autocast_{device}_dtype"] = old["get_dtype"]()
    return settings


def reset_autocast() -> None:
    """Autocast off on every device, at its default dtype (a snippet may enter it and never leave)."""
    import torch

    for device, dtype_name in _DEVICES:
        dtype = getattr(torch, dtype_name)
        if hasattr(torch, "set_autocast_dtype"):
            torch.set_autocast_enabled(device, False)
            torch.set_autocast_dtype(device, dtype)
        else:
            old = _old_names(torch, device)
            old["set_enabled"](False)
            old["set_dtype"](dtype)


def _old_names(torch: Any, device: str) -> dict[str, Any]:
    """Before 2.4: a function per device (the CPU's named `cpu`; CUDA's `gpu`, or no device at all)."""
    if device == "cpu":
        return {
            "is_enabled": torch.is_autocast_cpu_enabled,
            "get_dtype": torch.get_autocast_cpu_dtype,
            "set_enabled": torch.set_autocast_cpu_enabled,
            "set_dtype": torch.set_autocast_cpu_dtype,
        }
    return {
        "is_enabled": torch.is_autocast_enabled,
        "get_dtype": torch.get_autocast_gpu_dtype,
        "set_enabled": torch.set_autocast_enabled,
        "set_dtype": torch.set_autocast_gpu_dtype,
    }


def untyped_storage(t: Any) -> Any:
    """A tensor's storage as bytes of no type (`Tensor.untyped_storage` since 2.0)."""
    if _UNTYPED is None:
        _resolve_untyped()
    return _UNTYPED(t)


def _resolve_untyped() -> None:
    # (resolved once: the order search asks for tens of thousands of storages)
    global _UNTYPED
    import torch

    method = getattr(torch.Tensor, "untyped_storage", None)
    _UNTYPED = method if method is not None else lambda t: t.storage().untyped()


_UNTYPED: Any = None


# torch.backends switches a snippet can flip (`torch.backends.cudnn.deterministic = True`) and no namespace
# shows: (module under torch, attribute). The fp32_precision ones are 2.9's spelling of what
# set_float32_matmul_precision and allow_tf32 set; each is skipped where this torch lacks it.
_BACKEND_FLAGS = (
    ("backends.cudnn", "enabled"),
    ("backends.cudnn", "benchmark"),
    ("backends.cudnn", "deterministic"),
    ("backends.cudnn", "allow_tf32"),
    ("backends.cuda.matmul", "allow_tf32"),
    ("backends.cuda.matmul", "allow_fp16_reduced_precision_reduction"),
    ("backends.cuda.matmul", "allow_bf16_reduced_precision_reduction"),
    ("backends.mkldnn", "enabled"),
    ("backends.nnpack", "enabled"),
    ("backends.opt_einsum", "enabled"),
    ("backends.opt_einsum", "strategy"),
    ("backends", "fp32_precision"),
    ("backends.cuda.matmul", "fp32_precision"),
    ("backends.cudnn", "fp32_precision"),
    ("backends.cudnn.conv", "fp32_precision"),
    ("backends.cudnn.rnn", "fp32_precision"),
    ("backends.mkldnn", "fp32_precision"),
    ("backends.mkldnn.matmul", "fp32_precision"),
    ("backends.mkldnn.conv", "fp32_precision"),
    ("backends.mkldnn.rnn", "fp32_precision"),
)


def backend_flags() -> dict[str, object]:
    """The torch.backends switches and the float32 matmul precision, as they are now."""
    import torch

    flags: dict[str, object] = {}
    for owner, name in _BACKEND_FLAGS:
        with contextlib.suppress(Exception):  # a module or flag this torch lacks
            module = _module(torch, owner)
            flags[f"{owner}.{name}"] = getattr(module, name)
            # Where torch defines no property for a flag (2.13's opt_einsum.enabled), setting it puts
            # an entry in the module object's own namespace: put back, it must go again.
            flags[f"{owner}.{name} own"] = isinstance(module, ModuleType) and name in vars(module)
    with contextlib.suppress(Exception):  # (raises when both its spellings were set differently)
        flags["float32_matmul_precision"] = torch.get_float32_matmul_precision()
    mha = getattr(torch.backends, "mha", None)
    if hasattr(mha, "get_fastpath_enabled"):
        flags["backends.mha.fastpath"] = mha.get_fastpath_enabled()  # type: ignore[union-attr]
    return flags


def restore_backend_flags(saved: dict[str, object]) -> None:
    """Put back the switches as `saved` (backend_flags()) holds them; twice, as setting one spelling of
    the matmul precision changes the other."""
    import torch

    if backend_flags() == saved:
        return
    for _ in range(2):
        for owner, name in _BACKEND_FLAGS:
            key = f"{owner}.{name}"
            with contextlib.suppress(Exception):
                module = _module(torch, owner)
                if saved.get(f"{key} own") is False and name in vars(module):
                    delattr(module, name)
                if key in saved and getattr(module, name) != saved[key]:
                    setattr(module, name, saved[key])
    if "backends.mha.fastpath" in saved:
        torch.backends.mha.set_fastpath_enabled(bool(saved["backends.mha.fastpath"]))


def _module(torch: Any, path: str) -> Any:
    for name in path.split("."):
        torch = getattr(torch, name)
    return torch
