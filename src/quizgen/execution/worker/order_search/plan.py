"""Copy plans: a state copied again and again, copied by straight-line code (in a worker; imports torch).

The fast search copies some states thousands of times: the shipped accumulation loop copies its
starting state before each of ~4,100 distinct loops run from it. Each copy walks the state in Python
(order.program_state: a dispatch, a memo and a type check per object). A state's source objects never
change while it is copied from (a node's own objects are run on only at their last use, after its
last copy; an anchor's never), and what a copy shares with its source is immutable (plain values,
tuples kept whole), imported, the card's own classes and functions (checked at the search's end) or
frozen tensors (checked after every step): so every walk of it takes the same path and builds the
same copy. On its second copy, unless few more copies of it can follow (a node with few steps left to
run from it, PLAN_PAYS), a state's walk is recorded as a Python function that builds that copy
directly (`record`), and later copies run it. Only the objects whose copy the walk makes by
construction are recorded: plain values, lists, tuples, dicts, sets, instances of Python classes,
CPU tensors, and objects shared as they are; a state holding anything else (a closure, a bound
method, a weak reference, a cycle) is copied by the walk every time.
"""

from __future__ import annotations

import itertools
from collections import OrderedDict, defaultdict
from collections.abc import Callable, Iterable
from functools import lru_cache
from types import CodeType
from typing import Any, Protocol

import torch

from quizgen.execution.worker import compat
from quizgen.execution.worker.order_search import program_state as order_state
from quizgen.execution.worker.order_search.program_state import Opaque, Shared
from quizgen.execution.worker.order_search.tensors import clone_storage

Plan = Callable[[], dict[str, object]]
# Copies still to come that pay for recording a plan: recording costs 1.3-1.6 walked copies, and a copy
# by a plan 0.4 of one (measured in the GAN step's and the loop's searches).
PLAN_PAYS = 3


_HELPERS = {
    "EMPTY": torch.empty, "PARAM": torch.nn.Parameter, "OD": OrderedDict, "DD": defaultdict,
    "SETATTR": object.__setattr__, "LEXTEND": list.extend, "DUPDATE": dict.update, "NO_GRAD": torch.no_grad,
    "REKEY": order_state.rekey, "CLONE": clone_storage,
}  # fmt: skip
_KEPT = (order_state._Walk.external, order_state._Walk.card_owned)  # shared by every copy as they are
_Walk = order_state._Walk


class Holder(Protocol):
    """A state the search copies from (a node's own objects, an anchor): its plan, once recorded."""

    plan: Plan | None
    copies: int


class Plans:
    """Copies of the search's states: by the walk, then by a plan from a state's second copy on."""

    def __init__(self, shared: Shared) -> None:
        self.shared = shared
        self.recorded = self.replayed = 0  # plans made, and copies made by one

    def copy(
        self, holder: Holder, ns: dict[str, object], live: frozenset[str] | None, more: int | None = None
    ) -> dict[str, object]:
        """A copy of the live part of `ns`, the state `holder` keeps (`more`: the copies of it known to
        follow, as many as the steps still to run from a node but its last, some of which its siblings
        may tell without running; None: unknown). Raises Opaque, and Thawed when a step changed a tensor
        the state shares with others (order.kept)."""
        self.shared.kept.verify(ns)
        if holder.plan is not None:
            self.replayed += 1
            return holder.plan()
        _, copied = order_state.capture(ns, live, self.shared, copy=True)
        assert copied is not None
        holder.copies += 1
        # Copied again: worth a plan, if enough copies may follow to pay for recording it (a plan that
        # cannot be made is not tried again).
        if holder.copies == 2 and (more is None or more >= PLAN_PAYS):
            holder.plan = record(ns, live, self.shared)
            self.recorded += holder.plan is not None
        return copied


class _Unplanned(Exception):
    """The state holds an object a plan does not build (its walk builds it: closures, methods, ...)."""


