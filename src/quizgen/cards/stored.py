"""Loaded decks as plain JSON, so an unchanged card file is not parsed again (the loader's `memo`).

Plain data, never pickles: the build folder is not trusted to run code. A record names its dataclass
(`module:qualname`), and only dataclasses of quizgen modules already imported are made from it; anything
else reads as nothing, and the file is parsed as usual.
"""

from __future__ import annotations

import hashlib
import json
import math
import sys
from collections.abc import Callable, Iterable, Sized
from dataclasses import fields, is_dataclass
from functools import cache
from pathlib import Path
from typing import Any, Protocol, TypeVar, cast

from quizgen.cards.model import Deck
from quizgen.constants import MAX_CARD_FILE_BYTES
from quizgen.errors import Problem
from quizgen.project import files

T = TypeVar("T")


class Memo(Protocol):
    """Stored decks by key, e.g. in the build cache."""

    salt: str  # what else loading depends on: quizgen's own code

    def recall(self, key: str) -> str | None: ...

    def keep(self, key: str, text: str) -> None: ...


def recalled(
    path: Path,
    settings: str,
    problems: list[Problem],
    memo: Memo,
    parse: Callable[[], T | None],
    kind: type[T],
) -> T | None:
    """`parse()`, or the `kind` (a deck, or a file's part of one) the memo kept for exactly these bytes,
    settings and code. Only a file that loaded without a problem is kept, so every problem is still found
    (and located) by parsing."""
    try:
        data = files.read_bytes(path, MAX_CARD_FILE_BYTES, follow=True)
    except OSError:
        return parse()  # which reports it
    material = repr((memo.salt, str(path), settings)).encode()
    key = hashlib.sha256(material + b"\0" + data).hexdigest()
    known = memo.recall(key)
    value = load_as(known, kind) if known is not None else None
    if value is not None:
        return value
    before = len(problems)
    value = parse()
    if value is not None and len(problems) == before and (text := dumps(value)) is not None:
        memo.keep(key, text)
    return value


class Unstorable(Exception):
    """A value with no plain-data form here, or a record of something else: nothing is stored or read."""


@cache
def _names(cls: type) -> tuple[str, ...]:
    return tuple(f.name for f in fields(cls))


def _tagged(value: Any) -> Any:
    """What json cannot write itself, as a tagged record (json writes lists, strings and numbers in C)."""
    if is_dataclass(value) and not isinstance(value, type):
        cls = type(value)
        return {"@": f"{cls.__module__}:{cls.__qualname__}", "f": [getattr(value, n) for n in _names(cls)]}
    if isinstance(value, complex):
        return {"@c": [value.real, value.imag]}
    raise Unstorable(type(value).__name__)


@cache
def _class(name: str) -> Any:
    module, _, qualname = name.partition(":")
    loaded = sys.modules.get(module) if module.startswith("quizgen.") else None
    cls = getattr(loaded, qualname, None) if loaded is not None and "." not in qualname else None
    if not (isinstance(cls, type) and is_dataclass(cls)):
        raise Unstorable(name)
    return cls


def _record(data: dict[str, Any]) -> Any:
    """One JSON object as what it stands for (its members are made already: json calls this innermost
    first, in C, so a deck of thousands of cards reads in one pass)."""
    if "@" in data:
        cls = _class(data["@"])
        made = cls.__new__(cls)
        for name, value in zip(_names(cls), data["f"], strict=True):
            object.__setattr__(made, name, value)  # frozen ones too: this is their making
        return made
    if "@c" in data:
        return complex(*data["@c"])
    # A plain mapping. What json does not give back the same (a tuple, an int key, a mapping that looks
    # like a record) fails the round trip in `dumps`, so it was never stored.
    return data


def dumps(value: object) -> str | None:
    """A deck (or another quizgen dataclass) as JSON text; None when some value has no plain form or would
    not read back equal."""
    try:
        text = json.dumps(value, default=_tagged)
        back = load_as(text, type(value))
        return text if back is not None and (back == value or alike(back, value)) else None
    except (Unstorable, ValueError):
        return None


def alike(a: object, b: object) -> bool:
    """Equal, with a NaN (`answer: .nan`) alike to a NaN: a NaN read back is another float, never equal to
    the one written (before, a deck that declared one was never stored, and parsed on every build)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return a == b or (math.isnan(a) and math.isnan(cast(float, b)))
    if isinstance(a, (list, tuple)):
        return len(a) == len(cast(Sized, b)) and all(map(alike, a, cast(Iterable[object], b)))
    if isinstance(a, dict):
        other = cast(dict[object, object], b)
        return a.keys() == other.keys() and all(alike(a[k], other[k]) for k in a)
    if is_dataclass(a) and not isinstance(a, type):
        return all(alike(getattr(a, n), getattr(b, n)) for n in _names(type(a)))
    return a == b


def loads(text: str) -> Deck | None:
    """A deck stored by `dumps`; None when the text is not one (damaged, or from other code)."""
    return load_as(text, Deck)


def load_as(text: str, kind: type[T]) -> T | None:
    """A `kind` stored by `dumps`; None when the text is not one (damaged, or from other code)."""
    try:
        value = json.loads(text, object_hook=_record)
    except (Unstorable, ValueError, TypeError, KeyError, AttributeError):
        return None
    return value if isinstance(value, kind) else None
