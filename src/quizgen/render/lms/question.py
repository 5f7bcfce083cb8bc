"""A card as a question an LMS grades itself (render/lms/items.py makes them; each kind says whether and
how its cards are one: CardKind.lms_question)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

# A question's type -> the SCORM interaction type its card is reported as (static/lms/scorm.js).
INTERACTIONS = {
    "truefalse": "true-false",
    "choice": "choice",
    "numerical": "numeric",
    "short": "fill-in",
    "ordering": "sequencing",
}


@dataclass(frozen=True)
class Choice:
    text: str
    right: bool
    feedback: str = ""  # plain text: why a learner would pick it (a variant's label)

    @property
    def feedback_sentence(self) -> str:
        """The feedback as shown after picking it: a sentence ("" for none)."""
        return f"{self.feedback[:1].upper()}{self.feedback[1:]}." if self.feedback else ""


@dataclass(frozen=True)
class Question:
    """One gradable card: `type` is one of INTERACTIONS."""

    id: str
    type: str
    title: str  # plain text, for the bank's listing
    text_html: str  # the question with its code, as HTML
    explain_html: str = ""  # shown after answering (the card's explanation)
    choices: list[Choice] = field(default_factory=list)  # choice and truefalse: the right one first
    answer: str = ""  # numerical and short: the answer as text
    tolerance: float = 0.0  # numerical: how far from the answer still counts
    order: list[str] = field(default_factory=list)  # ordering: the lines, in the accepted order
    media: dict[str, Path] = field(default_factory=dict)  # the card's images: the name its HTML uses -> file
