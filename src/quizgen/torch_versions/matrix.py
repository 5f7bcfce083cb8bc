"""The project's torch matrix: each card's answer on every torch version the project lists.

The installed torch runs every card as before (the pipeline's plan). Each other version of the matrix
runs each card's job again, in an environment provisioned for it (environments.py), with the same pool
and sandbox, its results cached per version. A version not provisioned is not downloaded: what the lock
recorded for it stands in, and the build says so once. Answers that differ between versions are facts a
card must declare (`varies_with_torch: true`); a card about some versions only says which (`torch:
">=2.0"`), and the others do not run it.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from quizgen import kinds
from quizgen.answers import placeholders
from quizgen.cards import schema
from quizgen.cards.model import Card, TorchAnswers
from quizgen.constants import MAX_ANSWER_TEXT
from quizgen.errors import Problem, QuizgenError
from quizgen.execution.cache import Cache, _without_places
from quizgen.execution.protocol import Job, Outcome, place
from quizgen.project import lockfile
from quizgen.torch_versions import changed, labelled, versioned, versions
from quizgen.torch_versions.installed import release as installed
from quizgen.verify import indent

if TYPE_CHECKING:
    from quizgen.execution.pool import Pool

Recorded = dict[str, dict[str, dict[str, str]]]  # version -> card id -> {"answer": ..., "job": ...}
TABLE = "torch"  # the lock's section of recorded answers
Parts = Mapping[str, Mapping[str, Job]]  # card id -> its further jobs by name (a value card's variants)


class Options(Protocol):
    """What the matrix reads of a run's options (pipeline.Options)."""

    cards_dir: Path
    jobs: int
    memory: int
    sandbox: str
    timeout: float | None
    torch: str | None  # the whole run is under another torch (`check --torch`)
    matrix: bool  # every version must run: none may be left unprovisioned
    progress: Callable[[int, int], None] | None


class NotProvisioned(QuizgenError):
    """A version of the matrix must run (`--matrix`) and has no environment."""


@dataclass
class Checked:
    """What the matrix found: each card's answers by version, the cards that lie, what to tell once."""

    answers: dict[str, TorchAnswers] = field(default_factory=dict)  # card id -> its answers
    problems: list[Problem] = field(default_factory=list)
    warnings: list[Problem] = field(default_factory=list)
    notes: dict[str, str] = field(default_factory=dict)  # version -> what to tell once of it
    ran: dict[str, tuple[int, int]] = field(default_factory=dict)  # version run -> (executed, from cache)
    recalled: dict[str, int] = field(default_factory=dict)  # version not provisioned -> answers from the lock
    timed: dict[str, float] = field(default_factory=dict)  # "card (torch V)" -> seconds its jobs ran there


def not_provisioned(version: str) -> NotProvisioned:
    """The error of a run that must verify `version` (`--matrix`) where it has no environment."""
    return NotProvisioned(
        f"torch {version} of the project's matrix is not provisioned: "
        f"`quizgen torch add {version}`, then run again"
    )


def recorded_note(version: str, missing: str = "") -> str:
    """What a build tells once when the lock's answers stand in for a version not provisioned."""
    return (
        f"torch {version} not provisioned: using the answers recorded in quizgen.lock{missing}; "
        f"`quizgen torch add {version}` to verify"
    )


