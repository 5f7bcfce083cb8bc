"""What differs between the torch releases the worker runs under (1.13 to today), in one place.

A pool may run under another torch than the installed one (quizgen/torches.py); the settings the
worker reads and resets are spelled differently there. Only worker processes import this (torch).
"""

from __future__ import annotations

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
    if hasattr(t, "untyped_storage"):
        return t.untyped_storage()
    return t.storage().untyped()