def record(ns: dict[str, object], live: Iterable[str] | None, shared: Shared) -> Plan | None:
    """A function building the copy `order_state.capture(ns, live, shared, copy=True)` builds, given
    that the state's copy by the walk succeeded and nothing in it changes; None where a plan cannot."""
    recorder = _Recorder(shared)
    names = set(ns if live is None else set(live) & set(ns)) - order_state._SKIP
    try:
        parts = [
            (recorder.const(k), recorder.visit(v)[0] if k in names else recorder.const(v))
            for k, v in ns.items()
        ]
        recorder.rename()
    except (_Unplanned, Opaque, RecursionError):
        return None
    body = "\n".join(f"        {line}" for line in recorder.lines)
    result = ", ".join(f"{k}: {v}" for k, v in parts)
    source = f"def plan():\n    with NO_GRAD():\n{body}\n        return {{{result}}}\n"
    scope: dict[str, Any] = {**_HELPERS, "K": tuple(recorder.consts)}
    exec(_compiled(source), scope)
    plan: Plan = scope["plan"]
    return plan


@lru_cache(maxsize=256)
def _compiled(source: str) -> CodeType:
    """A plan's code. Plans of states alike are the same source (what differs, the objects, are its
    constants `K`, in each plan's own scope): the shipped loop's 167 plans are 8 sources, the GAN
    step's 370 are 18, and compiling one took ~1 ms, most of recording it."""
    return compile(source, "<copy plan>", "exec")


