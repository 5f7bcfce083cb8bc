"""Jobs run under another torch version of the project's matrix: from the cache where they ran before,
else on a pool of that version's environment, one started early where the build has one (`start_early`).
The matrix, its typed ranges' bounds and `torch bisect` run there."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from quizgen.cards.model import Card
from quizgen.errors import InternalError, QuizgenError
from quizgen.execution.cache import Cache, job_key
from quizgen.execution.protocol import Job, Outcome
from quizgen.project import settings
from quizgen.torch_versions import environments, versions
from quizgen.torch_versions.installed import of as torch_of
from quizgen.torch_versions.installed import release as installed
from quizgen.torch_versions.running import run_under

if TYPE_CHECKING:
    from quizgen.execution.pool import Pool


class RunOptions(Protocol):
    """What running reads of a run's options (pipeline.Options)."""

    jobs: int
    memory: int
    sandbox: str
    timeout: float | None
    progress: Callable[[int, int], None] | None


class Tally(Protocol):
    """What a run on a version counts (matrix.Checked): its jobs executed and from the cache, and how long
    each card's jobs ran there (--timings)."""

    ran: dict[str, tuple[int, int]]  # version -> (executed, from cache)
    timed: dict[str, float]  # "card (torch V)" -> seconds


class EarlyOptions(RunOptions, Protocol):
    """What starting pools early reads of a build's options (pipeline.Options)."""

    cards_dir: Path
    max_timeout: float
    torch: str | None  # the whole run is under another torch (`check --torch`)


def others(matrix: tuple[str, ...]) -> list[str]:
    """The matrix's versions besides the installed one, oldest first."""
    return [v for v in versions.ordered(matrix) if not versions.same(v, installed())]


def start_early(options: EarlyOptions, warm: bool, held: contextlib.ExitStack) -> dict[str, Pool]:
    """Pools for the other versions of the project's torch matrix, by version, started with the
    installed torch's early one (pipeline, `warm` as it is): each imports its torch on a core that import
    leaves idle, not after the installed torch's jobs (the shipped deck's cold build waited 1.1 s for
    torch 1.13.1's pool there, every core but one idle). None where the settings do not read (the check
    reports them) or a version is not provisioned. `held` stops each pool (Pool.stop) and then frees its
    environment, held in use meanwhile, when its starter closes it."""
    if options.torch:  # (the whole run is under another torch: no matrix around it)
        return {}
    try:
        project = settings.load(options.cards_dir, float("inf") if options.timeout else options.max_timeout)
    except QuizgenError:
        return {}
    from quizgen.execution import pool

    started: dict[str, Pool] = {}
    for version in others(project.torch):
        try:
            if (python := environments.python_for(version)) is None:
                continue
            held.enter_context(environments.using(python))
        except QuizgenError:  # (removed meanwhile: the matrix says so in its own words)
            continue
        started[version] = pool.Pool(options.jobs, options.memory, warm, options.sandbox, python)
        held.callback(started[version].stop)
    return started


def run_on(
    options: RunOptions,
    version: str,
    python: Path,
    work: dict[str, tuple[Card, Job]],
    cache: Cache,
    project_timeout: float,
    checked: Tally | None = None,
    early: Pool | None = None,
) -> dict[str, tuple[str, Outcome]]:
    """Each job run under another torch (by its label in `work`: its key and outcome), from the cache
    where it ran before; what ran is not cached here (`check` keeps what a card is true with). `early`: a
    pool already started under `python`, used here if there is work (its starter closes it)."""
    from quizgen.execution.pool import Pool

    cards: dict[str, list[Card]] = {}
    labels: dict[str, list[str]] = {}
    runs = torch_of(python)  # results are cached by the torch that gave them
    keyed: dict[str, Job] = {}
    for label, (card, job) in work.items():
        key = job_key(job, runs)
        cards.setdefault(key, []).append(card)
        labels.setdefault(key, []).append(label)
        keyed[key] = job
    found = cache.get_many(keyed)
    todo = {key: job for key, job in keyed.items() if key not in found}
    if checked is not None:
        checked.ran[version] = (len(todo), len(found))
    if todo:
        workers = max(1, min(options.jobs, len(todo)))
        pool = early or Pool(workers, options.memory, len(todo) > workers, options.sandbox, python=python)
        done = 0

        def shown(key: str, outcome: Outcome) -> bool:
            nonlocal done
            done += 1
            if options.progress is not None:
                options.progress(done, len(todo))
            return True

        try:
            ran = run_under(options, todo, cards, python, project_timeout, shown, pool=pool, jobs=workers)
        finally:
            stderr = pool.stderr_tail()
            if early is None:
                pool.close()
        for key, outcome in ran.items():
            if outcome.internal is not None:
                where = f"while running {cards[key][0].location} on torch {version}"
                raise InternalError(where, outcome.internal, stderr)
            found[key] = outcome
            timed = checked.timed if checked is not None else {}  # (--timings)
            for where in {f"{card.location} (torch {version})" for card in cards[key]}:
                timed[where] = timed.get(where, 0.0) + outcome.seconds
    return {label: (key, found[key]) for key, held in labels.items() for label in held if key in found}
