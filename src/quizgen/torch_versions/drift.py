"""Drift: which cards would answer differently under another torch (`quizgen check --torch X`).

The project is checked as always first (the installed torch's answers, from the cache where they are
there); then every card runs again under torch X, in X's own environment (environments.py: it must
be provisioned, nothing is downloaded here), in the same pool and sandbox, its results cached under X.
What a learner would see differently (the answer, the printed output, a cited value, a variant's
answer, an order's accepted orders, a run that fails) is reported per card. A difference is a fact
about torch, not an error of the card: the report is informational.
"""

from __future__ import annotations

import dataclasses
import json
import re
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from pathlib import Path

from quizgen import kinds, pipeline, planning
from quizgen.answers import compare as answers
from quizgen.cards.model import Card, Deck
from quizgen.errors import InternalError, Location, count
from quizgen.execution.cache import for_output
from quizgen.execution.protocol import Job, Outcome
from quizgen.torch_versions import environments, versions
from quizgen.torch_versions import installed as installed_torch
from quizgen.torch_versions.running import machine_failure, run_under

_SHOWN = 80  # characters of a value shown in a line of the report


@dataclass(frozen=True)
class Difference:
    """One thing a card shows that another torch computes differently."""

    location: Location
    installed: str
    other: str
    undecided: bool = False  # it ran out of time (or budget) twice: torch's part in it is unknown
    random: bool = False  # the card draws from torch's random streams


@dataclass
class Report:
    version: str  # the other torch
    installed: str  # the torch the project was checked with
    differences: list[Difference]
    cards: int  # cards compared (those that execute)
    executed: int  # jobs run under the other torch (the rest came from the cache)
    seconds: float

    def lines(self) -> list[str]:
        """One line per difference (those of cards that draw from torch's random streams after the
        others, under a line of their own), the cards it could not tell of, then the summary."""
        mine, theirs = f"torch {self.installed}", f"torch {self.version}"
        plain = [d for d in self.differences if not (d.random or d.undecided)]
        random = [d for d in self.differences if d.random and not d.undecided]
        shown = [f"{d.location}: {mine} gives {d.installed}, {theirs} gives {d.other}" for d in plain]
        if random:
            drawn = len({(d.location.path, d.location.card) for d in random})
            shown.append(
                f"{count(drawn, 'card')} that draw from torch's random streams (seeded samples, a layer's "
                "initial weights): a release may change what a seed draws"
            )
            shown += [f"  {d.location}: {mine} gives {d.installed}, {theirs} gives {d.other}" for d in random]
        shown += [f"{d.location}: {theirs}: {d.other}" for d in self.differences if d.undecided]
        changed = len({(d.location.path, d.location.card) for d in [*plain, *random]})
        verb = "answers" if changed == 1 else "answer"
        unknown = sum(d.undecided for d in self.differences)
        untold = f"; {unknown} could not be told" if unknown else ""
        summary = (
            f"{count(changed, 'card')} of {self.cards} {verb} differently on torch {self.version}{untold} "
            f"({self.executed} executed, {self.seconds:.2f} s)"
        )
        return [*shown, summary]


def check(options: pipeline.Options, version: str) -> Report:
    """Check the project, then run its cards under torch `version` and compare what they show: the cards
    whose range holds `version`; one that ran out of time (or of a search's budget) is run once more,
    and if it runs out again is said to be undecided, never a difference (the machine's, not torch's)."""
    python = environments.require(environments.checked(version))  # before anything runs
    if environments.is_installed(version):
        raise environments.TorchError(f"torch {version} is the installed torch: `quizgen check` checks it")
    base = pipeline.check(replace(options, torch=None))
    start = time.perf_counter()
    about = {  # (a card judged on one version, or whose range leaves `version` out, is not about it)
        v.card.id: (d.deck, v)
        for d in base.decks
        for v in d.cards
        if v.outcome is not None and not v.card.judged_on and versions.in_range(version, v.card.torch)
    }
    other, executed = _run(options, base, version, python, set(about))
    if again := {card_id for card_id in about if machine_failure(other.get(card_id))}:
        rerun, more = _run(options, base, version, python, again)
        other, executed = {**other, **rerun}, executed + more
    differences: list[Difference] = []
    for deck, verified in about.values():
        theirs = other.get(verified.card.id)
        if machine_failure(theirs):
            differences.append(_undecided(verified.card, theirs))
            continue
        found = compare(verified.card, verified.outcome, theirs)  # type: ignore[arg-type]
        drawn = theirs is not None and theirs.ok and _random(deck, verified.card)  # (a failure is no draw)
        differences += [replace(d, random=drawn) for d in found]
    seconds = time.perf_counter() - start
    return Report(version, installed_torch.release(), differences, len(about), executed, seconds)


