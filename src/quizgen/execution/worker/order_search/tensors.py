"""Tensors and autograd graphs in a candidate order's state (order.state walks them; imports torch).

A tensor is its storage (compared by its bytes, or their BLAKE2 digest past 64 KiB; copied by a clone),
its view of it, its gradient and attributes. A copy cannot hold an autograd graph, but a fingerprint
can: two graphs are equal when their nodes have the same types, saved values and edges, and lead to the
same leaves (the walk's own identity matching, as for any object).
"""

from __future__ import annotations

import ctypes
import hashlib
from typing import Any

import torch

from quizgen.execution.worker import compat

Freed = dict[tuple[int, str], tuple[object, str]]  # (node id, saved name) -> (node, error): Shared.freed
_EXACT_BYTES = 1 << 16  # tensor data up to this size is compared itself, larger data by a BLAKE2 digest


class Opaque(Exception):
    """The state holds something a copy or a fingerprint could not capture whole."""


def tensor(walk: Any, t: Any) -> Any:
    """A CPU tensor without hooks: its storage (shared storages once), layout, gradient, attributes."""
    shared = walk.shared
    if shared is not None and shared.kept.tensors:
        shared.kept.verify_one(t)
    grad_fn = t.grad_fn
    if grad_fn is not None and not walk.graphs:
        raise Opaque("a tensor with autograd history")
    if t.retains_grad:
        raise Opaque("a tensor that retains its gradient (a hook)")
    # (`is_cpu` and `is` against the layout: `t.device` makes a new object on every read)
    if t.layout is not _STRIDED or not t.is_cpu or _odd(t):
        raise Opaque("a tensor of a kind the search does not copy")
    storage = _untyped(t)
    cdata = storage._cdata
    if cdata in walk.frozen_storages or cdata in walk.kept_storages:
        raise Opaque("a view of data every branch shares")  # (a copy of it could not stay a view of it)
    skey = ("storage", cdata)
    memo, copying = walk.memo, walk.copying
    if skey not in memo:
        memo[skey] = len(memo)
        if copying:
            walk.copies[skey] = clone_storage(storage)
        else:  # (a fingerprint keeps a storage's bytes where a copy keeps its clone)
            walk.copies[skey] = _bytes(storage)
            if walk.whole_storages:
                walk.tokens.append(_digest(walk.copies[skey]))
    if not copying and not walk.whole_storages:  # the bytes this tensor can read: its span only
        walk.tokens.append(_digest(walk.copies[skey][_span(t)]))
    base, offset = t._base, t.storage_offset()
    shape = (tuple(t.shape), t.stride(), offset)
    walk.tokens.append(("tensor", type(t).__name__, t.dtype, shape, t.requires_grad, memo[skey]))
    copied_base = walk.visit(base) if base is not None else None
    if grad_fn is not None:
        freed = freed_root(shared, t) if shared is not None and shared.kept.on else None
        if freed is None:
            _graph(walk, grad_fn)
        else:  # (nothing below a freed first node can be seen or run: order.kept)
            walk.add("freed root", type(grad_fn).__name__, freed)
    grad = t.grad
    if grad is not None:
        grad = walk.visit(grad)
    attributes = vars(t)
    if attributes:
        attributes = walk.visit(dict(attributes))
    if not copying:
        return t
    if copied_base is not None:  # (capture walks under no_grad)
        new = copied_base.as_strided(t.size(), t.stride(), offset)
    else:
        new = torch.empty(0, dtype=t.dtype).set_(walk.copies[skey], offset, t.size(), t.stride())
    if type(t) is _PARAMETER:
        new = _PARAMETER(new, requires_grad=t.requires_grad)
    elif t.requires_grad:
        new.requires_grad_(True)
    if grad is not None:
        new.grad = grad
    if attributes:
        new.__dict__.update(attributes)
    return walk.keep(t, new)


def unusual(t: Any) -> bool:
    """Quantized, nested, lazily conjugated or negated, an inference tensor, or with backward hooks: a
    tensor neither copied (`tensor`) nor frozen (order.frozen)."""
    return bool(
        t.is_quantized or t.is_nested or t.is_conj() or t.is_neg() or t.is_inference() or t._backward_hooks
    )


def _odd(t: Any) -> bool:
    """A tensor of a kind the walk does not know whole: `unusual`, or with hooks on its accumulated
    gradient or dimension names."""
    return unusual(t) or bool(_POST_HOOKS and t._post_accumulate_grad_hooks) or (_NAMES and t.has_names())


def clone_storage(storage: Any) -> Any:
    """A CPU storage's copy (copies of states and their plans): `Storage.clone` without its Python,
    which asks for the storage's device on every call."""
    return _STORAGE(storage.nbytes()).copy_(storage)


