"""Functions, closures, methods and weak references in a candidate order's state, as the walk of
order.program_state copies and fingerprints them (in a worker): a function an imported module defines
is shared; a plain function the card defines is shared too (checked at the search's end); a closure or
a function with attributes or defaults of its own is state, its cells included."""

from __future__ import annotations

import sys
import types
import weakref
from typing import Any

from quizgen.execution.worker.order_search.tensors import Opaque

NS_NAME = "__quizgen__"  # snippets.fresh_namespace's __name__: what the card's own code defines
ATOMS = frozenset(
    (type(None), bool, int, float, complex, str, bytes, range, slice, type(Ellipsis), type(NotImplemented))
)  # fmt: skip  (a set: the walks ask of every object they meet)


def external_function(f: Any) -> bool:
    """A function an imported module defines (reachable by its qualified name there)."""
    module = sys.modules.get(getattr(f, "__module__", None) or "")
    target: Any = module
    for part in getattr(f, "__qualname__", "<").split("."):
        target = getattr(target, part, None)
        if target is None:
            return False
    return target is f


def function(walk: Any, f: Any) -> Any:
    if external_function(f):
        return walk.external(f)
    if getattr(f, "__globals__", None) is not None and f.__globals__.get("__name__") == NS_NAME:
        plain = f.__closure__ is None and not vars(f)
        if plain and all(
            type(d) in ATOMS for d in (*(f.__defaults__ or ()), *(f.__kwdefaults__ or {}).values())
        ):
            return walk.card_owned(f)
    return _copy_function(walk, f)


def method(walk: Any, m: Any) -> Any:
    walk.add("method")
    func, owner = walk.visit(m.__func__), walk.visit(m.__self__)
    return walk.keep(m, types.MethodType(func, owner) if walk.copying else m)


def builtin(walk: Any, f: Any) -> Any:
    owner = getattr(f, "__self__", None)
    if owner is None or isinstance(owner, types.ModuleType):
        return walk.external(f)
    raise Opaque("a method of a built-in object")


def wrapper(walk: Any, w: Any) -> Any:
    """A staticmethod, classmethod or property in a class the card defined."""
    walk.add(type(w).__name__)
    parts = (w.fget, w.fset, w.fdel) if isinstance(w, property) else (w.__func__,)
    for part in parts:
        walk.visit(part)
    return walk.keep(w, w)


def reference(walk: Any, r: Any) -> Any:
    if r.__callback__ is not None:
        raise Opaque("a weak reference with a callback")
    target = r()
    walk.add("weakref")
    copied = walk.visit(target)
    return walk.keep(r, weakref.ref(copied) if walk.copying and target is not None else r)


def _copy_function(walk: Any, f: Any) -> Any:
    """A closure or a function with state of its own: its cells, defaults and attributes are state."""
    globals_ = f.__globals__
    walk.add("function", id(f.__code__), "ns" if globals_.get("__name__") == NS_NAME else id(globals_))
    parts = walk.visit((f.__closure__, f.__defaults__, f.__kwdefaults__, dict(vars(f))))
    if not walk.copying:
        return f
    closure, defaults, kwdefaults, attributes = parts
    new = types.FunctionType(f.__code__, globals_, f.__name__, defaults, closure)
    new.__kwdefaults__, new.__qualname__, new.__module__ = kwdefaults, f.__qualname__, f.__module__
    new.__dict__.update(attributes)
    return walk.keep(f, new)


def cell(walk: Any, cell: Any) -> Any:
    """A closure's variable (two closures may share one)."""
    try:
        contents = cell.cell_contents
    except ValueError:  # not bound yet
        walk.add("cell", False)
        return walk.keep(cell, types.CellType())
    walk.add("cell", True)
    new = types.CellType() if walk.copying else cell
    walk.keep(cell, new)
    copied = walk.visit(contents)
    if walk.copying:
        new.cell_contents = copied
    return new
