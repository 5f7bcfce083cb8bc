"""Cards judged on one torch version: `judged_on: "1.13.1"` names the version the card's question is about.

Such a card runs under that version alone (its environment from environments.py, in a pool of its own
with the same sandbox), so what it is checked and judged by is that version's: its declared answer, the
answer a learner types or picks, its variants, cited values and placeholders. It is not run on the rest
of the matrix. Its executed outcomes are recorded in the lock (the `judged` section, by card: the
version, the content of its jobs, each job's outcome as cached) whenever the version ran. A build
without that version provisioned uses the record, says so once, and refuses a card edited since its
record: it is never judged on a stale answer.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from quizgen import kinds
from quizgen.cards import loader
from quizgen.cards.model import Card, Deck, TorchAnswers, VerifiedDeck
from quizgen.errors import Problem
from quizgen.execution.cache import _without_places
from quizgen.execution.protocol import Outcome, Result
from quizgen.planning import Plan
from quizgen.project import lockfile
from quizgen.torch_versions import environments, installed, matrix, versions

TABLE = "judged"  # the lock's section: card id -> {"torch", "job", "outcome"}
Record = dict[str, dict[str, Any]]


@dataclass
class Judging:
    """The cards judged on a version of the matrix: where each runs, or that its record stands in."""

    runs: str  # the torch the run is under: a card judged on it runs with the rest
    pythons: dict[str, Path | None] = field(default_factory=dict)  # version -> its Python (None: absent)
    refused: set[str] = field(default_factory=set)  # ids of cards whose judged_on is wrong
    contents: dict[str, str] = field(default_factory=dict)  # card id -> what its jobs run
    problems: list[Problem] = field(default_factory=list)
    notes: dict[str, str] = field(default_factory=dict)  # version -> what to tell once of it
    recalled: int = 0  # outcomes taken from the lock's records (not run in this build)

    def version(self, card: Card) -> str | None:
        """The version the card runs under, when that is not the run's own (None: the run's)."""
        version = card.judged_on
        if not version or card.id in self.refused or versions.same(version, self.runs):
            return None
        return version

    def torch_for(self, card: Card) -> str | None:
        """The torch its results are keyed by: the named version's (None: the run's own)."""
        if card.id in self.refused:
            return f"refused {card.judged_on}"  # never run, never in the cache
        version = self.version(card)
        if version is None:
            return None
        python = self.pythons[version]
        return installed.of(python) if python is not None else f"recorded {version}"

    def groups(self, plan: Plan) -> dict[str, list[str]]:
        """The plan's work to run under each judged-on version (by version), the rest left to the run."""
        found: dict[str, list[str]] = {}
        for key in plan.work:
            version = self.version(plan.cards[key][0])  # cards sharing a key share its torch
            if version is not None:
                found.setdefault(version, []).append(key)
        return found

    def python(self, version: str) -> Path:
        python = self.pythons[version]
        assert python is not None  # (recall took the work of the versions not provisioned)
        return python


def prepare(matrix_versions: tuple[str, ...], decks: list[Deck], run_all: bool, torch: str | None) -> Judging:
    """Each judged card's version checked against the matrix, and where it runs found (nothing runs)."""
    judging = Judging(torch or installed.release())
    known = matrix_versions or (installed.release(),)
    for _, card in loader.iter_cards(decks):
        if not card.judged_on:
            continue
        wrong = _wrong(card, known)
        if wrong:
            judging.problems.append(wrong)
            judging.refused.add(card.id)
        elif card.judged_on not in judging.pythons:
            judging.pythons[card.judged_on] = environments.python_for(card.judged_on)
    missing = [v for v, python in judging.pythons.items() if python is None]
    if run_all and missing:
        raise matrix.not_provisioned(missing[0])
    return judging


def _wrong(card: Card, known: tuple[str, ...]) -> Problem | None:
    """Why the card cannot be judged on the version it names (None when it can)."""
    version = card.judged_on
    if not versions.VERSION.fullmatch(version):
        message = (
            f"expected a torch release of the project's matrix, three numbers like '1.13.1', not {version!r}"
        )
    elif not any(versions.same(version, v) for v in known):
        message = (
            f"torch {version} is not in the project's torch matrix (torch {', '.join(known)}): a card is "
            f"judged on a version the project is verified on; add it to quizgen.toml's `torch` list"
        )
    elif card.varies_with_torch:
        message = (
            "a card judged on one torch version runs on it alone: its answer cannot vary across versions"
        )
        return Problem(card.at("varies_with_torch"), message)
    elif card.torch:
        message = "a card judged on one torch version runs on it alone: leave out its `torch` range"
        return Problem(card.at("torch"), message)
    else:
        return None
    return Problem(card.at("judged_on"), message)