_STRIDED, _PARAMETER = torch.strided, torch.nn.Parameter
_STORAGE = torch.UntypedStorage
_POST_HOOKS = hasattr(torch.Tensor, "_post_accumulate_grad_hooks")  # (torch 2.1 on)
_NAMES = hasattr(torch.Tensor, "has_names")  # (named tensors: gone from recent releases)
_untyped = compat.untyped_storage


def freed_root(shared: Any, t: Any) -> str | None:
    """What any backward through `t` raises at its graph's first node, which a backward freed (a plain
    CPU tensor with no attributes, hooks or gradient, not a view; the node one of torch's, holding
    tensors); None when `t` is not such a tensor."""
    node = t.grad_fn
    if type(t) is not torch.Tensor or node is None or t._base is not None or t.retains_grad or vars(t):
        return None
    if t.layout != torch.strided or t.device.type != "cpu" or t.is_inference() or t._backward_hooks:
        return None
    if isinstance(node, torch.autograd.function.BackwardCFunction) or node.metadata:
        return None
    tensors = _saved(type(node))[1]
    if not tensors:
        return None
    unusable = _read_saved(node, min(tensors), shared.freed)[1]
    return unusable if unusable is not None and unusable.startswith(_FREED) else None


def _read_saved(node: Any, name: str, freed: Freed | None) -> tuple[Any, str | None]:
    """A value an autograd node saved, or the error reading it gives: (None, message). A backward frees
    all of a node's saved tensors at once, for good (each read says so alike), so the first such error
    stands for them all in `freed` (Shared.freed) and none is read again; a value changed in place may
    change again, and its message with it: it is read each time."""
    known = freed.get((id(node), name)) if freed is not None else None
    if known is not None:
        return None, known[1]
    try:
        return getattr(node, name), None
    except RuntimeError as exc:
        message = str(exc)
        if freed is not None and message.startswith(_FREED):
            for other in _saved(type(node))[1]:
                freed[(id(node), other)] = (node, message)
        return None, message


def _saved(kind: type) -> tuple[tuple[str, ...], frozenset[str]]:
    """An autograd node type's saved values, by attribute name, and which of them are tensors."""
    if kind not in _SAVED:
        names = dir(kind)
        _SAVED[kind] = tuple(sorted(a for a in names if a.startswith("_saved_")))
        _TENSORS[kind] = frozenset(a for a in _SAVED[kind] if "_raw" + a in names)
    return _SAVED[kind], _TENSORS[kind]


def _span(t: Any) -> slice:
    """Where the tensor's elements lie in its storage's bytes: from its first to its last."""
    count = t.numel()
    if count == 0:
        return slice(0, 0)
    start, size = t.storage_offset(), t.element_size()
    if t.is_contiguous():  # (most tensors: their elements lie one after another)
        return slice(start * size, (start + count) * size)
    last = start + sum((n - 1) * s for n, s in zip(t.shape, t.stride(), strict=True))
    return slice(start * size, (last + 1) * size)


def _bytes(storage: Any) -> bytes:
    """A CPU storage's bytes, read from its memory (a uint8 view through numpy cost 5 times as much)."""
    return ctypes.string_at(storage.data_ptr(), storage.nbytes())


def _digest(raw: bytes) -> bytes:
    return raw if len(raw) <= _EXACT_BYTES else hashlib.blake2b(raw).digest()


def _graph(walk: Any, node: Any) -> None:
    """An autograd graph, for a fingerprint: each node's type, what it saved and where it leads (the
    leaves it accumulates into are walked as objects, so they are matched by identity as any other).
    A saved tensor is the object it was saved from, with its version: backward checks that version."""
    if node is None:
        walk.add("none")
        return
    key = ("node", id(node))
    if key in walk.memo:
        walk.add("again", walk.memo[key])
        return
    walk.memo[key] = len(walk.memo)
    walk.alive.append(node)
    kind = type(node)
    if isinstance(node, torch.autograd.function.BackwardCFunction) or node.metadata:
        raise Opaque("an autograd node of the card's own or with metadata")
    walk.add("node", kind.__name__)
    if kind.__name__ == "AccumulateGrad":
        walk.visit(node.variable)
    freed = walk.shared.freed if walk.shared is not None else None
    for name in _saved(kind)[0]:
        value, unusable = _read_saved(node, name, freed)
        if unusable is not None:  # freed by a backward, or changed in place since: backward fails
            walk.add(name, "unusable", unusable)
            continue
        walk.add(name, value._version if isinstance(value, torch.Tensor) else None)
        walk.visit(value)
    for after, number in node.next_functions:
        walk.add("next", number)
        _graph(walk, after)


_FREED = "Trying to backward through the graph a second time"  # (torch 1.13 to 2.13 alike)
_SAVED: dict[type, tuple[str, ...]] = {}  # an autograd node type's saved values, by attribute name
_TENSORS: dict[type, frozenset[str]] = {}  # which of them are tensors (`_raw_saved_*`): freed together
