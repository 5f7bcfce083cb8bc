"""`build/cards.json`: every verified card with its executed answer, output and accepted orders (or the
before-pairs that allow exactly those, where there are: the kind says, `published`)."""

from __future__ import annotations

import json
from dataclasses import fields, is_dataclass
from functools import cache
from typing import Any

from quizgen import kinds
from quizgen.cards.model import VerifiedDeck
from quizgen.render.base import Project, Rendered
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
        text = json.dumps(cards_data(project.decks), indent=1, sort_keys=True) + "\n"
        stage.file(path).write_text(text, encoding="utf-8")
        return Rendered([path])
