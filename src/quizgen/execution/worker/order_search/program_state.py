"""A candidate order's program state, as the fast order search sees it (in a worker; imports torch).

The state is what the steps still to come can observe: the namespace's live variables (those a later
step may read) with every object reachable from them, the random number generators and torch's global
settings. `capture` walks it once and gives a fingerprint (to merge orders that reach the same state)
and a copy (to branch without running a shared prefix again). Only objects whose whole state the walk
knows are copied and fingerprinted: plain values and containers, CPU tensors (order.tensors),
instances of Python classes (modules, optimizers, schedulers, losses: their `__dict__`, and their items
when they subclass `list` or `dict`), functions and closures, bound methods, weak references. Objects
from imported modules (classes, module functions, modules, dtypes) are shared, not copied. An autograd
graph is fingerprinted (when asked: `graphs`), never copied. Anything else (an iterator, a C object, an
int equal to the address of an object in the state, unless a dict's key naming an instance:
`check_addresses`) makes the state opaque: no copy, no merge. Classes and plain functions the card
defines, and tensors only read (order.frozen), are shared too: `Shared` keeps what they must stay.
"""

from __future__ import annotations

import enum
import types
import weakref
from collections import OrderedDict, defaultdict
from collections.abc import Callable, Iterable
from typing import Any

import torch

from quizgen.execution.worker.order_search import callables
from quizgen.execution.worker.order_search.callables import ATOMS, NS_NAME
from quizgen.execution.worker.order_search.frozen import Frozen
from quizgen.execution.worker.order_search.kept import Kept, share
from quizgen.execution.worker.order_search.tensors import Opaque, tensor

__all__ = ["ATOMIC", "ATOMS", "NS_NAME", "Opaque", "Shared", "capture"]

_HEAPTYPE = 1 << 9
_EXTERNAL = (
    types.ModuleType, types.CodeType, torch.dtype, torch.device, torch.layout, torch.memory_format, enum.Enum
)  # fmt: skip
_CLASS_BOOKKEEPING = {"__dict__", "__weakref__", "__module__", "__qualname__", "__doc__", "__firstlineno__"}
_EMPTY_MAPPINGS = (dict, OrderedDict)
_CONTAINERS = (list, dict)  # the C bases a Python class's instances may have (`class Loader(list)`)
_ADDRESS = 1 << 16  # an int above this may be an object's address (its id())
_SKIP = {"__builtins__", "__warningregistry__"}  # the interpreter's, not the card's (warnings only print)


class Shared:
    """The card's own classes and plain functions, and frozen tensors, shared by every branch: no step
    may change one."""

    def __init__(self) -> None:
        self.seen: dict[int, tuple[object, tuple[object, ...]]] = {}
        self.frozen: Frozen | None = None  # tensors no step changes (order.frozen)
        self.freed: dict[tuple[int, str], tuple[object, str]] = {}  # saved tensors freed (order.tensors)
        self.kept = Kept()  # tensors whose graph's first node was freed, shared (order.kept)

    def note(self, obj: object) -> None:
        """Remember what a shared object holds now; Opaque when that cannot be told."""
        if id(obj) not in self.seen:
            self.seen[id(obj)] = (obj, _inner(obj))

    def changed(self) -> bool:
        if self.frozen is not None and not self.frozen.intact():
            return True
        try:
            return any(_inner(obj) != before for obj, before in self.seen.values())
        except Opaque:
            return True


def _inner(obj: object) -> tuple[object, ...]:
    """What a shared class or function holds, as a fingerprint."""
    walk = _Walk(copying=False, shared=None)
    if isinstance(obj, type):
        for cls in obj.__mro__:
            if cls.__module__ == NS_NAME:
                walk.visit({k: v for k, v in vars(cls).items() if k not in _CLASS_BOOKKEEPING})
            walk.add("base", id(cls))
    else:
        f: Any = obj
        walk.visit((f.__code__, f.__defaults__, f.__kwdefaults__, f.__closure__, dict(vars(f))))
    return walk.digest()


