"""The card kinds, found through one registry: the rest of quizgen iterates it and never names a kind."""

from __future__ import annotations

from typing import Any

from quizgen.kinds.base import CardKind

_REGISTRY: dict[str, CardKind[Any]] = {}


def register(kind: CardKind[Any]) -> CardKind[Any]:
    """Make a kind known to the loader, the schema, execution and every renderer."""
    if kind.name in _REGISTRY:
        raise ValueError(f"a card kind named {kind.name!r} is already registered")
    ids = {k.anki_model_id for k in _REGISTRY.values()}
    if kind.anki_model_id in ids:
        raise ValueError(f"card kind {kind.name!r} reuses an Anki note type id")
    _REGISTRY[kind.name] = kind
    return kind


def unregister(name: str) -> None:
    _REGISTRY.pop(name, None)


def get(name: str) -> CardKind[Any]:
    return _REGISTRY[name]


def names() -> tuple[str, ...]:
    return tuple(_REGISTRY)


def all_kinds() -> tuple[CardKind[Any], ...]:
    return tuple(_REGISTRY.values())


def _register_builtins() -> None:
    from quizgen.kinds import basic, myth, order, value

    for module in (value, myth, order, basic):
        register(module.KIND)


_register_builtins()
