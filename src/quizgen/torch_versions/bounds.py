"""Typed bounds, executed: a card's `torch:` range checked by running it on the releases at each bound.

A card about some versions only gives them (`torch: ">=2.3"`): the releases outside are said to lack what
it uses, or to answer otherwise. `quizgen check --matrix` runs each such card on the provisioned releases
nearest each bound, on either side (the installed torch among them; nothing is downloaded). Inside the
range the card must give the installed torch's answer, output and cited values, else the range is too
wide; just outside it, a release that gives what the release inside gives makes the range too narrow (it
claims a change that execution does not show). Either is an error at the card's `torch:` naming the
release and both values, with the range execution supports as far as the provisioned releases tell. A
bound whose own releases (the package index's nearest on each side) are not provisioned is said in a note.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import cast

from quizgen import kinds
from quizgen.cards.model import Card, Tolerance
from quizgen.errors import Problem, count
from quizgen.execution.cache import Cache
from quizgen.execution.protocol import Job, Outcome
from quizgen.torch_versions import changed, environments, labelled, matrix, versioned, versions
from quizgen.torch_versions import installed as installed_torch
from quizgen.torch_versions.running import machine_failure

Clause = tuple[str, str]  # (operator, version) as the range writes it: (">=", "2.3")


@dataclass(frozen=True)
class Sides:
    """The releases on either side of one bound of a range, each nearest the bound first."""

    inside: list[str]
    outside: list[str]


@dataclass
class Found:
    """What running the bounds found: the ranges execution contradicts, and the bounds it could not run."""

    problems: list[Problem] = field(default_factory=list)
    notes: dict[str, str] = field(default_factory=dict)  # a bound -> what to tell once of it


class _Needed(Exception):
    """A bound's verdict needs the card run on a release it has not run on yet."""

    def __init__(self, release: str) -> None:
        self.release = release


def sides(text: str, clause: Clause, releases: list[str]) -> Sides | None:
    """Of `releases`, those in the range `text` and those outside `clause` alone (inside the rest), each
    nearest the clause's bound first; None for a clause that is no bound (`==`, `!=`)."""
    op, bound = clause
    if op not in (">=", ">", "<=", "<"):
        return None
    rest = ",".join(f"{o}{v}" for o, v in versions.clauses(text) if (o, v) != clause)
    inside = [r for r in releases if versions.in_range(r, text)]
    outside = [r for r in releases if not versions.in_range(r, f"{op}{bound}") and versions.in_range(r, rest)]
    lower = op.startswith(">")  # a lower bound: the nearest inside is the oldest, outside the newest
    return Sides(
        sorted(inside, key=versions.key, reverse=not lower), sorted(outside, key=versions.key, reverse=lower)
    )


def supported(text: str, clause: Clause, release: str | None) -> str:
    """The range with `clause`'s bound moved to take `release` in (left out: None)."""
    lower = clause[0].startswith(">")
    moved = [] if release is None else [f"{'>=' if lower else '<='}{changed.name(release)}"]
    kept = [f"{o}{v}" if (o, v) != clause else "" for o, v in versions.clauses(text)]
    return ",".join(c for part in kept for c in (moved if not part else [part]))


def difference(
    card: Card, mine: Outcome, theirs: Outcome, answers: bool = True
) -> tuple[str, str, str] | None:
    """The first thing a learner reads that `theirs` shows otherwise than `mine`, as (what, mine's,
    theirs); None when they agree (numbers within the card's tolerance). Without `answers`, only whether
    the card runs (a card whose answer varies with torch)."""
    raised = (mine.raised is None) != (theirs.raised is None)
    if not (mine.ok and theirs.ok) or raised:
        a, b = _status(mine), _status(theirs)
        return None if a == b else ("the card", a, b)
    if not answers:
        return None
    kind = kinds.get(card.kind)
    answer = kind.torch_answer(card, theirs)
    if not kind.torch_agrees(card, answer, mine):
        return "the answer", f"`{kind.torch_answer(card, mine)}`", f"`{answer}`"
    tolerance = cast(Tolerance, getattr(card, "tolerance", Tolerance()))
    for _, what, a, b in labelled.differences(mine, theirs, tolerance):
        return what, f"`{a}`", f"`{b}`"
    return None


