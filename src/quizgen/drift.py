"""Drift: which cards would answer differently under another torch (`quizgen check --torch X`).

The project is checked as always first (the installed torch's answers, from the cache where they are
there); then every card runs again under torch X, in X's own environment (quizgen/torches.py: it must
be provisioned, nothing is downloaded here), in the same pool and sandbox, its results cached under X.
What a learner would see differently (the answer, the printed output, a cited value, a variant's
answer, an order's accepted orders, a run that fails) is reported per card. A difference is a fact
about torch, not an error of the card: the report is informational.
"""

from __future__ import annotations

import dataclasses
import re
import time
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path

from quizgen import answers, kinds, pipeline, planning, timeouts, torches
from quizgen.cards.model import Card
from quizgen.errors import InternalError, Location, count
from quizgen.execution.cache import for_output
from quizgen.execution.protocol import Outcome

_SHOWN = 80  # characters of a value shown in a line of the report


@dataclass(frozen=True)
class Difference:
    """One thing a card shows that another torch computes differently."""

    location: Location
    installed: str
    other: str


@dataclass
class Report:
    version: str  # the other torch
    installed: str  # the torch the project was checked with
    differences: list[Difference]
    cards: int  # cards compared (those that execute)
    executed: int  # jobs run under the other torch (the rest came from the cache)
    seconds: float

    def lines(self) -> list[str]:
        """One line per difference, then the summary."""
        mine, theirs = f"torch {self.installed}", f"torch {self.version}"
        shown = [
            f"{d.location}: {mine} gives {d.installed}, {theirs} gives {d.other}" for d in self.differences
        ]
        changed = len({(d.location.path, d.location.card) for d in self.differences})
        verb = "answers" if changed == 1 else "answer"
        summary = (
            f"{count(changed, 'card')} of {self.cards} {verb} differently on torch {self.version} "
            f"({self.executed} executed, {self.seconds:.2f} s)"
        )
        return [*shown, summary]


def check(options: pipeline.Options, version: str) -> Report:
    """Check the project, then run its cards under torch `version` and compare what they show."""
    python = torches.require(torches.checked(version))  # before anything runs
    if torches.is_installed(version):
        raise torches.TorchError(f"torch {version} is the installed torch: `quizgen check` checks it")
    base = pipeline.check(replace(options, torch=None))
    start = time.perf_counter()
    other, executed = _run(options, base, version, python)
    differences: list[Difference] = []
    compared = 0
    for deck in base.decks:
        for verified in deck.cards:
            if verified.outcome is None or verified.card.judged_on:  # about one version: drift is not its
                continue
            compared += 1
            theirs = other.get(verified.card.id)
            differences += compare(verified.card, verified.outcome, theirs)
    installed = torches.public(torches.installed_version() or "none")
    seconds = time.perf_counter() - start
    return Report(version, installed, differences, compared, executed, seconds)


def _run(
    options: pipeline.Options, base: pipeline.Report, version: str, python: Path
) -> tuple[dict[str, Outcome], int]:
    """Every card's outcome under `version` (by card id) and the number of jobs run."""
    from quizgen.execution.pool import execute

    decks = [d.deck for d in base.decks]
    cache = for_output(options.out_dir, options.use_cache)
    try:
        plan = planning.plan_jobs(decks, cache, torches.result_key(version))
        plan.work = {k: job for k, job in plan.work.items() if not all(c.judged_on for c in plan.cards[k])}
        project = base.settings.timeout
        done = 0

        def limit(card: Card) -> float:
            return timeouts.limit(card, options.timeout, project)

        def on_result(key: str, outcome: Outcome) -> bool:
            nonlocal done
            done += 1
            if options.progress:
                options.progress(done, len(plan.work))
            if outcome.internal is not None:
                where = plan.cards[key][0].location
                raise InternalError(f"while running {where} under torch {version}", outcome.internal)
            cache.put(key, outcome)
            plan.outcomes[key] = outcome
            return True

        with torches.using(python):  # (`quizgen torch remove` refuses it meanwhile)
            execute(
                plan.work,
                jobs=options.jobs,
                timeout=options.timeout or project,
                memory=options.memory,
                on_result=on_result,
                sandbox=options.sandbox,
                timeouts={key: max(limit(c) for c in plan.cards[key]) for key in plan.work},
                python=python,
            )
        cards = [c for deck in decks for c in deck.cards]
        found = {c.id: o for c in cards if (o := plan.outcome_of(c)) is not None}
        return found, len(plan.work)
    finally:
        cache.close()


def compare(card: Card, mine: Outcome, theirs: Outcome | None) -> list[Difference]:
    """What the card shows that differs between two outcomes, field by field; a card that fails under
    either torch is one difference, at the field that runs (what it would show follows from that)."""
    run_field = kinds.get(card.kind).run_field
    if theirs is None or not (mine.ok and theirs.ok):
        status = _status(mine), _status(theirs)
        location = dataclasses.replace(card.at(run_field), field=run_field)
        return [Difference(location, *status)] if status[0] != status[1] else []
    ours, other = shown(mine), shown(theirs)
    found = []
    for name in dict.fromkeys([*ours, *other]):
        a, b = ours.get(name, "nothing"), other.get(name, "nothing")
        if a != b:
            location = dataclasses.replace(card.at(_source_field(card, name)), field=name)
            found.append(Difference(location, a, b))
    return found


def _status(outcome: Outcome | None) -> str:
    """Whether the card's code runs, and why not: its exception where the snippet raised one."""
    if outcome is None:
        return "no result"
    if outcome.ok:
        return "no error"
    return "an error: " + _short(_failure(outcome.error or "failed"))


def shown(outcome: Outcome, prefix: str = "") -> dict[str, str]:
    """What a learner sees of an outcome that ran, by the card field it belongs to."""
    seen: dict[str, str] = {}
    if outcome.value is not None:
        seen[prefix + "answer"] = _short(answers.show(outcome.value))
    if outcome.output:
        seen[prefix + "output"] = _short(repr(outcome.output))
    for name, value in (outcome.cited or {}).items():
        seen[f"{prefix}cite '{name}'"] = _short(answers.show(value))
    if outcome.orders is not None:
        seen[prefix + "order"] = _orders(outcome.orders)
    for name, part in (outcome.parts or {}).items():
        seen.update(shown(part, f"{prefix}{name} -> ") if part.ok else {f"{prefix}{name}": _status(part)})
    return seen


def _source_field(card: Card, name: str) -> str:
    """The card field a shown thing stands on, for its location (the card's own when it has none)."""
    first = re.split(r" -> |\[| '", name)[0]
    if first == "answer" and first not in card.fields:
        return "answer_expr"  # an answer computed, not declared
    return _SOURCES.get(first, first)


_SOURCES = {"output": "code", "order": "lines"}  # what prints the output; what is put in order


def _orders(orders: Iterable[list[int]]) -> str:
    accepted = [" ".join(str(n + 1) for n in order) for order in orders]
    return f"{count(len(accepted), 'accepted order')} ({'; '.join(accepted)})" if accepted else "no order"


def _failure(error: str) -> str:
    """An error in a line: its exception, after what raised it when that is short ("cite 'x' raised:")."""
    lines = [line.strip() for line in error.splitlines() if line.strip()]
    short = len(lines) > 1 and len(lines[0]) <= 40 and lines[0].endswith(":")
    what = lines[0] if short and not lines[0].startswith("Traceback") else ""
    return f"{what} {lines[-1]}".strip() if lines else "failed"


def _short(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= _SHOWN else flat[: _SHOWN - 1] + "…"