class _Recorder:
    """The walk of a copy (order.program_state._Walk) written down as code: each object's copy is a
    local variable made once (shared objects stay shared), or the object itself where the walk keeps it."""

    def __init__(self, shared: Shared) -> None:
        self.lines: list[str] = []
        self.consts: list[object] = []
        self.made: dict[int, tuple[str, bool]] = {}  # id -> the expression of its copy, whether kept
        self.busy: set[int] = set()  # being recorded: met again, a cycle (the walk makes these first)
        self.storages: dict[int, str] = {}  # a storage's clone, by the storage
        self.alive: list[object] = []  # (temporaries keep their ids while recording)
        self.frozen = shared.frozen.ids if shared.frozen is not None else {}
        self.shared_tensors = shared.kept.tensors  # (order.kept: shared by every copy as they are)
        self._names = (f"v{i}" for i in itertools.count())
        self.renames: list[tuple[str, int]] = []  # (a dict's copy, a large int key of it)
        self.instances: set[int] = set()  # the instances the plan copies, by id

    def const(self, obj: object) -> str:
        self.consts.append(obj)
        return f"K[{len(self.consts) - 1}]"

    def emit(self, obj: object, expression: str) -> str:
        name = next(self._names)
        self.lines.append(f"{name} = {expression}")
        self.made[id(obj)] = (name, False)
        return name

    def kept(self, obj: object) -> tuple[str, bool]:
        self.made[id(obj)] = made = (self.const(obj), True)
        return made

    def visit(self, obj: Any) -> tuple[str, bool]:
        """The expression of obj's copy, and whether that is obj itself."""
        kind = type(obj)
        if kind in order_state.ATOMIC:
            return self.const(obj), True
        key = id(obj)
        if key in self.made:
            return self.made[key]
        if key in self.busy:
            raise _Unplanned("a cycle")
        if key in self.frozen or key in self.shared_tensors:
            return self.kept(obj)
        handler = order_state._HANDLERS.get(kind) or order_state._classify(obj)
        self.busy.add(key)
        self.alive.append(obj)
        if handler in _KEPT:
            made = self.kept(obj)
        elif handler is _Walk.sequence:
            made = self.sequence(obj)
        elif handler is _Walk.mapping:
            made = self.mapping(obj)
        elif handler is _Walk.instance:
            made = self.instance(obj)
        elif handler is order_state.tensor:
            made = self.emit(obj, self.tensor(obj)), False
        elif handler is _Walk.unordered:
            made = (
                self.kept(obj) if kind is frozenset else (self.emit(obj, f"{self.const(obj)}.copy()"), False)
            )
        elif handler(_Walk(copying=True, shared=Shared()), obj) is obj:
            made = self.kept(obj)  # (the walk's own choice: an imported or plain function, ...)
        else:
            raise _Unplanned(kind.__qualname__)  # (a closure, a bound method, a weak reference, a cell)
        self.busy.discard(key)
        return made

    def sequence(self, obj: Any) -> tuple[str, bool]:
        items = [self.visit(item) for item in obj]
        if type(obj) is list:
            return self.emit(obj, "[" + ", ".join(e for e, _ in items) + "]"), False
        if all(same for _, same in items):
            return self.kept(obj)
        return self.emit(obj, "(" + "".join(f"{e}, " for e, _ in items) + ")"), False

    def _pairs(self, pairs: Iterable[tuple[Any, Any]], keys: bool) -> str:
        """`k: v, ...` of a mapping's copy: str keys as they are (the walk's), others copied."""
        written = []
        for k, v in pairs:
            ck = self.const(k) if type(k) is str or not keys else self.visit(k)[0]
            written.append(f"{ck}: {self.visit(v)[0]}")
        return ", ".join(written)

    def mapping(self, obj: Any) -> tuple[str, bool]:
        kind = type(obj)
        factory = self.visit(obj.default_factory)[0] if kind is defaultdict else ""
        items = "{" + self._pairs(list(obj.items()), keys=True) + "}"
        if kind is dict:
            name = self.emit(obj, items)
        elif kind is OrderedDict:
            name = self.emit(obj, f"OD({items})" if obj else "OD()")
        else:
            name = self.emit(obj, f"DD({factory}, {items})")
        # (a large int key may be an id(): order.program_state's check_addresses; renamed at the end)
        self.renames += [(name, k) for k in obj if type(k) is int and k > order_state._ADDRESS]
        return name, False

    def rename(self) -> None:
        """Keys that are the id() of an instance the plan copies become its copy's (as the walk's do)."""
        objects: dict[str, list[str]] = {}  # a dict's copy: `key: its object's copy, ...`
        for name, k in self.renames:
            if k in self.instances:
                objects.setdefault(name, []).append(f"{self.const(k)}: {self.made[k][0]}")
        for name, pairs in objects.items():
            self.lines.append(f"REKEY({name}, {{{', '.join(pairs)}}})")

    def instance(self, obj: Any) -> tuple[str, bool]:
        cls = type(obj)
        self.instances.add(id(obj))
        base = cls.__mro__[-2]
        state = self.visit(object.__getattribute__(obj, "__dict__"))[0]
        if base is list:
            items = "[" + ", ".join(self.visit(v)[0] for v in list(list.__iter__(obj))) + "]"
        elif base is dict:
            items = "{" + self._pairs(list(dict.items(obj)), keys=True) + "}"
        maker = (base if base in (list, dict) else object).__new__
        new = self.emit(obj, f"{self.const(maker)}({self.const(cls)})")
        self.lines.append(f"SETATTR({new}, '__dict__', {state})")
        if base is list:
            self.lines.append(f"LEXTEND({new}, {items})")
        elif base is dict:
            self.lines.append(f"DUPDATE({new}, {items})")
        return new, False

    def tensor(self, t: Any) -> str:
        """The expression of a tensor's copy; its storage's clone, gradient and attributes before it."""
        storage = compat.untyped_storage(t)
        if storage._cdata not in self.storages:
            self.alive.append(storage)
            clone = f"s{len(self.storages)}"
            self.lines.append(f"{clone} = CLONE({self.const(storage)})")
            self.storages[storage._cdata] = clone
        size, stride, offset = self.const(t.size()), self.const(t.stride()), self.const(t.storage_offset())
        if t._base is not None:
            new = f"{self.visit(t._base)[0]}.as_strided({size}, {stride}, {offset})"
        else:
            dtype = self.const(t.dtype)
            new = f"EMPTY(0, dtype={dtype}).set_({self.storages[storage._cdata]}, {offset}, {size}, {stride})"
        grad = self.visit(t.grad)[0] if t.grad is not None else None
        attributes = dict(vars(t))
        self.alive.append(attributes)
        state = self.visit(attributes)[0] if attributes else None
        if type(t) is torch.nn.Parameter:
            new = f"PARAM({new}, requires_grad={t.requires_grad})"
        elif t.requires_grad:
            new = f"{new}.requires_grad_(True)"
        if grad is None and state is None:
            return new
        name = next(self._names)
        self.lines.append(f"{name} = {new}")
        if grad is not None:
            self.lines.append(f"{name}.grad = {grad}")
        if state is not None:
            self.lines.append(f"{name}.__dict__.update({state})")
        return name
