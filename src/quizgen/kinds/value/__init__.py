"""`value` cards: a question about a snippet whose answer is computed by running it."""

from __future__ import annotations

import html
import re
from dataclasses import dataclass, field, replace
from typing import ClassVar, cast

import yaml

from quizgen.answers import compare as answers
from quizgen.answers import patterns, typed
from quizgen.answers import placeholders as prose
from quizgen.cards.fields import Field
from quizgen.cards.model import Card, Deck, Declared, Snippet, Tolerance, VerifiedCard
from quizgen.cards.reader import Reader
from quizgen.errors import Problem
from quizgen.execution.protocol import JSON, Answer, Job, Outcome, RunJob
from quizgen.kinds.base import CardKind, raised_problem, setup_jobs, snippet_lines
from quizgen.kinds.value import variants
from quizgen.render.lms.question import Choice, Question
from quizgen.render.markup import markdown
from quizgen.render.view import CardView

_TYPED = {"none", "bool", "str", "dtype", "exception"}  # answers an LMS can match as typed text


@dataclass
class ValueCard(Card):
    ask: str = ""
    code: Snippet | None = None
    answer_expr: Snippet | None = None
    declared: Declared | None = None
    tolerance: Tolerance = field(default_factory=Tolerance)
    variants: list[variants.Variant] = field(default_factory=list)
    answers: str = "choice"  # with variants: answered by choosing ("choice") or by typing ("typed")


def _numeric_nested(value: JSON) -> bool:
    if isinstance(value, list):
        return all(_numeric_nested(v) for v in value)
    return isinstance(value, (int, float))  # booleans too: a mask, a tuple of bools


def _raises_problem(value: dict[str, JSON]) -> str | None:
    """What is wrong with `{raises: Type, match: regex}`, if anything."""
    if not set(value) <= {"raises", "match"} or not isinstance(value["raises"], str):
        return "a mapping answer is {shape: [ints]} or {raises: ErrorName, match: regex}"
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", value["raises"]):
        return f"raises names an exception type, like RuntimeError, not {value['raises']!r}"
    pattern = value.get("match")
    if pattern is None:
        return None
    if not isinstance(pattern, str):
        return "match is a regular expression searched in the exception's message"
    return None  # whether RE2 takes it is told at the `match:` itself (_pattern_problem)


def _pattern_problem(reader: Reader, value: JSON) -> None:
    """A `match:` pattern RE2 cannot run, as an error at the pattern (answers/patterns.py)."""
    pattern = value.get("match") if isinstance(value, dict) else None
    problem = patterns.problem(pattern) if isinstance(pattern, str) else None
    if problem is None:
        return
    node = reader.value_node("answer")
    pairs = node.value if isinstance(node, yaml.MappingNode) else []
    at = next((v for k, v in pairs if isinstance(k, yaml.ScalarNode) and k.value == "match"), node)
    reader.error(reader.loc(at, "answer.match"), problem)


def _answer_problem(value: JSON, raises: bool) -> str | None:
    """What is wrong with a declared answer, if anything."""
    if isinstance(value, dict):
        if "raises" in value:
            problem = _raises_problem(value)
            if problem:
                return problem
        else:
            shape = value.get("shape")
            if not (set(value) == {"shape"} and isinstance(shape, list)) or not all(
                isinstance(n, int) and not isinstance(n, bool) for n in shape
            ):
                return "a mapping answer is {shape: [ints]} or {raises: ErrorName, match: regex}"
    elif isinstance(value, list):
        if not _numeric_nested(value):
            return "a list answer holds numbers or booleans (or lists of them) only"
    elif value is not None and not isinstance(value, (int, float, bool, str)):
        return f"unsupported answer {value!r}"
    if raises and not (isinstance(value, dict) and "raises" in value):
        return "without 'answer_expr' the snippet must raise: write {raises: ErrorName}"
    return None