def _status(outcome: Outcome) -> str:
    if outcome.ok and outcome.raised is None:
        return "runs"
    error = outcome.raised["exception"] if outcome.raised is not None else outcome.error or "fails"
    last = next((line.strip() for line in reversed(error.splitlines()) if line.strip()), "fails")
    return f"fails ({last if len(last) <= 120 else last[:119] + '…'})"


def check(
    options: matrix.Options,
    matrix_versions: tuple[str, ...],
    cards: list[Card],
    jobs: Mapping[str, Job],
    parts: matrix.Parts,
    outcome_of: Callable[[Card], Outcome | None],
    cache: Cache,
    project_timeout: float,
) -> Found:
    """Run each card's typed bounds on the provisioned releases nearest them (the matrix checks its own
    versions inside a range; here the others, and the releases outside)."""
    found = Found()
    installed = installed_torch.release()
    provisioned = versions.ordered([installed, *(e.version for e in environments.listing())])
    ranged = [
        c
        for c in cards
        if c.torch.strip()
        and not c.judged_on
        and c.id in jobs
        and versions.in_range(installed, c.torch)
        and (o := outcome_of(c)) is not None
        and o.ok
    ]
    bounds = [
        (c, clause, s)
        for c in ranged
        for clause in versions.clauses(c.torch)
        if (s := sides(c.torch, clause, provisioned))
    ]
    ran: dict[tuple[str, str], Outcome] = {(installed, c.id): cast(Outcome, outcome_of(c)) for c in ranged}
    needed = {(r, c.id): c for c, _, s in bounds for r in s.inside[:1] + s.outside[:1] if r != installed}
    pending = bounds
    while pending:
        _run(options, needed, jobs, parts, cache, project_timeout, ran)
        needed, waiting = {}, []
        for card, clause, side in pending:
            try:
                _judge(card, clause, side, installed, matrix_versions, ran, found)
            except _Needed as more:  # (one release a round: a bound runs more only once it is wrong)
                needed[(more.release, card.id)] = card
                waiting.append((card, clause, side))
        pending = waiting
    _unchecked(bounds, provisioned, found)
    return found


def _judge(
    card: Card,
    clause: Clause,
    side: Sides,
    installed: str,
    matrix_versions: tuple[str, ...],
    ran: Mapping[tuple[str, str], Outcome],
    found: Found,
) -> None:
    """The verdict on one bound of a card from its runs (_Needed: one more run first)."""

    def run(release: str) -> Outcome:
        if (release, card.id) not in ran:
            raise _Needed(release)
        return ran[(release, card.id)]

    text, primary, nearest = card.torch, run(installed), side.inside[0]
    inner, outer = run(nearest), (run(side.outside[0]) if side.outside else None)
    for release, outcome in ((nearest, inner), (side.outside[0] if side.outside else "", outer)):
        if outcome is not None and machine_failure(outcome):  # (the machine's, not torch's: no verdict)
            found.notes[f"bound {card.id} {clause}"] = (
                f"{card.at('torch')}: the range could not be told on torch {release}: the card ran out of "
                "time twice there (the machine's, not torch's); run `quizgen check --matrix` again"
            )
            return
    against = difference(card, primary, inner, answers=not card.varies_with_torch)
    if against is not None and not any(versions.same(nearest, v) for v in matrix_versions):
        agreeing = next(
            r for r in side.inside if difference(card, primary, run(r), not card.varies_with_torch) is None
        )
        message = (
            f"torch {nearest} lies in the range `{text}` but does not give what torch {installed} gives "
            f"({_both(against, nearest, installed)}): the range is too wide; execution supports "
            f"`{supported(text, clause, agreeing)}`{_told(side)}"
        )
        found.problems.append(Problem(card.at("torch"), message))
        return
    if outer is None or against is not None or difference(card, inner, outer) is not None:
        return  # (the range holds; a matrix version that differs inside is the matrix's to report)
    last, differs = side.outside[0], ""
    for release in side.outside[1:]:
        if (other := difference(card, inner, run(release))) is not None:
            differs = f"; torch {release} differs ({_both(other, release, nearest)})"
            break
        last = release
    fix = supported(text, clause, last if differs else None)
    message = (
        f"torch {side.outside[0]} lies outside the range `{text}` but gives what torch {nearest} inside it "
        f"gives ({_same(card, inner)}): the range is too narrow, it claims a change that execution does not "
        f"show; execution supports {f'`{fix}`' if fix else 'no range'}{_told(side)}{differs}"
    )
    found.problems.append(Problem(card.at("torch"), message))


