"""What a template gets of one card (its view) and the stable shuffle of an order puzzle's lines: what the
kinds fill in (their `view`) and render/present.py makes for each verified card."""

from __future__ import annotations

import hashlib
import random
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