class ValueKind(CardKind[ValueCard]):
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
            "Leave it out when the snippet is meant to raise (and declare answer: {raises: ...}).",
        ),
        "answer": Field(
            "answer",
            False,
            "Declared answer; the build fails unless execution agrees. A number, true/false, null, a "
            "list of numbers or booleans (nested for more dimensions), a string (text, a dtype, or any "
            "spelling a learner may type: '2+4j', '(False, True)'), {shape: [...]} or "
            "{raises: ErrorName, match: regex}. An exception is an answer only when declared so.",
        ),
        "tolerance": Field("tolerance", False, "rtol/atol for numbers, also used to judge typed answers."),
        "variants": variants.FIELD,
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
            else:
                _pattern_problem(reader, card.declared.value)
        card.tolerance = reader.tolerance()
        card.variants = variants.read(reader, card.code)
        card.answers = reader.answers
        return card

    def job(self, deck: Deck, card: ValueCard) -> Job | None:
        if card.code is None:
            return None
        return {
            "type": "run",
            "answer": True,
            "setup": setup_jobs(deck),
            "code": card.code.to_job(),
            "expr": card.answer_expr.to_job() if card.answer_expr else None,
        }

    def further_jobs(self, deck: Deck, card: ValueCard) -> dict[str, Job]:
        return variants.jobs(cast(RunJob | None, self.job(deck, card)), card.variants)

    def verify(self, card: ValueCard, outcome: Outcome) -> list[Problem]:
        main = _answer_problems(card, outcome)
        if outcome.value is None or (main and outcome.value["type"] == "exception"):
            return (
                main  # the card's code failed: its variants, the same code changed, fail for the same cause
            )
        return [*main, *variants.problems(card.variants, outcome, card.tolerance)]

    def placeholders(self, card: ValueCard) -> set[str]:
        return {"answer", *super().placeholders(card)}

    def cited(self, card: ValueCard, outcome: Outcome) -> dict[str, str]:
        values = super().cited(card, outcome)
        if outcome.value is not None:
            values["answer"] = answers.show(outcome.value)
        return values

    def torch_agrees(self, card: ValueCard, other: str, outcome: Outcome) -> bool:
        """Equal as a learner's typed answer is judged: within the card's tolerance (float noise of
        another torch's kernels is no change of behaviour)."""
        if outcome.value is None:
            return super().torch_agrees(card, other, outcome)
        tolerance = card.tolerance
        return other == answers.show(outcome.value) or typed.judge(other, outcome.value, tolerance)[0]

    def warnings(self, card: ValueCard, outcome: Outcome) -> list[Problem]:
        shown = answers.show(outcome.value) if outcome.value else ""
        found = variants.noise_warnings(card.variants, outcome)
        if outcome.value and (noisy := variants.noise_of(outcome.value)):
            found.insert(0, Problem(card.at("answer_expr"), f"the answer {noisy}"))
        # None and booleans are also words of the prose ("`.grad` is None until ..."): numbers, tensors,
        # shapes and strings are what an explanation restates by hand.
        restated = outcome.value and outcome.value["type"] not in ("exception", "none", "bool")
        if restated and prose.states(card.explain, shown):
            message = f"the explanation writes the answer {shown} by hand: write {{{{answer}}}} to quote it"
            found.insert(0, Problem(card.at("explain"), message))
        return found

    def view(self, vc: VerifiedCard, view: CardView) -> None:
        card = self.card_of(vc)
        view.prompt_html = markdown(card.ask)
        view.code = card.code.code if card.code else ""
        answer: Answer = vc.answer or {"type": "none", "value": None, "display": "None"}
        view.answer_text = answers.show(answer)
        keys = ("type", "value", "dtype", "shape")
        view.judge = {
            "answer": {k: cast(JSON, answer.get(k)) for k in keys},
            "tolerance": {"rtol": card.tolerance.rtol, "atol": card.tolerance.atol},
        }
        if vc.outcome is not None and card.variants:
            view.judge.update(variants.judge(card.variants, vc.outcome, card.tolerance, card.answers))

    def note_fields(self, vc: VerifiedCard, view: CardView) -> dict[str, str]:
        return {"Question": view.prompt_html, "Code": view.code_html, "Answer": html.escape(view.answer_text)}

    def lms_question(self, view: CardView, common: Question) -> Question | None:
        """A multiple choice with its variants, else a number within the tolerance or a word as typed."""
        listed = view.judge.get("choices")
        if isinstance(listed, list) and listed:
            entries = [cast(dict[str, str], c) for c in listed]
            choices = [
                Choice(c["text"], n == 0, c.get("feedback") or "" if n else "") for n, c in enumerate(entries)
            ]
            return replace(common, type="choice", choices=choices)
        answer = cast(dict[str, object], view.judge.get("answer") or {})
        kind, value = answer.get("type"), answer.get("value")
        if kind in ("int", "float") and isinstance(value, (int, float)) and not isinstance(value, bool):
            tolerance = cast(dict[str, float], view.judge.get("tolerance") or {})
            within = tolerance.get("atol", 0.0) + tolerance.get("rtol", 0.0) * abs(value)
            return replace(common, type="numerical", answer=view.answer_text, tolerance=within)
        if kind in _TYPED:  # the quiz takes an exception's name
            return replace(
                common, type="short", answer=str(value) if kind == "exception" else view.answer_text
            )
        return None


def _answer_problems(card: ValueCard, outcome: Outcome) -> list[Problem]:
    """Every way the card's own answer disagrees with its execution."""
    if outcome.value is None:
        return [Problem(card.at("code"), "execution produced no answer")]
    if outcome.value["type"] == "exception":
        problem = _exception_problem(card, outcome)
        if problem:
            return [problem]
    if card.declared is None or answers.matches(card.declared.value, outcome.value, card.tolerance):
        return []
    message = (
        f"declared answer {answers.show_declared(card.declared.value)} but execution gives "
        f"{answers.show(outcome.value)}"
    )
    hint = answers.mismatch_hint(card.declared.value, outcome.value, card.tolerance)
    return [Problem(card.declared.location, f"{message}: {hint}" if hint else message)]


def _exception_problem(card: ValueCard, outcome: Outcome) -> Problem | None:
    """An exception is an answer only when declared, and only from the card's own code or answer_expr."""
    declared = card.declared.value if card.declared else None
    if not (isinstance(declared, dict) and "raises" in declared):
        hint = (
            "the snippet raised an exception the card does not declare "
            "(if raising is the point, declare it: answer: {raises: Type})"
        )
        return raised_problem(card, outcome, {"code": card.code, "answer_expr": card.answer_expr}, hint)
    placed = outcome.placed
    if placed and (placed.path, placed.line) not in snippet_lines(card.code, card.answer_expr):
        assert card.declared is not None
        where = f"line {placed.line}" if placed.line else "outside the card file"
        message = (
            f"declared {answers.show_declared(declared)}, but the exception came from {where}, "
            f"not from the card's code or answer_expr:\n{placed.traceback}"
        )
        return Problem(card.declared.location, message)
    return None


KIND = ValueKind()
