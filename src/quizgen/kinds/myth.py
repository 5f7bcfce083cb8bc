"""`myth` cards: a claim, its verdict, and a proof that runs."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, cast

from quizgen.cards.model import Card, Deck, Snippet, VerifiedCard
from quizgen.cards.reader import Reader, has_assert
from quizgen.cards.schema import Field
from quizgen.execution.protocol import Job
from quizgen.kinds.base import CardKind, setup_jobs
from quizgen.render.markup import markdown
from quizgen.render.present import CardView


@dataclass
class MythCard(Card):
    claim: str = ""
    verdict: bool = False
    proof: Snippet | None = None


class MythKind(CardKind):
    name = "myth"
    title = "True or false?"
    run_field = "proof"
    anki_model_id = 2087942418
    anki_fields = (
        "Id", "Claim", "Verdict", "Judge", "Explain", "Proof", "Output", "Torch", "Setup", "Source",
        "Extra1", "Extra2", "Extra3",
    )  # fmt: skip
    fields: ClassVar[dict[str, Field]] = {
        "claim": Field("markdown", True, "The claim (Markdown)."),
        "verdict": Field("bool", True, "Whether the claim is true."),
        "proof": Field("code", True, "Snippet demonstrating the truth; its asserts must hold."),
    }

    def parse(self, reader: Reader, common: Card) -> MythCard:
        card = MythCard(**vars(common))
        card.claim = reader.text("claim")
        card.verdict = reader.boolean("verdict")
        card.proof = reader.code("proof")
        if card.proof is not None and not has_assert(card.proof.code):
            reader.error(
                reader.at("proof"), "a proof needs at least one assert: without one it proves nothing"
            )
        return card

    def job(self, deck: Deck, card: Card) -> Job | None:
        card = cast(MythCard, card)
        if card.proof is None:
            return None
        return {"type": "run", "setup": setup_jobs(deck), "code": card.proof.to_job()}

    def failure(self, card: Card, message: str) -> str:
        return f"the proof does not hold (a proof must run and its asserts must pass):\n{message}"

    def view(self, vc: VerifiedCard, view: CardView) -> None:
        card = cast(MythCard, vc.card)
        view.prompt_html = markdown(card.claim)
        view.code = card.proof.code if card.proof else ""
        view.verdict = card.verdict
        view.answer_text = "True" if card.verdict else "False"
        view.judge = {"verdict": card.verdict}

    def note_fields(self, vc: VerifiedCard, view: CardView) -> dict[str, str]:
        return {"Claim": view.prompt_html, "Verdict": view.answer_text, "Proof": view.code_html}


KIND = MythKind()
