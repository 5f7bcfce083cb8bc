"""States at a glance: the fast order search buckets states by a cheap summary before comparing them
whole (order.tree._merge); equal states always share a summary."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TypeVar

import torch

from quizgen.execution.worker.order_search import program_state as order_state

N = TypeVar("N")


def split(
    bucket: list[N], state: Callable[[N], tuple[dict[str, object], Iterable[str] | None]]
) -> list[list[N]]:
    """The bucket by what tells states apart at a glance: the live variables that are plain values or
    small tensors (equal states agree on them; comparing whole states is left to those that do).
    `state` gives a node's namespace and live variables."""
    parts: dict[object, list[N]] = {}
    for node in bucket:
        parts.setdefault(_glance(*state(node)), []).append(node)
    return list(parts.values())


def _glance(ns: dict[str, object], live: Iterable[str] | None) -> tuple[object, ...]:
    """A cheap summary of the live variables that equal states share: plain values and small tensors
    as they are, anything else by its type (coarser than capture's fingerprint, never finer)."""
    seen: list[object] = []
    for name in sorted(ns if live is None else set(live) & set(ns)):
        value = ns[name]
        kind = type(value)
        if kind in order_state.ATOMS:
            seen.append((name, kind, value))
        elif isinstance(value, torch.Tensor) and kind is torch.Tensor and value.numel() <= 64:
            seen.append((name, value.dtype, tuple(value.shape), _small_bytes(value)))
        else:
            seen.append((name, kind))
    return tuple(seen)


def _small_bytes(t: torch.Tensor) -> bytes:
    try:
        return t.detach().cpu().contiguous().reshape(-1).view(torch.uint8).numpy().tobytes()
    except (RuntimeError, TypeError):  # a tensor of a kind that cannot be read so: no summary of it
        return b""
