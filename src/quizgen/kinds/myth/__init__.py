"""`myth` cards: a claim stated as code (`holds`), whose truth after running the proof is the verdict."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import ClassVar

from quizgen.answers import compare
from quizgen.cards.fields import Field
from quizgen.cards.model import Card, Deck, Snippet, VerifiedCard
from quizgen.cards.reader import Reader
from quizgen.errors import Problem
from quizgen.execution.protocol import Answer, Job, Outcome
from quizgen.kinds.base import CardKind, raised_problem, setup_jobs
from quizgen.render.lms.question import Choice, Question
from quizgen.render.markup import markdown
from quizgen.render.view import CardView


@dataclass
class MythCard(Card):
    claim: str = ""
    verdict: bool | None = None  # as declared (optional); the verdict shown is the computed one
    proof: Snippet | None = None
    holds: Snippet | None = None


class MythKind(CardKind[MythCard]):
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
        "proof": Field(
            "code", True, "Snippet run first; its printed output is shown, its asserts must hold."
        ),
        "holds": Field(
            "expr",
            True,
            "The claim as a Python expression, evaluated after the proof: its truth is the verdict.",
        ),
        "verdict": Field("bool", False, "Whether the claim is true; if given, `holds` must agree."),
    }

    def parse(self, reader: Reader, common: Card) -> MythCard:
        card = MythCard(**vars(common))
        card.claim = reader.text("claim")
        card.verdict = reader.boolean("verdict") if reader.has("verdict") else None
        card.proof = reader.code("proof")
        card.holds = reader.code("holds", mode="eval")
        return card

    def job(self, deck: Deck, card: MythCard) -> Job | None:
        if card.proof is None or card.holds is None:
            return None
        return {
            "type": "run",
            "answer": True,
            "setup": setup_jobs(deck),
            "code": card.proof.to_job(),
            "expr": card.holds.to_job(),
        }

    def failure(self, card: MythCard, message: str) -> str:
        return f"the proof does not run (a proof must run and its asserts must pass):\n{message}"

    def verify(self, card: MythCard, outcome: Outcome) -> list[Problem]:
        value = outcome.value
        if value is None:
            return [Problem(card.at("holds"), "execution produced no verdict")]
        if value["type"] == "exception":
            hint = (
                "the proof does not run (a proof must run, its asserts must pass and `holds` must evaluate)"
            )
            return [raised_problem(card, outcome, {"proof": card.proof, "holds": card.holds}, hint)]
        verdict = computed_verdict(value)
        if verdict is None:
            return [Problem(card.at("holds"), f"holds must be True or False, not {compare.show(value)}")]
        if card.verdict is not None and card.verdict != verdict:
            claim = card.holds.code.strip() if card.holds else ""
            message = (
                f"declared verdict {str(card.verdict).lower()}, but `{claim}` is {verdict} after the proof"
            )
            return [Problem(card.at("verdict"), message)]
        return []

    def placeholders(self, card: MythCard) -> set[str]:
        return {"verdict", *super().placeholders(card)}

    def cited(self, card: MythCard, outcome: Outcome) -> dict[str, str]:
        values = super().cited(card, outcome)
        verdict = computed_verdict(outcome.value) if outcome.value else None
        if verdict is not None:
            values["verdict"] = "true" if verdict else "false"
        return values

    def view(self, vc: VerifiedCard, view: CardView) -> None:
        card = self.card_of(vc)
        verdict = computed_verdict(vc.answer) if vc.answer else card.verdict
        view.prompt_html = markdown(card.claim)
        view.code = card.proof.code if card.proof else ""
        view.verdict = bool(verdict)
        view.answer_text = "True" if verdict else "False"
        view.judge = {"verdict": bool(verdict)}

    def note_fields(self, vc: VerifiedCard, view: CardView) -> dict[str, str]:
        return {"Claim": view.prompt_html, "Verdict": view.answer_text, "Proof": view.code_html}

    def lms_question(self, view: CardView, common: Question) -> Question | None:
        truth = bool(view.verdict)
        choices = [Choice("True" if truth else "False", True), Choice("False" if truth else "True", False)]
        return replace(common, type="truefalse", choices=choices)


def computed_verdict(value: Answer) -> bool | None:
    """The truth of `holds`: a bool, or a one-element bool tensor; None for anything else."""
    if value["type"] == "bool" and isinstance(value["value"], bool):
        return value["value"]
    if value["type"] == "tensor" and value.get("dtype") == "bool":
        inner = value["value"]
        while isinstance(inner, list) and len(inner) == 1:
            inner = inner[0]
        return inner if isinstance(inner, bool) else None
    return None


KIND = MythKind()
