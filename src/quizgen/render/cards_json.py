"""`build/cards.json`: every verified card with its executed answer, output and accepted orders (or the
before-pairs that allow exactly those, where there are: the kind says, `published`)."""

from __future__ import annotations

import hashlib
import json
from dataclasses import fields, is_dataclass
from functools import cache
from pathlib import Path
from typing import Any

from quizgen import kinds
from quizgen.cards.model import VerifiedDeck
from quizgen.project import files
from quizgen.render.base import Project, Rendered
from quizgen.render.reuse import Reuse
from quizgen.render.stage import Stage

# 2: an order card whose accepted orders are a graph carries `before` instead of `orders`; answers
# may be complex numbers and lists of bools; value cards may carry `variants`.
FORMAT_VERSION = 2


@cache
def _names(cls: type) -> tuple[str, ...]:
    return tuple(f.name for f in fields(cls))


def _plain(value: Any, skip: tuple[str, ...] = ()) -> Any:
    """What `dataclasses.asdict` gives for JSON, without its deep copies (a third of a build's rendering
    at 10,000 cards); fields named in `skip` are left out of the outermost record."""
    if is_dataclass(value) and not isinstance(value, type):
        return {name: _plain(getattr(value, name)) for name in _names(type(value)) if name not in skip}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


def cards_data(decks: list[VerifiedDeck]) -> dict[str, object]:
    """The verified cards as JSON-able data."""
    out = []
    for vd in decks:
        deck = _plain(vd.deck, skip=("cards",))
        cards = []
        for vc in vd.cards:
            card = _plain(vc.card, skip=("fields",))
            card["location"] = str(vc.card.location)
            outcome = vc.outcome.to_json() if vc.outcome else None
            if outcome is not None:
                outcome.pop("seconds")  # the same sources must build the same bytes
                outcome = kinds.get(vc.card.kind).published(vc.card, outcome)
            card["outcome"] = outcome
            cards.append(card)
        deck["cards"] = cards
        out.append(deck)
    return {"format": FORMAT_VERSION, "decks": out}


class CardsJson:
    name = "cards.json"

    def render(self, project: Project, stage: Stage) -> Rendered:
        path = project.out_dir / "cards.json"
        data = cards_data(project.decks)
        reuse = Reuse(project.out_dir, project.reuse)
        try:
            text = _text(data, reuse, path)
        finally:
            reuse.close()
        stage.file(path).write_text(text, encoding="utf-8")
        return Rendered([path])


def _text(data: dict[str, object], reuse: Reuse, old: Path) -> str:
    """`layout(data)`, each deck's part taken from the last build's file when that deck's text is the same
    (and so its data)."""
    decks = data["decks"]
    if not isinstance(decks, list) or not decks or set(data) != {"format", "decks"}:
        return layout(data)
    before: list[str] = []  # the last build's file, read once if any deck may come from it
    parts, keys = [], []
    for deck in decks:
        alone = _deck_text(deck)  # all the deck's data says, so also what names it (one encoding, in C)
        key = reuse.key("cards.json", alone)
        part = _recalled(reuse, key, old, before)
        parts.append(_nested(alone) if part is None else part)
        keys.append(key)
    text = _whole(parts, data["format"])
    start = len(_HEAD)
    for key, part in zip(keys, parts, strict=True):  # where each deck's part is, for the next build
        reuse.cache.store("outputs", [(key, f"{start} {len(part)} {_digest(part)}")])
        start += len(part) + 2
    return text


def layout(data: dict[str, object]) -> str:
    """The file's text: sorted keys, indented one space a level, each card on a line of its own (a
    changed card is a changed line; and the indenting encoder is pure Python, a second per 10,000 cards,
    where the compact one is C)."""
    decks = data.get("decks")
    if not isinstance(decks, list) or set(data) != {"format", "decks"}:  # not the file's usual shape
        return json.dumps(data, indent=1, sort_keys=True) + "\n"
    return _whole([_nested(_deck_text(deck)) for deck in decks], data["format"])


_HEAD = '{\n "decks": [\n'


def _whole(parts: list[str], format_: object) -> str:
    """The file around its decks' parts (each as `_nested` lays it out)."""
    return _HEAD + ",\n".join(parts) + f'\n ],\n "format": {json.dumps(format_)}\n}}\n'


def _nested(deck_text: str) -> str:
    """A deck's text indented one level deeper than alone: two spaces (its strings hold no newline)."""
    return "\n".join("  " + line for line in deck_text.split("\n"))


_CARDS = "\x00quizgen-cards\x00"  # stands for the cards while the rest of a deck is laid out


def _deck_text(deck: dict[str, object]) -> str:
    """A deck as `json.dumps(deck, indent=1, sort_keys=True)` lays it out, but each card on one line."""
    cards = deck.get("cards")
    if not isinstance(cards, list) or not cards:
        return json.dumps(deck, indent=1, sort_keys=True)
    frame = json.dumps({**deck, "cards": _CARDS}, indent=1, sort_keys=True)
    lines = ",\n".join("  " + json.dumps(card, sort_keys=True) for card in cards)
    return frame.replace(json.dumps(_CARDS), "[\n" + lines + "\n ]", 1)


MAX_KEPT_BYTES = 256 << 20  # the last build's cards.json read back (10,000 cards make some tens of MB)


def _recalled(reuse: Reuse, key: str, old: Path, before: list[str]) -> str | None:
    """The deck's part of the last build's cards.json, if the store knows where and it is still there."""
    found = reuse.cache.lookup("outputs", [key]).get(key) if reuse.cache.enabled else None
    if found is None:
        return None
    if not before:
        try:
            before.append(files.read_text(old, MAX_KEPT_BYTES))  # (a regular file, not a link)
        except (OSError, UnicodeDecodeError):
            before.append("")
    start, length, digest = found.split(" ")
    part = before[0][int(start) : int(start) + int(length)]
    return part if _digest(part) == digest else None


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()