def content(plan: Plan, card: Card) -> str:
    """What a card's jobs run (its job, cited values and further jobs), without their places in the files."""
    jobs = {"job": plan.jobs[card.id], "parts": plan.part_jobs.get(card.id, {})}
    text = json.dumps(_without_places(jobs), sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def recall(judging: Judging, plan: Plan, cards: Iterable[Card], lock_path: Path) -> None:
    """The recorded outcomes of the cards judged on a version not provisioned (a card edited since its
    record is refused); the work of refused cards dropped: nothing of theirs runs."""
    recorded = read_record(lock_path)
    used: dict[str, int] = {}
    for card in cards:
        if card.id in judging.refused and card.id in plan.keys:
            _drop(plan, card)
        if (version := judging.version(card)) is None or card.id not in plan.keys:
            continue
        judging.contents[card.id] = content(plan, card)
        if judging.pythons[version] is not None:
            continue
        entry = recorded.get(card.id, {})
        outcomes = (
            _outcomes(entry, plan.keys[card.id], plan.parts.get(card.id, {}))
            if entry.get("torch") == version
            else None
        )
        if outcomes is not None and entry.get("job") == judging.contents[card.id]:
            used[version] = used.get(version, 0) + 1
            judging.recalled += len(outcomes)
            for key, outcome in outcomes.items():
                plan.outcomes[key] = outcome
                plan.work.pop(key, None)
        else:
            _drop(plan, card)
            what = "records no run of it" if not entry else "records it as it was before it was edited"
            message = (
                f"judged on torch {version}, which is not provisioned, and quizgen.lock {what}: "
                f"`quizgen torch add {version}`, then build again"
            )
            judging.problems.append(Problem(card.at("judged_on"), message))
    judging.notes.update((version, matrix.recorded_note(version)) for version in used)


def _keys(plan: Plan, card: Card) -> list[str]:
    """The keys of the card's job and further jobs."""
    return [plan.keys[card.id], *(plan.parts.get(card.id, {}).values())]


def _drop(plan: Plan, card: Card) -> None:
    for key in _keys(plan, card):
        plan.work.pop(key, None)


def _outcomes(entry: dict[str, Any], key: str, parts: dict[str, str]) -> dict[str, Outcome] | None:
    """A record's outcomes by the key of the job each is of (`key` the card's job's, `parts` its further
    jobs' by name), None when it is not one (or not of these jobs)."""
    try:
        data = entry["outcome"]
        recorded = data.get("parts") or {}
        if set(recorded) != set(parts):
            return None
        found = {key: Outcome.from_result(cast(Result, data))}
        found.update({parts[name]: Outcome.from_result(cast(Result, recorded[name])) for name in parts})
    except (KeyError, TypeError, ValueError, AttributeError):
        return None
    for outcome in found.values():
        outcome.cached = True
    return found if all(outcome.ok for outcome in found.values()) else None


def answers(
    judging: Judging, cards: Iterable[Card], outcome_of: Callable[[Card], Outcome | None]
) -> dict[str, TorchAnswers]:
    """The judged cards' answers: on the one version each is about (what the quiz and Anki say)."""
    found = {}
    for card in cards:
        version, outcome = judging.version(card), outcome_of(card)
        if version is not None and outcome is not None and outcome.ok and card.id in judging.contents:
            shown = kinds.get(card.kind).torch_answer(card, outcome)
            recorded = (version,) if judging.pythons[version] is None else ()  # the lock's, not a run
            found[card.id] = TorchAnswers({version: shown}, judging.contents[card.id], version, recorded)
    return found


def read_record(lock_path: Path) -> Record:
    """The lock's record of the judged cards (empty when it has none or it is not readable)."""
    try:
        data = (lockfile.load(lock_path) or {}).get(TABLE, {})
    except (OSError, ValueError, AttributeError, RecursionError):  # (a repository's lock nests at will)
        return {}
    return {k: v for k, v in data.items() if isinstance(v, dict)} if isinstance(data, dict) else {}


def to_record(decks: Iterable[VerifiedDeck]) -> Record:
    """The lock's section for the cards judged on a version not installed: each job's outcome there."""
    record: Record = {}
    for vc in (vc for vd in decks for vc in vd.cards):
        version, known, outcome = vc.card.judged_on, vc.torch, vc.outcome
        if not version or known is None or outcome is None or not outcome.ok:
            continue
        if not versions.same(version, installed.release()):
            record[vc.card.id] = {"torch": version, "job": known.job, "outcome": outcome.part_json()}
    return dict(sorted(record.items()))
