"""Data no step changes, shared by every branch of the fast search instead of copied (imports torch).

Most of what a puzzle's state holds is data its lines only read: the batches a training step takes,
the micro-batches a loop walks. Copying it before every branch cost about half of each copy (the
shipped accumulation loop: 8 views of two tensors in a list of tuples). So, at the start, the tensors
reachable from the live variables through plain containers (not through an object, where a module's
buffers or an optimizer's state live and change) that need no gradient are frozen: every copy and
fingerprint of a state holds the very same tensor (`Shared.frozen`), as imported objects are.

That is sound only while no step changes them, which is checked rather than assumed: after every step
each frozen tensor must have the same version (any in-place change, through any view, bumps it), data
pointer, shape, strides, offset, no gradient and no attributes; at the end its bytes must be those it
began with (a write no version sees: through numpy, say). A step that changes one ends the search with
`Thawed`, and the search starts again from setup without freezing (order.runs); code that can reach a
tensor's bytes behind its version (order.names.views_only) never freezes. A tensor a step makes that
views a frozen one's storage cannot be copied apart from it: its state is opaque (never copied, never
merged), as any state the search cannot copy whole.
"""

from __future__ import annotations

import hashlib
import types
from typing import Any

import torch

from quizgen.execution.worker import compat
from quizgen.execution.worker.order_search.tensors import unusual

_OPAQUE = (type, types.ModuleType, types.FunctionType, types.MethodType)  # walked no further


class Thawed(Exception):
    """A step changed a frozen tensor: the search must start again without freezing."""


class Frozen:
    """The frozen tensors of one search, with what each must stay."""

    def __init__(self, ns: dict[str, Any], live: frozenset[str]) -> None:
        plain: dict[int, torch.Tensor] = {}  # reached through plain containers only
        storages: dict[int, bool] = {}  # storage -> whether every tensor on it may be frozen
        seen: set[int] = set()
        stack: list[tuple[Any, bool]] = [(ns[name], True) for name in sorted(live & set(ns))]
        while stack:
            obj, through_plain = stack.pop()
            if id(obj) in seen:
                continue
            seen.add(id(obj))
            if isinstance(obj, torch.Tensor):
                ok = through_plain and _freezable(obj)
                if ok:
                    plain[id(obj)] = obj
                key = compat.untyped_storage(obj)._cdata if obj.layout == torch.strided else id(obj)
                storages[key] = storages.get(key, True) and ok
                stack += [(t, through_plain) for t in (obj._base, obj.grad) if t is not None]
                continue
            # (containers walked as the base's own: a subclass's `__iter__` is card code, which may count)
            if isinstance(obj, dict):
                stack += [(v, through_plain) for v in dict.values(obj)]
            elif isinstance(obj, list):
                stack += [(v, through_plain) for v in list.__iter__(obj)]
            elif isinstance(obj, tuple):
                stack += [(v, through_plain) for v in tuple.__iter__(obj)]
            if hasattr(obj, "__dict__") and not isinstance(obj, _OPAQUE):
                stack += [(v, False) for v in vars(obj).values()]  # (an object's tensors stay its own)
        self.tensors = [t for t in plain.values() if storages.get(compat.untyped_storage(t)._cdata, False)]
        self.ids = {id(t): k for k, t in enumerate(self.tensors)}
        self._storage = {compat.untyped_storage(t)._cdata: compat.untyped_storage(t) for t in self.tensors}
        self.storages = set(self._storage)
        self._signature = self.signature()
        self._digest = self.digest()

    def signature(self) -> tuple[object, ...]:
        return tuple(
            (
                t._version,
                t.requires_grad,
                t.grad is None,
                t.data_ptr(),
                t.shape,
                t.stride(),
                t.storage_offset(),
                bool(vars(t)),
            )
            for t in self.tensors
        )

    def digest(self) -> bytes:
        h = hashlib.blake2b()
        for key in sorted(self.storages):
            storage = self._storage[key]
            h.update(torch.empty(0, dtype=torch.uint8).set_(storage).numpy().tobytes())
        return h.digest()

    def check(self) -> None:
        """After a step: Thawed when it changed a frozen tensor."""
        if self.tensors and self.signature() != self._signature:
            raise Thawed

    def intact(self) -> bool:
        """At the end: every frozen tensor as it began, bytes included."""
        return not self.tensors or (self.signature() == self._signature and self.digest() == self._digest)


def _freezable(t: torch.Tensor) -> bool:
    return (
        type(t) is torch.Tensor
        and not t.requires_grad
        and t.grad is None
        and t.grad_fn is None
        and not vars(t)
        and t.layout == torch.strided
        and t.device.type == "cpu"
        and not unusual(t)
    )
