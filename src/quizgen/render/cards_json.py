"""`build/cards.json`: every verified card with its executed answer, output and accepted orders (or the
before-pairs that allow exactly those, where there are: the kind says, `published`)."""

from __future__ import annotations

import json
from dataclasses import asdict

from quizgen import kinds
from quizgen.cards.model import VerifiedDeck
from quizgen.render.base import Project, Rendered
from quizgen.render.stage import Stage

# 2: an order card whose accepted orders are a graph carries `before` instead of `orders`; answers
# may be complex numbers and lists of bools; value cards may carry `variants`.
FORMAT_VERSION = 2


def cards_data(decks: list[VerifiedDeck]) -> dict[str, object]:
    """The verified cards as JSON-able data."""
    out = []
    for vd in decks:
        deck = asdict(vd.deck)
        deck.pop("cards")
        cards = []
        for vc in vd.cards:
            card = asdict(vc.card)
            card.pop("fields", None)
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