def capture(
    ns: dict[str, object],
    live: Iterable[str] | None,
    shared: Shared,
    copy: bool,
    graphs: bool = False,
    spans: bool = False,
) -> tuple[tuple[object, ...], dict[str, object] | None]:
    """The fingerprint of the live part of `ns` (every variable when `live` is None) and, with `copy`,
    the namespace with its live part copied. With `graphs`, a fingerprint takes in autograd graphs
    (a copy never can); with `spans`, of a tensor's storage only the bytes the tensor spans (where no
    code can read a storage beyond its tensors: order.names.views_only). Raises Opaque."""
    names = sorted(ns if live is None else set(live) & set(ns))
    for name in names:  # the usual reason first, before walking anything
        value = ns[name]
        graph = isinstance(value, torch.Tensor) and value.grad_fn is not None
        shareable = copy and shared.kept.on  # (a copy may share it: order.kept)
        if graph and (copy or not graphs) and not shareable:
            raise Opaque("a tensor with autograd history")
    walk = _Walk(copying=copy, shared=shared)
    walk.graphs = graphs and not copy
    walk.whole_storages = not spans
    try:
        return _capture(walk, ns, names, live)
    except RecursionError:
        raise Opaque("a state nested too deep to walk") from None


def _capture(
    walk: _Walk, ns: dict[str, object], names: list[str], live: Iterable[str] | None
) -> tuple[tuple[object, ...], dict[str, object] | None]:
    if live is None:
        walk.add("names", tuple(k for k in ns if k not in _SKIP))  # the variables' order is visible
    copies: dict[str, object] = {}
    with torch.no_grad():  # copies of views and parameters are made without autograd history
        for name in names:
            if name in _SKIP:
                continue
            walk.add("var", name)
            value = ns[name]
            keeping = walk.copying and walk.shared is not None and walk.shared.kept.on
            if keeping and type(value) is torch.Tensor and value.grad_fn is not None:
                copies[name] = share(walk, value)  # (a variable's own: those Kept.verify reads)
            else:
                copies[name] = walk.visit(value)
    if live is not None:
        walk.add("absent", tuple(sorted(set(live) - set(ns))))
    walk.check_addresses()
    if not walk.copying:
        return walk.digest(), None
    return walk.digest(), {k: copies.get(k, v) for k, v in ns.items()}


def rekey(mapping: dict[Any, Any], objects: dict[int, object]) -> None:
    """Each key of `mapping` that `objects` holds (an id()) becomes the id of the object it maps to,
    in its place: the dict is rebuilt in its order (a dict's order is visible)."""
    items = [(id(objects[k]) if type(k) is int and k in objects else k, v) for k, v in mapping.items()]
    mapping.clear()
    mapping.update(items)


def _plain_class(cls: type) -> bool:
    """Instances keep their state in `__dict__` (and items, for a `list` or `dict` base): no slots."""
    for c in cls.__mro__[:-2] if cls.__mro__[-2] in _CONTAINERS else cls.__mro__[:-1]:
        if not c.__flags__ & _HEAPTYPE or vars(c).get("__slots__", ()) not in ((), []):
            return False
    return True


