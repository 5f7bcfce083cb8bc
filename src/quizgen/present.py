"""What a verified card looks like to a learner, shared by the Anki and HTML renderers."""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass, field
from typing import Any

from quizgen import values
from quizgen.markup import highlight, markdown
from quizgen.model import BasicCard, MythCard, OrderCard, ValueCard, VerifiedCard, VerifiedDeck


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
    output: str = ""
    torch_version: str = ""
    answer_text: str = ""
    verdict: bool | None = None
    items: list[OrderItem] = field(default_factory=list)
    accepted: list[list[int]] = field(default_factory=list)
    judge: dict[str, Any] = field(default_factory=dict)

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
    card = vc.card
    tags = list(dict.fromkeys([*deck_tags, *card.tags]))
    view = CardView(
        id=card.id,
        kind=card.kind,
        deck=card.deck,
        tags=tags,
        prompt_html="",
        explain_html=markdown(card.explain),
        output=vc.output,
        torch_version=vc.torch_version,
    )
    if isinstance(card, ValueCard):
        view.prompt_html = markdown(card.ask)
        view.code = card.code.code if card.code else ""
        answer = vc.answer or {"type": "none", "value": None}
        view.answer_text = values.show(answer)
        view.judge = {
            "answer": {k: answer.get(k) for k in ("type", "value", "dtype", "shape")},
            "tolerance": {"rtol": card.tolerance.rtol, "atol": card.tolerance.atol},
        }
    elif isinstance(card, MythCard):
        view.prompt_html = markdown(card.claim)
        view.code = card.proof.code if card.proof else ""
        view.verdict = card.verdict
        view.answer_text = "True" if card.verdict else "False"
        view.judge = {"verdict": card.verdict}
    elif isinstance(card, OrderCard):
        view.prompt_html = markdown(card.ask)
        pieces = [(i, s.code) for i, s in enumerate(card.lines)]
        pieces += [(-1 - k, s.code) for k, s in enumerate(card.distractors)]
        labels = [chr(ord("A") + k) for k in range(len(pieces))]
        view.items = [
            OrderItem(labels[pos], pieces[k][1].strip(), highlight(pieces[k][1].strip()), pieces[k][0])
            for pos, k in enumerate(shuffled(card.id, len(pieces)))
        ]
        view.accepted = (vc.outcome.orders if vc.outcome else None) or []
        view.code = "\n".join(s.code.strip() for s in card.lines)
        view.answer_text = " / ".join(view.accepted_labels)
        view.judge = {
            "labels": [item.label for item in view.items],
            "items": [item.line for item in view.items],
            "orders": view.accepted,
        }
    elif isinstance(card, BasicCard):
        view.prompt_html = markdown(card.front)
        view.back_html = markdown(card.back)
        view.code = card.code.code if card.code else ""
    view.code_html = highlight(view.code) if view.code else ""
    return view


def deck_views(deck: VerifiedDeck) -> list[CardView]:
    return [card_view(vc, deck.deck.tags) for vc in deck.cards]
