"""Everything a learner reads is true on every torch version the card is labelled with.

A card "verified with torch 1.13.1, 2.13.0" shows its explanation's cited values, its printed output and
its variants as the installed torch computed them. Each other version of the matrix runs the same jobs
(torch_versions/matrix.py); here the card's claims are checked on that version's outcome as on the installed
one's (a declared answer, an exception's `match`, a variant that must differ from the answer), and
what it shows is compared with the installed torch's. A difference is an error at the card, with both
values: make the text true on both, or narrow the card's `torch` range. A card that declares its answer
varies (`varies_with_torch`) shows each version's answer, and says which version the rest is from.
"""

from __future__ import annotations

import dataclasses
import itertools
from typing import cast

from quizgen import verify
from quizgen.answers import compare
from quizgen.cards.model import Card, Tolerance
from quizgen.errors import Problem
from quizgen.execution.protocol import Answer, Outcome
from quizgen.kinds.value import variants


def problems(card: Card, version: str, installed: str, mine: Outcome, theirs: Outcome) -> list[Problem]:
    """What the card tells learners that is false on torch `version` but true on the installed torch
    (whose outcome is `mine`); empty for a card that declares its answer varies."""
    if card.varies_with_torch:
        return []
    on = f"on torch {version}, which the card is verified with: "
    found = [dataclasses.replace(p, message=on + p.message) for p in verify.verify_card(card, theirs)]
    if found:
        return found
    tolerance = cast(Tolerance, getattr(card, "tolerance", Tolerance()))
    for name, what, a, b in differences(mine, theirs, tolerance):
        message = (
            f"{what} reads `{a}` on torch {installed} but `{b}` on torch {version}, and learners read it "
            f"as verified with both: make it true on both, or narrow the card's `torch` range"
        )
        found.append(Problem(dataclasses.replace(card.at(name), field=name), message))
    return found


def differences(mine: Outcome, theirs: Outcome, tolerance: Tolerance) -> list[tuple[str, str, str, str]]:
    """(card field, what it is, the installed value, the other value) of each thing shown that differs:
    the printed output, a cited value, a variant's answer (numbers within the card's tolerance)."""
    found = []
    if mine.output.strip() != theirs.output.strip():
        a, b = _first_difference(mine.output, theirs.output)
        found.append(("code", "its printed output", a, b))
    theirs_cited = theirs.cited or {}
    for name, value in (mine.cited or {}).items():
        other = theirs_cited.get(name)
        if other is None or not _same(value, other, tolerance):
            shown = compare.show(other) if other is not None else "nothing"
            found.append(("cite", f"the cited value {{{{{name}}}}}", compare.show(value), shown))
    theirs_parts = theirs.parts or {}
    for name, part in (mine.parts or {}).items():  # a variant is a wrong choice on both: only its raising
        other_part = theirs_parts.get(name)  # where it ran on the other (a name it lacks) changes it
        if part.value is None or other_part is None or other_part.value is None:
            continue  # (a part that fails is verify's to report)
        if (part.value["type"] == "exception") != (other_part.value["type"] == "exception"):
            what = f"the answer of {name}"
            found.append(("variants", what, compare.show(part.value), compare.show(other_part.value)))
    return found


def _same(a: Answer, b: Answer, tolerance: Tolerance) -> bool:
    return compare.show(a) == compare.show(b) or variants.same(b, a, tolerance)


def _first_difference(a: str, b: str, most: int = 120) -> tuple[str, str]:
    """The first line where two outputs differ, in each (cut to `most` characters)."""
    lines = itertools.zip_longest(a.strip().splitlines(), b.strip().splitlines(), fillvalue="")
    x, y = next(((x.strip(), y.strip()) for x, y in lines if x.strip() != y.strip()), ("", ""))
    return (x if len(x) <= most else x[: most - 1] + "…"), (y if len(y) <= most else y[: most - 1] + "…")