class _Walk:
    def __init__(self, copying: bool, shared: Shared | None) -> None:
        self.copying, self.shared = copying, shared
        self.graphs = False  # autograd graphs are walked (a fingerprint's), not refused
        self.whole_storages = True  # a fingerprint compares whole storages, not only the tensors' spans
        self.memo: dict[object, int] = {}
        self.copies: dict[Any, Any] = {}
        self.ints: set[int] = set()  # large ints met (a dict's keys apart: `keyed`): each may be an id()
        self.keyed: list[tuple[Any, int, int]] = []  # (the dict's copy, an int key, where its token is)
        self.instances: set[int] = set()  # the ids of the instances of Python classes walked
        self.tokens: list[object] = []
        self.alive: list[object] = []
        self.imported: set[object] = set()  # memo keys of objects shared as imported (`external`)
        self.kept_storages: set[int] = set()  # the storages of tensors shared (order.kept)
        frozen = shared.frozen if shared is not None else None
        self.frozen, self.frozen_storages = (frozen.ids, frozen.storages) if frozen else ({}, set())

    def add(self, *parts: object) -> None:
        self.tokens.append(parts)

    def digest(self) -> tuple[object, ...]:
        """The state as a tuple of plain values: equal tuples, equal states (compared exactly, not hashed)."""
        return tuple(self.tokens)

    def check_addresses(self) -> None:
        """An int equal to the address of an object in the state is most likely that object's id(). As
        a dict's key naming an instance of a Python class (torch's GradScaler keys its state by
        `id(optimizer)`) it stands for that object: in a fingerprint, its place in the walk; in a copy,
        the id of the object's copy. Anywhere else the state is opaque."""
        memo = self.memo
        if self.ints and any(k in memo for k in self.ints):
            raise Opaque("an id() in the state")
        renamed: dict[int, tuple[Any, dict[int, object]]] = {}  # a dict's copy, its keys' objects' copies
        for mapping, k, at in self.keyed:
            if k not in memo:
                continue  # (a number, or the id of no object the state holds: as it is)
            if k not in self.instances:
                raise Opaque("an id() in the state")
            if self.copying:
                renamed.setdefault(id(mapping), (mapping, {}))[1][k] = self.copies[k]
            else:
                self.tokens[at] = ("id", memo[k])
        for mapping, objects in renamed.values():
            rekey(mapping, objects)

    def addresses(self) -> set[int]:
        """The ints met that may be the id() of an object (order.aside)."""
        return self.ints | {k for _, k, _ in self.keyed}

    def visit(self, obj: Any) -> Any:
        kind = type(obj)
        if kind in ATOMIC:
            if kind is int and obj > _ADDRESS:
                self.ints.add(obj)
            if not self.copying:  # float and complex by their bits: 0.0 == -0.0 and 1 == 1.0, yet they differ
                self.tokens.append(
                    (kind, obj.hex() if kind is float else repr(obj) if kind is complex else obj)
                )
            return obj
        key = id(obj)
        if key in self.memo:
            self.add("again", self.memo[key])
            if self.copying and key not in self.copies:
                raise Opaque("a cycle through a tuple")
            return self.copies.get(key, obj)
        self.memo[key] = len(self.memo)
        self.alive.append(obj)  # an id stays this object's while the walk lasts (some are temporary)
        if key in self.frozen:  # the same tensor in every branch (order.frozen)
            self.add("frozen", self.frozen[key])
            return self.keep(obj, obj)
        handler = _HANDLERS.get(kind) or _KINDS.get(kind) or _classify(obj)
        return handler(self, obj)

    def keep(self, obj: Any, copy: Any) -> Any:
        if self.copying:
            self.copies[id(obj)] = copy
        return copy

    def external(self, obj: Any) -> Any:
        self.imported.add(id(obj))
        self.add("external", id(obj))
        return self.keep(obj, obj)

    def card_owned(self, obj: Any) -> Any:
        """A class or plain function the card defined: shared by every branch, checked at the end."""
        if self.shared is not None:
            self.shared.note(obj)
        return self.external(obj)

    def sequence(self, obj: Any) -> Any:
        self.add(type(obj).__name__, len(obj))
        if type(obj) is list:
            new: list[Any] = self.keep(obj, [] if self.copying else obj)
            for item in obj:
                copied = self.visit(item)
                if self.copying:
                    new.append(copied)
            return new
        items = [self.visit(item) for item in obj]
        same = not self.copying or all(a is b for a, b in zip(items, obj, strict=True))
        return self.keep(obj, obj if same else tuple(items))

    def mapping(self, obj: Any) -> Any:
        kind = type(obj)
        self.tokens.append((kind, len(obj)))
        factory = None
        if kind is defaultdict:
            factory = self.visit(obj.default_factory)
        new: Any = obj
        copying = self.copying
        if copying:
            new = defaultdict(factory) if kind is defaultdict else kind()
            self.copies[id(obj)] = new
        if not obj:
            return new
        append, memo, visit = self.tokens.append, self.memo, self.visit
        for k, v in list(obj.items()):
            ck: object = k
            if type(k) is str:  # the usual key, written as itself
                append(k)
            elif type(k) is int and k > _ADDRESS:  # (perhaps an id(): check_addresses)
                self.keyed.append((new, k, len(self.tokens)))
                if not copying:
                    append((int, k))
            else:
                ck = visit(k)
            if type(v) in _EMPTY_MAPPINGS and not v and id(v) not in memo:  # a module's unused hooks
                memo[id(v)] = len(memo)
                self.alive.append(v)
                append((type(v), 0))
                cv = type(v)() if copying else v
                if copying:
                    self.copies[id(v)] = cv
            else:
                cv = visit(v)
            if copying:
                new[ck] = cv
        return new

    def unordered(self, obj: Any) -> Any:
        if any(type(x) not in ATOMS for x in obj):
            raise Opaque("a set of objects (its order depends on their addresses)")
        self.add(type(obj).__name__, tuple(obj))
        copy = obj.copy() if self.copying and type(obj) is set else obj
        if self.copying and list(copy) != list(obj):
            raise Opaque("a set that iterates differently when copied")
        return self.keep(obj, copy)

    def instance(self, obj: Any) -> Any:
        cls = type(obj)
        self.instances.add(id(obj))
        if cls.__module__ == NS_NAME:
            self.card_owned(cls)
        else:
            self.add("class", id(cls))
        base = cls.__mro__[-2]  # (list or dict: its items are state too, walked as the base's own)
        new = (base if base in _CONTAINERS else object).__new__(cls) if self.copying else obj
        self.keep(obj, new)
        state = self.visit(object.__getattribute__(obj, "__dict__"))
        if self.copying:
            object.__setattr__(new, "__dict__", state)
        if base in _CONTAINERS:
            self.add(base.__name__, base.__len__(obj))
            pairs = dict.items(obj) if base is dict else enumerate(list.__iter__(obj))
            copied = [(self.visit(k) if base is dict else k, self.visit(v)) for k, v in list(pairs)]
            if self.copying:  # (the base's own methods: the class's may be card code that counts)
                base.update(new, copied) if base is dict else list.extend(new, [v for _, v in copied])
        return new


