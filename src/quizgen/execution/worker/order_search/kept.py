"""Tensors whose autograd graph's first node a backward freed, shared by the fast search's branches
(in a worker; imports torch).

After an accumulation loop, `loss` holds the graph of its last micro-batch, freed by its backward. A
copy cannot hold a graph, so every branch from such a state used to be rebuilt by running again the
steps that made it (the shipped loop: ~1,000 loops run again). Where no code looks below a graph's
first node or runs a backward that could start below it (order.names.freed_graphs_shareable), such a
tensor is its data, its attributes and that node alone: any backward through it raises there, freed,
before any node of the graph runs, so the leaves below it (those of the state it was made in, not of
a copy) are never reached. A copy then holds the tensor itself, shared, and a fingerprint takes in
only that node (order.tensors). Sound while no step changes the tensor, which is checked before each
use of a state holding it (`Kept.verify`: its version, which any in-place change through any view or
alias bumps, its node, flags, pointer and layout, attributes and gradient); a step that changed one
ends the search with Thawed, and the search starts again sharing nothing (order.frozen).
"""

from __future__ import annotations

from typing import Any

from quizgen.execution.worker import compat
from quizgen.execution.worker.order_search.frozen import Thawed
from quizgen.execution.worker.order_search.tensors import Opaque, freed_root


class Kept:
    """The tensors the states of one search share, each with its seal."""

    def __init__(self) -> None:
        self.on = False  # (order.names.freed_graphs_shareable, and nothing thawed)
        self.tensors: dict[int, tuple[Any, tuple[object, ...]]] = {}

    def keep(self, t: Any) -> None:
        """Share a tensor between states, sealed as it is now."""
        if id(t) in self.tensors:
            self.verify_one(t)
        else:
            self.tensors[id(t)] = (t, seal(t))

    def verify(self, ns: dict[str, object]) -> None:
        """Before a state is run on or copied: Thawed when a step changed a tensor it shares (a state
        shares only its variables' own tensors: `share`)."""
        if self.tensors:
            for value in ns.values():
                self.verify_one(value)

    def verify_one(self, value: object) -> None:
        found = self.tensors.get(id(value))
        if found is not None and found[0] is value and seal(value) != found[1]:
            raise Thawed


def share(walk: Any, t: Any) -> Any:
    """A copy's tensor whose graph's first node a backward freed: the tensor itself (see above).
    Opaque when it is not one, or another tensor of the state shares its data."""
    if id(t) in walk.memo:
        return walk.visit(t)
    freed = freed_root(walk.shared, t)
    storage = compat.untyped_storage(t) if freed is not None and t.grad is None else None
    if storage is None or storage._cdata in walk.frozen_storages or ("storage", storage._cdata) in walk.memo:
        raise Opaque("a tensor with autograd history")
    walk.kept_storages.add(storage._cdata)
    walk.memo[id(t)] = len(walk.memo)
    walk.alive.append(t)
    walk.shared.kept.keep(t)
    walk.add("kept", walk.memo[id(t)])
    return walk.keep(t, t)


def seal(t: Any) -> tuple[object, ...]:
    """What a shared tensor must keep for the states sharing it to stay what they were."""
    return (
        t._version, t.grad_fn, t.requires_grad, t.retains_grad, t.data_ptr(), t.shape, t.stride(),
        t.storage_offset(), bool(vars(t)), t.grad is None,
    )  # fmt: skip
