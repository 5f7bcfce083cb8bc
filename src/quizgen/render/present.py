"""What a verified card looks like to a learner, shared by the Anki and HTML renderers.

The common part is filled here; each kind fills its own part (quizgen/kinds/<kind>.py, `view`).
"""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass, field

from quizgen.cards.model import VerifiedCard, VerifiedDeck
from quizgen.execution.protocol import JSON
from quizgen.render.markup import highlight, markdown


@dataclass
class OrderItem:
    label: str
    code: str
    html: str
    line: int  # index into the card's lines, or -1 - k for distractor k


@dataclass
class CardView:
    """A card ready for a template: HTML fragments are safe (escaped and sanitized) already."""

    id: str
    kind: str
    deck: str
    tags: list[str]
    prompt_html: str
    explain_html: str = ""
    back_html: str = ""
    code: str = ""
    code_html: str = ""
    setup_html: str = ""  # the card's own setup, highlighted (what runs before an order puzzle's lines)
    output: str = ""
    torch_version: str = ""
    answer_text: str = ""
    verdict: bool | None = None
    items: list[OrderItem] = field(default_factory=list)
    accepted: list[list[int]] = field(default_factory=list)
    judge: dict[str, JSON] = field(default_factory=dict)  # what judge.js needs (embedded as JSON)

    @property
    def accepted_labels(self) -> list[str]:
        by_line = {item.line: item.label for item in self.items}
        return [" ".join(by_line[i] for i in order) for order in self.accepted]


def shuffled(card_id: str, n: int) -> list[int]:
    """A stable shuffle of range(n) from the card id, never the identity when n > 1."""
    seed = int.from_bytes(hashlib.sha256(card_id.encode()).digest()[:8], "big")
    rng = random.Random(seed)
    order = list(range(n))
    for _ in range(10):
        rng.shuffle(order)
        if n < 2 or order != sorted(order):
            break
    return order


def card_view(vc: VerifiedCard, deck_tags: list[str]) -> CardView:
    from quizgen import kinds

    card = vc.card
    view = CardView(
        id=card.id,
        kind=card.kind,
        deck=card.deck,
        tags=list(dict.fromkeys([*deck_tags, *card.tags])),
        prompt_html="",
        explain_html=markdown(card.explain),
        output=vc.output,
        torch_version=vc.torch_version,
    )
    kinds.get(card.kind).view(vc, view)
    view.code_html = highlight(view.code) if view.code else ""
    setup = "\n".join(s.code.strip() for s in kinds.get(card.kind).setup_shown(card) if s.code.strip())
    view.setup_html = highlight(setup) if setup else ""
    return view


def deck_views(deck: VerifiedDeck) -> list[CardView]:
    return [card_view(vc, deck.deck.tags) for vc in deck.cards]