def _classify(obj: Any) -> Callable[[_Walk, Any], Any]:
    kind = type(obj)
    if isinstance(obj, _EXTERNAL):
        return _Walk.external
    if isinstance(obj, type):
        return _Walk.card_owned if obj.__module__ == NS_NAME else _Walk.external
    if kind in (torch.Tensor, torch.nn.Parameter):
        return tensor
    if kind.__flags__ & _HEAPTYPE and _plain_class(kind) and hasattr(obj, "__dict__"):
        if not any("__class__" in vars(c) for c in kind.__mro__[:-1]):
            _KINDS[kind] = _Walk.instance  # (then every instance of it is one: asked once per class)
        return _Walk.instance
    raise Opaque(f"an object of type {kind.__qualname__}")


# Classes whose instances the walk has found to be plain (`_classify`). Held for the job's process (a
# fork per job): a class is not made plain or otherwise once made, and a card's own classes are shared
# and checked not to change (Shared).
_KINDS: dict[type, Callable[[_Walk, Any], Any]] = {}


ATOMIC = ATOMS | {torch.Size}  # written as they are, by the walk and by copy plans (plan.py)
_HANDLERS: dict[type, Callable[[_Walk, Any], Any]] = {
    list: _Walk.sequence, tuple: _Walk.sequence, dict: _Walk.mapping, OrderedDict: _Walk.mapping,
    defaultdict: _Walk.mapping, set: _Walk.unordered, frozenset: _Walk.unordered,
    types.FunctionType: callables.function, types.MethodType: callables.method,
    types.BuiltinFunctionType: callables.builtin, weakref.ReferenceType: callables.reference,
    types.CellType: callables.cell, staticmethod: callables.wrapper, classmethod: callables.wrapper,
    property: callables.wrapper,
    torch.Tensor: tensor, torch.nn.Parameter: tensor,
}  # fmt: skip
