"""`value` cards: a question about a snippet whose answer is computed by running it."""

from __future__ import annotations

import html
from dataclasses import dataclass, field
from typing import ClassVar, cast

from quizgen import answers
from quizgen.cards.model import Card, Deck, Declared, Snippet, Tolerance, VerifiedCard
from quizgen.cards.reader import Reader
from quizgen.cards.schema import Field
from quizgen.errors import Problem
from quizgen.execution.protocol import JSON, Answer, Job, Outcome
from quizgen.kinds.base import CardKind, setup_jobs
from quizgen.render.markup import markdown
from quizgen.render.present import CardView


@dataclass
class ValueCard(Card):
    ask: str = ""
    code: Snippet | None = None
    answer_expr: Snippet | None = None
    declared: Declared | None = None
    tolerance: Tolerance = field(default_factory=Tolerance)


def _numeric_nested(value: JSON) -> bool:
    if isinstance(value, list):
        return all(_numeric_nested(v) for v in value)
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _answer_problem(value: JSON, raises: bool) -> str | None:
    """What is wrong with a declared answer, if anything."""
    if isinstance(value, dict):
        shape = value.get("shape")
        if not (
            (set(value) == {"shape"} and isinstance(shape, list))
            and all(isinstance(n, int) and not isinstance(n, bool) for n in shape)
        ) and not (set(value) == {"raises"} and isinstance(value["raises"], str)):
            return "a mapping answer is {shape: [ints]} or {raises: ErrorName}"
    elif isinstance(value, list):
        if not _numeric_nested(value):
            return "a list answer holds numbers (or lists of numbers) only"
    elif value is not None and not isinstance(value, (int, float, bool, str)):
        return f"unsupported answer {value!r}"
    if raises and not (isinstance(value, dict) and "raises" in value):
        return "without 'answer_expr' the snippet must raise: write {raises: ErrorName}"
    return None


class ValueKind(CardKind):
    name = "value"
    title = "What does it give?"
    anki_model_id = 1700983602
    anki_fields = (
        "Id", "Question", "Code", "Answer", "Judge", "Explain", "Output", "Torch", "Setup", "Source",
        "Extra1", "Extra2", "Extra3",
    )  # fmt: skip
    fields: ClassVar[dict[str, Field]] = {
        "ask": Field("markdown", True, "The question asked about the snippet (Markdown)."),
        "code": Field("code", True, "The snippet that is executed."),
        "answer_expr": Field(
            "expr",
            False,
            "Expression evaluated after the snippet; its value is the answer. "
            "Leave it out when the snippet is meant to raise: the exception type is the answer.",
        ),
        "answer": Field(
            "answer",
            False,
            "Declared answer; the build fails unless execution agrees. A number, "
            "true/false, null, a string, a list of numbers, {shape: [...]} or {raises: ErrorName}.",
        ),
        "tolerance": Field("tolerance", False, "rtol/atol for numbers, also used to judge typed answers."),
    }

    def parse(self, reader: Reader, common: Card) -> ValueCard:
        card = ValueCard(**vars(common))
        card.ask = reader.text("ask")
        card.code = reader.code("code")
        card.answer_expr = reader.code("answer_expr", mode="eval")
        card.declared = reader.declared("answer")
        if card.declared is not None:
            problem = _answer_problem(card.declared.value, card.answer_expr is None)
            if problem:
                reader.error(card.declared.location, problem)
        card.tolerance = reader.tolerance()
        return card

    def job(self, deck: Deck, card: Card) -> Job | None:
        card = cast(ValueCard, card)
        if card.code is None:
            return None
        return {
            "type": "run",
            "answer": True,
            "setup": setup_jobs(deck),
            "code": card.code.to_job(),
            "expr": card.answer_expr.to_job() if card.answer_expr else None,
        }

    def verify(self, card: Card, outcome: Outcome) -> list[Problem]:
        card = cast(ValueCard, card)
        if outcome.value is None:
            return [Problem(card.at("code"), "execution produced no answer")]
        if card.declared is None or answers.matches(card.declared.value, outcome.value, card.tolerance):
            return []
        message = (
            f"declared answer {answers.show_declared(card.declared.value)} but execution gives "
            f"{answers.show(outcome.value)}"
        )
        return [Problem(card.declared.location, message)]

    def view(self, vc: VerifiedCard, view: CardView) -> None:
        card = cast(ValueCard, vc.card)
        view.prompt_html = markdown(card.ask)
        view.code = card.code.code if card.code else ""
        answer: Answer = vc.answer or {"type": "none", "value": None, "display": "None"}
        view.answer_text = answers.show(answer)
        keys = ("type", "value", "dtype", "shape")
        view.judge = {
            "answer": {k: cast(JSON, answer.get(k)) for k in keys},
            "tolerance": {"rtol": card.tolerance.rtol, "atol": card.tolerance.atol},
        }

    def note_fields(self, vc: VerifiedCard, view: CardView) -> dict[str, str]:
        return {"Question": view.prompt_html, "Code": view.code_html, "Answer": html.escape(view.answer_text)}


KIND = ValueKind()