def _undecided(card: Card, outcome: Outcome | None) -> Difference:
    run_field = kinds.get(card.kind).run_field
    location = dataclasses.replace(card.at(run_field), field=run_field)
    why = _failure(outcome.error or "") if outcome is not None else "no result"
    why = _short(why.split(": ")[0] if why.startswith("the ") else why)  # (quizgen's own: where it was)
    return Difference(location, "", f"could not tell: it ran out twice ({why})", undecided=True)


# A card draws from torch's random streams when it seeds them, samples, or builds a layer (its weights
# are drawn): a release that changes what a seed draws changes its numbers, not what it teaches.
_RANDOM = re.compile(
    r"manual_seed|torch\.rand|\.normal_|\.uniform_|nn\.init\.|[Dd]ropout|"
    r"nn\.(Linear|Conv[123]d|Embedding|LSTM|GRU|RNN|Bilinear)\("
)


def _random(deck: Deck, card: Card) -> bool:
    job = kinds.get(card.kind).job(deck, card)
    return job is not None and bool(_RANDOM.search(json.dumps(job)))


Runner = Callable[[dict[str, Job], Callable[[str, Outcome], bool]], None]  # jobs, told of each outcome


def _run(
    options: pipeline.Options, base: pipeline.Report, version: str, python: Path, about: set[str]
) -> tuple[dict[str, Outcome], int]:
    """The outcome under `version` of each card in `about` (by card id) and the number of jobs run; a
    run that failed in a cite its code left undefined is told by the error of its code."""
    decks = [d.deck for d in base.decks]
    cache = for_output(options.out_dir, options.use_cache)
    try:
        plan = planning.plan_jobs(decks, cache, environments.result_key(version))
        plan.work = {k: job for k, job in plan.work.items() if any(c.id in about for c in plan.cards[k])}
        project = base.settings.timeout
        done = 0

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

        def run(work: dict[str, Job], told: Callable[[str, Outcome], bool]) -> None:
            run_under(options, work, plan.cards, python, project, told)

        run(plan.work, on_result)
        _first_errors(plan, run)
        cards = [c for deck in decks for c in deck.cards if c.id in about]
        found = {c.id: o for c in cards if (o := plan.outcome_of(c)) is not None}
        return found, len(plan.work)
    finally:
        cache.close()


def _first_errors(
    plan: planning.Plan, run: Callable[[dict[str, Job], Callable[[str, Outcome], bool]], None]
) -> None:
    """A run that failed in a cite naming what its code never defined (`NameError: name 'scaler'`) is
    run again without its cites: the code's own exception, if it raised one, is the error to show."""
    knock_on = {
        key: {k: v for k, v in job.items() if k != "cite"}
        for key, job in plan.work.items()
        if (o := plan.outcomes.get(key)) is not None
        and not o.ok
        and (o.error or "").startswith("cite '")
        and "NameError" in (o.error or "")
    }

    def told(key: str, outcome: Outcome) -> bool:
        if outcome.ok and outcome.raised is not None:
            plan.outcomes[key] = replace(plan.outcomes[key], error=outcome.raised["exception"])
        return True

    if knock_on:
        run(knock_on, told)  # type: ignore[arg-type]  # (a job without a key of its own)


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
