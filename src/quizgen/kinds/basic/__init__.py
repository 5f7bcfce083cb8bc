"""`basic` cards: a front and a back, with an optional snippet whose output is shown."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from quizgen.cards.fields import Field
from quizgen.cards.model import Card, Deck, Snippet, VerifiedCard
from quizgen.cards.reader import Reader
from quizgen.execution.protocol import Job
from quizgen.kinds.base import CardKind, setup_jobs
from quizgen.render.markup import markdown
from quizgen.render.view import CardView


@dataclass
class BasicCard(Card):
    front: str = ""
    back: str = ""
    code: Snippet | None = None


class BasicKind(CardKind[BasicCard]):
    name = "basic"
    title = "Question"
    anki_model_id = 1714263088
    anki_fields = (
        "Id", "Front", "Back", "Code", "Output", "Explain", "Torch", "Setup", "Source",
        "Extra1", "Extra2", "Extra3",
    )  # fmt: skip
    fields: ClassVar[dict[str, Field]] = {
        "front": Field("markdown", True, "The question (Markdown)."),
        "back": Field("markdown", True, "The answer (Markdown)."),
        "code": Field("code", False, "Optional snippet; its printed output is shown on the back."),
    }

    def parse(self, reader: Reader, common: Card) -> BasicCard:
        card = BasicCard(**vars(common))
        card.front = reader.text("front")
        card.back = reader.text("back")
        card.code = reader.code("code")
        return card

    def job(self, deck: Deck, card: BasicCard) -> Job | None:
        if card.code is None:
            return None
        return {"type": "run", "setup": setup_jobs(deck), "code": card.code.to_job()}

    def runs(self, card: BasicCard) -> bool:
        return card.code is not None

    def view(self, vc: VerifiedCard, view: CardView) -> None:
        card = self.card_of(vc)
        view.prompt_html = markdown(card.front)
        view.back_html = markdown(card.back)
        view.code = card.code.code if card.code else ""

    def note_fields(self, vc: VerifiedCard, view: CardView) -> dict[str, str]:
        return {"Front": view.prompt_html, "Back": view.back_html, "Code": view.code_html}


KIND = BasicKind()