def content(job: Job) -> str:
    """What a job runs, without its places in the files: the lock's answers are good for this only."""
    text = json.dumps(_without_places(_answer_job(job)), sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _answer_job(job: Job) -> Job:
    """The job without the text's cited values: the lock records another version's answer for this."""
    return {k: v for k, v in job.items() if k != "cite"}  # type: ignore[return-value]


def read_recorded(lock_path: Path) -> Recorded:
    """The answers the lock recorded for the versions not installed (empty when it has none)."""
    try:
        data = (lockfile.load(lock_path) or {}).get(TABLE, {})
    except (OSError, ValueError, AttributeError, RecursionError):  # (a repository's lock nests at will)
        return {}
    if not isinstance(data, dict):
        return {}
    return {
        version: {
            card: entry
            for card, entry in cards.items()
            if isinstance(entry, dict)
            and all(isinstance(entry.get(k), str) for k in ("answer", "job"))
            and len(entry["answer"]) <= MAX_ANSWER_TEXT  # (as an executed answer is: never bigger)
        }
        for version, cards in data.items()
        if isinstance(cards, dict)
    }


def to_record(answers: Mapping[str, TorchAnswers]) -> Recorded:
    """The lock's section for these cards' answers: every version but the installed one."""
    recorded: Recorded = {}
    for card_id, known in sorted(answers.items()):
        for version, answer in known.answers.items():
            if not versions.same(version, installed()):
                recorded.setdefault(version, {})[card_id] = {"answer": answer, "job": known.job}
    return recorded


def check(
    options: Options,
    matrix: tuple[str, ...],
    cards: list[Card],
    jobs: Mapping[str, Job],
    outcome_of: Callable[[Card], Outcome | None],
    cache: Cache,
    project_timeout: float,
    parts: Mapping[str, Mapping[str, Job]] | None = None,
    early: Mapping[str, versioned.Ahead] | None = None,
) -> Checked:
    """Every card's answer on every version of the matrix, compared with the installed torch's; and what
    else a learner reads of it (cited values, output, variants) checked on each (torch_versions/labelled.py).
    `parts` are the cards' further jobs (a value card's variants) by card id; `early`, by version, what
    runs ahead there (`ahead`)."""
    from quizgen.render.manifest import LOCK_NAME

    checked = Checked()
    if options.torch:  # the whole run is under another torch (`check --torch`): no matrix around it
        return checked
    extra = versioned.others(matrix)
    _ranges(cards, extra, checked)
    missing = [v for v in extra if _python_for(v) is None]
    if not extra or changed.unreleased(options.cards_dir, missing, checked.problems):
        return checked
    if options.matrix and missing:
        raise not_provisioned(missing[0])
    recorded = read_recorded(options.cards_dir / LOCK_NAME)
    bisected = changed.read(options.cards_dir / LOCK_NAME)
    about = [c for c in cards if not c.judged_on and c.id in jobs]  # (judged: run on one version alone)
    mine = {c.id: c for c in about if (o := outcome_of(c)) is not None and o.ok}
    answers: dict[str, dict[str, str]] = {card_id: {} for card_id in mine}
    ran_on: dict[str, dict[str, tuple[list[str], Outcome]]] = {}  # card id -> version -> (keys, outcome)
    for version in extra:
        if not (ran := run_there(list(mine.values()), jobs, version)):  # (judged on it: judged.py)
            continue
        if (python := _python_for(version)) is not None:
            work = work_of(ran, jobs, parts or {})
            on = (early or {}).get(version)  # (started with the installed torch's: versioned.start_early)
            outcomes = versioned.run_on(options, version, python, work, cache, project_timeout, checked, on)
            for card in ran:
                if (run := with_parts(card, jobs[card.id], (parts or {}).get(card.id, {}), outcomes)) is None:
                    continue
                keys, outcome = run
                got = _answered(card, version, outcome, outcome_of(card), jobs[card.id], checked)
                if got is not None:
                    answers[card.id][version] = got
                    ran_on.setdefault(card.id, {})[version] = (keys, outcome)
        else:
            _recalled(version, ran, jobs, recorded.get(version, {}), answers, checked)
    for card_id, card in mine.items():
        primary = outcome_of(card)
        assert primary is not None  # (mine holds the cards whose outcome is in)
        found = _settled(card, primary, answers[card_id], ran_on.get(card_id, {}), cache, checked)
        from_lock = tuple(v for v in found if v in missing)  # the repository's word, not a run
        known = TorchAnswers(found, content(jobs[card_id]), installed(), from_lock)
        checked.answers[card_id], warning = changed.since(card, known, bisected.get(card_id))
        checked.warnings += [warning] if warning is not None else []
        _compare(card, checked.answers[card_id], checked)
    return checked


def _ranges(cards: list[Card], extra: list[str], checked: Checked) -> None:
    """A range must hold the installed torch; a declared change needs a matrix of more than it."""
    for card in cards:
        if not card.judged_on and not versions.in_range(installed(), card.torch):
            message = f"the range leaves out the installed torch {installed()}, which runs every card"
            checked.problems.append(Problem(card.at("torch"), message))
        if not extra and card.varies_with_torch:
            message = f"varies_with_torch, but the project's torch matrix is torch {installed()} alone"
            checked.warnings.append(Problem(card.at("varies_with_torch"), message))


def _settled(
    card: Card,
    primary: Outcome,
    answers: dict[str, str],
    ran_on: Mapping[str, tuple[list[str], Outcome]],
    cache: Cache,
    checked: Checked,
) -> dict[str, str]:
    """The card's answers, oldest first (the installed torch's where another's agrees within the card's
    tolerance); each version's run kept in the cache, and what it shows checked (labelled.py)."""
    shown = answers[installed()] = _answer(card, primary)
    for version, other in answers.items():  # the same within the card's tolerance: the same
        if other != shown and kinds.get(card.kind).torch_agrees(card, other, primary):
            answers[version] = shown
    for version, (keys, outcome) in ran_on.items():
        keep(cache, keys, outcome)  # (what it shows is checked again each time, from the cache too)
        if answers[version] == shown:  # (an answer that differs is _compare's to report)
            checked.problems += labelled.problems(card, version, installed(), primary, outcome)
    return dict(sorted(answers.items(), key=lambda kv: versions.key(kv[0])))


def run_there(cards: list[Card], jobs: Mapping[str, Job], version: str) -> list[Card]:
    """The cards the matrix runs on `version` (of those it is given): in their range, with a job, and
    not judged on one version alone (judged.py)."""
    return [c for c in cards if not c.judged_on and c.id in jobs and versions.in_range(version, c.torch)]


def ask_early(options: Options, matrix: tuple[str, ...]) -> None:
    """Start asking the package index for torch's releases, beside the run, when `check` will: a version
    of the matrix is not provisioned (changed.unreleased)."""
    if not options.torch and any(_python_for(v) is None for v in versioned.others(matrix)):
        changed.ask_early()


def ahead(
    options: Options,
    cards: list[Card],
    jobs: Mapping[str, Job],
    parts: Parts,
    cache: Cache,
    project_timeout: float,
    pools: Mapping[str, Pool],
    stopping: Callable[[], bool],
    held: contextlib.ExitStack,
    matrix: tuple[str, ...] = (),
) -> dict[str, versioned.Ahead]:
    """Each early pool's jobs started now (versioned.Ahead), beside the installed torch's run: those of
    every card that `check` runs there should it pass. `held` cancels each when it closes. The package
    index is asked for the releases of the `matrix` too, should `check` need them (ask_early)."""
    ask_early(options, matrix)
    started = {}
    for version, pool in pools.items():
        if (python := _python_for(version)) is not None:
            work = work_of(run_there(cards, jobs, version), jobs, parts)
            started[version] = versioned.Ahead(options, python, work, cache, project_timeout, pool, stopping)
            held.callback(started[version].cancel)
    return started


def work_of(cards: list[Card], jobs: Mapping[str, Job], parts: Parts) -> dict[str, tuple[Card, Job]]:
    """What running `cards` on a version takes, by label: each card's job and its further jobs."""
    work = {c.id: (c, jobs[c.id]) for c in cards}
    work.update({part_label(c.id, n): (c, j) for c in cards for n, j in parts.get(c.id, {}).items()})
    return work


def part_label(card_id: str, name: str) -> str:
    return f"{card_id}\0{name}"


def with_parts(
    card: Card, job: Job, parts: Mapping[str, Job], outcomes: Mapping[str, tuple[str, Outcome]]
) -> tuple[list[str], Outcome] | None:
    """The card's outcome on a version with its further jobs' (as the plan's outcome_of makes it) and the
    keys of them all; None when one is missing."""
    if card.id not in outcomes or any(part_label(card.id, n) not in outcomes for n in parts):
        return None
    key, outcome = outcomes[card.id]
    if outcome.raised is not None:
        outcome = replace(outcome, placed=place(outcome.raised, job))
    found = {name: outcomes[part_label(card.id, name)] for name in parts}
    if found:
        outcome = replace(outcome, parts={name: o for name, (_, o) in found.items()})
    return [key, *(k for k, _ in found.values())], outcome


def keep(cache: Cache, keys: list[str], outcome: Outcome) -> None:
    """Cache a version's run (the card's job and further jobs) once it gave an answer: a failure there (a
    raise, a timeout) never is."""
    done = [(keys[0], replace(outcome, parts=None, placed=None))]
    done += [(k, part) for k, part in zip(keys[1:], (outcome.parts or {}).values(), strict=True)]
    for key, one in done:
        if not one.cached:
            cache.put(key, one)


def _answer(card: Card, outcome: Outcome | None) -> str:
    return kinds.get(card.kind).torch_answer(card, outcome) if outcome is not None else ""


def _answered(
    card: Card, version: str, outcome: Outcome, primary: Outcome | None, job: Job, checked: Checked
) -> str | None:
    """A version's answer from its run of the card; None (and the problem noted) when the card fails
    there, or raises where the installed torch does not: what it uses is missing or works otherwise."""
    raised = outcome.value is not None and outcome.value["type"] == "exception"
    expected = primary is not None and primary.value is not None and primary.value["type"] == "exception"
    if outcome.ok and (expected or not raised):
        return _answer(card, outcome)
    if not outcome.ok:
        shown = "\n".join((outcome.error or "execution failed").strip().splitlines()[-3:])
    elif outcome.raised is not None:
        shown = "\n".join(place(outcome.raised, job).traceback.splitlines()[-3:])
    else:
        shown = _answer(card, outcome)
    message = (
        f"fails on torch {version} (it runs on torch {installed()}); a card about the versions that have "
        f'what it uses says so: `torch: ">{version}"`, or a range that leaves {version} out:\n{shown}'
    )
    checked.problems.append(Problem(card.at(kinds.get(card.kind).run_field), indent(message)))
    return None


def _recalled(
    version: str,
    ran: list[Card],
    jobs: Mapping[str, Job],
    recorded: dict[str, dict[str, str]],
    answers: dict[str, dict[str, str]],
    checked: Checked,
) -> None:
    """The lock's answers for a version not provisioned, for the cards whose job is the one recorded."""
    unknown = 0
    for card in ran:
        entry = recorded.get(card.id)
        if entry is not None and entry["job"] == content(jobs[card.id]):
            answers[card.id][version] = entry["answer"]
        else:
            unknown += 1
    checked.recalled[version] = len(ran) - unknown
    missing = f" ({unknown} of {len(ran)} cards have none recorded for what they run now)" if unknown else ""
    checked.notes[version] = recorded_note(version, missing)


def _compare(card: Card, known: TorchAnswers, checked: Checked) -> None:
    """A card whose answer differs across the matrix must declare it; one that declares it must differ."""
    shown = list(known.answers.items())
    newest_version, newest = shown[-1]
    if not card.varies_with_torch:
        for version, answer in shown[:-1]:
            if answer != newest:
                message = (
                    f"answers `{answer}` on torch {version} but `{newest}` on torch {newest_version}; if the "
                    "change is what the card teaches, declare it: `varies_with_torch: true`; if the card is "
                    f'about one side, give the versions it is about: `torch: ">{version}"`, say'
                )
                where = "answer" if "answer" in card.fields else kinds.get(card.kind).run_field
                checked.problems.append(Problem(card.at(where), message))
                return
        return
    if known.differ:
        return
    on = ", ".join(v for v, _ in shown)
    written = [name for text in schema.text_fields(card).values() for name in placeholders.names(text)]
    cites = [name for name in placeholders.TORCH_CHANGE if name in written]
    if cites:  # its text would say a change happened that nothing computed
        message = (
            f"cites {{{{{cites[0]}}}}}, but its answer is `{newest}` on every torch version known "
            f"(torch {on}); `quizgen build --matrix` runs every version of the matrix"
        )
        checked.problems.append(Problem(card.at("explain"), message))
    elif len(shown) > 1:
        message = f"varies_with_torch, but it answers `{newest}` on every torch version (torch {on})"
        checked.warnings.append(Problem(card.at("varies_with_torch"), message))


def _python_for(version: str) -> Path | None:
    from quizgen.torch_versions import environments

    return environments.python_for(version)
