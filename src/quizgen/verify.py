"""Checking what execution produced against what each card claims (each kind knows its own claims)."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from quizgen import kinds
from quizgen.answers import display, placeholders
from quizgen.cards import schema, text
from quizgen.cards.model import Card
from quizgen.constants import MAX_ANSWER_TEXT, MAX_FILLED_TEXT, MAX_FILLED_TOTAL, OUTPUT_LIMIT
from quizgen.errors import Problem
from quizgen.execution.protocol import Answer, Outcome


def verify_card(card: Card, outcome: Outcome | None) -> list[Problem]:
    """Every way the card disagrees with its execution (empty when it tells the truth)."""
    if outcome is None:
        return []
    kind = kinds.get(card.kind)
    too_big = _oversized(outcome)
    if too_big:
        return [Problem(card.at(kind.run_field), too_big)]
    if not outcome.ok:
        message = kind.failure(card, outcome.error or "execution failed")
        return [Problem(card.at(kind.run_field), indent(message))]
    return kind.verify(card, outcome)


def indent(message: str) -> str:
    """A multi-line message with every line after the first indented under it."""
    first, _, rest = message.partition("\n")
    return first + ("\n" + "\n".join("    " + ln for ln in rest.splitlines()) if rest else "")


def warnings_for(card: Card, outcome: Outcome | None) -> list[Problem]:
    """What is true but suspicious about an executed card (a hand-written answer, a lax check)."""
    if outcome is None or not outcome.ok:
        return []
    kind = kinds.get(card.kind)
    return kind.warnings(card, outcome) + _noise_warnings(card, outcome, kind.run_field)


def _noise_warnings(card: Card, outcome: Outcome, field_name: str) -> list[Problem]:
    """A warning when what the card printed (shown to learners as is) holds float noise."""
    found = display.noise(outcome.output)
    if not found:
        return []
    shown = ", ".join(f"{written} (reads {better})" for written, better in found[:3])
    more = f" and {len(found) - 3} more" if len(found) > 3 else ""
    message = (
        f"its printed output shows float noise: {shown}{more}; learners see it as printed: round what"
        " is printed (`round(x, 4)`, `f'{x:.4g}'`) or call `torch.set_printoptions(precision=4)`"
    )
    return [Problem(card.at(field_name), message)]


def _answer_size(answer: Answer) -> int:
    """The characters of an answer's text: how it shows, its message, a string's value."""
    value = answer.get("value")
    text = value if isinstance(value, str) else ""
    return len(answer.get("display", "")) + len(answer.get("message", "")) + len(text)


def _oversized(outcome: Outcome) -> str:
    """Why an outcome is too big to publish ("" when it is not): the worker keeps within these limits, so
    only a snippet that got round it (or a forged result) meets them."""
    if len(outcome.output) > OUTPUT_LIMIT + 100:  # the worker's cut, with its note
        return f"the snippet printed {len(outcome.output)} characters; at most {OUTPUT_LIMIT} are kept"
    if len(outcome.error or "") > OUTPUT_LIMIT:
        return f"the snippet failed with a message of {len(outcome.error or '')} characters"
    answers = [outcome.value] if outcome.value else []
    answers += list((outcome.cited or {}).values())
    for answer in answers:
        if _answer_size(answer) > MAX_ANSWER_TEXT:
            return f"an answer of {_answer_size(answer)} characters; at most {MAX_ANSWER_TEXT}"
    return ""


@dataclass
class Filling:
    """The problems of the cards' text as placeholders filled it in, and how much they added."""

    root: Path  # the project: images must lie under it
    added: int = 0  # characters the placeholders added, over the whole build
    errors: list[Problem] = field(default_factory=list)
    warnings: list[Problem] = field(default_factory=list)


def bind_prose(
    card: Card, outcome: Outcome | None, filling: Filling, extra: Mapping[str, str] | None = None
) -> Card:
    """The card with every `{{placeholder}}` in its text replaced by what execution computed (and the
    `extra` values: where its answer changed across the torch matrix), escaped to read as written; the
    filled text is checked like written text (images, math, size), its problems kept in `filling`."""
    values = kinds.get(card.kind).cited(card, outcome) if outcome is not None and outcome.ok else {}
    values = {**values, **(extra or {})}
    bound = copy.copy(card)
    for name, written in schema.text_fields(card).items():
        if "{{" not in written:
            continue
        where = card.at(name)
        limit = min(MAX_FILLED_TEXT, len(written) + MAX_FILLED_TOTAL - filling.added)
        try:
            filled = placeholders.fill(written, values, limit)
        except placeholders.TooLong:
            whole = "the build's" if limit < MAX_FILLED_TEXT else "the field's"
            shown = MAX_FILLED_TOTAL if limit < MAX_FILLED_TEXT else MAX_FILLED_TEXT
            message = f"its placeholders fill in more than {whole} limit of {shown} characters"
            filling.errors.append(Problem(where, message))
            continue
        filling.added += max(0, len(filled) - len(written))
        setattr(bound, name, filled)
        cited = [n for n in placeholders.names(written) if n in values]
        if cited:
            # checked as the values would read unescaped too: an image or a `\\href` a value brings is
            # refused, not merely shown as text (its length was bounded by the fill above)
            unescaped = placeholders.fill(written, values, limit, raw=True)
            errors, warnings = text.filled_problems(written, unescaped, filling.root, where, cited, filled)
            filling.errors += errors
            filling.warnings += warnings
    return bound
