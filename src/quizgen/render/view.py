"""What a template gets of one card (its view) and the stable shuffle of an order puzzle's lines: what the
kinds fill in (their `view`) and render/present.py makes for each verified card."""

from __future__ import annotations

import hashlib
import random
import re
from dataclasses import dataclass, field
from pathlib import Path

from quizgen.execution.protocol import JSON


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
    setup_html: str = ""  # what ran before the card's code (the deck's setup, then its own), highlighted
    output: str = ""
    executed: bool = False  # something of the card ran at build time (its output and proof are real)
    torch_version: str = ""  # only when what ran used torch ("verified with torch X")
    torch_versions: list[str] = field(default_factory=list)  # every version that ran it (the matrix)
    torch_answers: list[tuple[str, str]] = field(default_factory=list)  # (version, answer) where they differ
    torch_judged: str = ""  # with torch_answers: the version whose answer learners are judged on
    judged_on: str = ""  # the torch version the question is about (its `judged_on`): it ran there alone
    answer_text: str = ""
    verdict: bool | None = None
    items: list[OrderItem] = field(default_factory=list)
    accepted: list[list[int]] = field(default_factory=list)
    judge: dict[str, JSON] = field(default_factory=dict)  # what judge.js needs (embedded as JSON)
    attempts: int = 3  # checks the card allows before its answer (an order puzzle's; its deck's setting)
    media: dict[str, Path] = field(default_factory=dict)  # image file name in the outputs -> its source

    @property
    def answer_stop(self) -> str:
        """The period after the answer in a sentence, unless the answer ends one (an exception's message)."""
        return "" if re.search(r"[.!?][\"'`)\]]*$", self.answer_text) else "."

    @property
    def key(self) -> str:
        return card_key(self.id)

    @property
    def listed_choices(self) -> list[tuple[int, JSON]]:
        """A multiple-choice card's options (index in judge.choices, choice) as the page lists them."""
        choices = self.judge.get("choices")
        if not isinstance(choices, list):
            return []
        return [(k, choices[k]) for k in listed(self.id, len(choices))]

    @property
    def accepted_labels(self) -> list[str]:
        by_line = {item.line: item.label for item in self.items}
        return [" ".join(by_line[i] for i in order) for order in self.accepted]


def card_key(card_id: str) -> str:
    """What learners' pages and notes call a card (anchors, element ids, progress, Anki's Id field): a
    short digest of its id, since an id names the lesson (`myth-...` ids are false claims)."""
    return hashlib.sha256(b"quizgen card\0" + card_id.encode()).hexdigest()[:12]


def _rng(card_id: str) -> random.Random:
    return random.Random(int.from_bytes(hashlib.sha256(card_id.encode()).digest()[:8], "big"))


def listed(card_id: str, n: int) -> list[int]:
    """The order a page lists a card's n options in before its script shuffles them: stable and uniform
    (a shuffle that avoids the identity would put the right option, 0, last on every two-option card)."""
    return _rng(card_id).sample(range(n), n)


def shuffled(card_id: str, n: int) -> list[int]:
    """A stable shuffle of range(n) from the card id, never the identity when n > 1."""
    rng = _rng(card_id)
    order = list(range(n))
    for _ in range(10):
        rng.shuffle(order)
        if n < 2 or order != sorted(order):
            break
    return order