def _both(found: tuple[str, str, str], theirs: str, mine: str) -> str:
    what, a, b = found
    return f"{what}: {b} on torch {theirs}, {a} on torch {mine}"


def _same(card: Card, outcome: Outcome) -> str:
    answer = kinds.get(card.kind).torch_answer(card, outcome)
    return (
        f"the answer `{answer}`, the same output and cited values" if answer else "the same output and values"
    )


def _told(side: Sides) -> str:
    shown = ", ".join(versions.ordered([*side.inside, *side.outside]))
    return f", as far as the provisioned releases tell (torch {shown})"


def _run(
    options: matrix.Options,
    needed: Mapping[tuple[str, str], Card],
    jobs: Mapping[str, Job],
    parts: matrix.Parts,
    cache: Cache,
    project_timeout: float,
    ran: dict[tuple[str, str], Outcome],
) -> None:
    """Each (release, card) needed run, by release, from the cache where it ran before; a run that ran out
    of time or of a search's budget once runs once more. A clean run is kept in the cache."""
    by_release: dict[str, list[Card]] = {}
    for (release, _), card in needed.items():
        by_release.setdefault(release, []).append(card)
    for release, todo in by_release.items():
        python = environments.python_for(release)
        for _ in range(2):
            if python is None or not todo:
                break
            outcomes = versioned.run_on(
                options, release, python, matrix.work_of(todo, jobs, parts), cache, project_timeout
            )
            for card in todo:
                whole = matrix.with_parts(card, jobs[card.id], parts.get(card.id, {}), outcomes)
                keys, outcome = whole if whole is not None else ([], Outcome(ok=False, error="no result"))
                ran[(release, card.id)] = outcome
                if keys and outcome.ok and outcome.raised is None:
                    matrix.keep(cache, keys, outcome)
            todo = [c for c in todo if machine_failure(ran[(release, c.id)])]
        for card in by_release[release]:  # (never asked again: a release gone meanwhile fails the card)
            ran.setdefault((release, card.id), Outcome(ok=False, error=f"torch {release} is not provisioned"))


def _unchecked(bounds: list[tuple[Card, Clause, Sides]], provisioned: list[str], found: Found) -> None:
    """A note for each bound whose own releases (the package index's nearest on either side) did not run:
    the provisioned ones nearest it stood in."""
    releases = changed.listed() or []
    cards = Counter(o + v for _, (o, v), _ in bounds)
    for card, clause, side in bounds:
        bound = clause[0] + clause[1]
        at = sides(card.torch, clause, releases)
        own = (at.inside[:1] + at.outside[:1]) if at is not None else []
        missing = [r for r in own if r not in provisioned]
        if f"bound {bound}" in found.notes or not (missing or not side.outside):
            continue
        ran = " and ".join(versions.ordered(side.inside[:1] + side.outside[:1]))
        add = ", ".join(f"`quizgen torch add {r}`" for r in versions.ordered(missing))
        at_it = f"{' and '.join(versions.ordered(missing))} stand{'s' if len(missing) == 1 else ''} at it"
        if not missing:  # (the index unknown, and no release outside the range provisioned)
            at_it, add = "none outside it is provisioned", f"`quizgen torch add` a release outside `{bound}`"
        found.notes[f"bound {bound}"] = (
            f"the torch bound `{bound}` ({count(cards[bound], 'card')}) ran on the provisioned releases "
            f"nearest it, torch {ran}; {at_it}: {add} to check it there"
        )
