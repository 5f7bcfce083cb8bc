"""Jobs run under another torch version of the project's matrix: from the cache where they ran before,
else on a pool of that version's environment, one started early where the build has one (`start_early`),
whose jobs start beside the installed torch's run (`Ahead`). The matrix, its typed ranges' bounds and
`torch bisect` run there."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable
from functools import partial
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
from quizgen.torch_versions.running import naming, run_under

if TYPE_CHECKING:
    from quizgen.execution.pool import Pool, Running


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


def start_early(options: EarlyOptions, early: Pool, held: contextlib.ExitStack) -> dict[str, Pool]:
    """Pools for the other versions of the project's torch matrix, by version, started with the
    installed torch's `early` one (pipeline: warm as it is, and sharing its slots, so that all of them
    together run at most `-j` jobs at once): each imports its torch on a core that import leaves idle,
    not after the installed torch's jobs (the shipped deck's cold build waited 1.1 s for torch 1.13.1's
    pool there, every core but one idle). None where the settings do not read (the check reports them)
    or a version is not provisioned. `held` stops each pool (Pool.stop) and then frees its environment,
    held in use meanwhile, when its starter closes it."""
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
        started[version] = pool.Pool(
            options.jobs, options.memory, early.warm, options.sandbox, python, early.slots
        )
        held.callback(started[version].stop)
    return started


class Ahead:
    """A version's jobs run on its early pool in a thread of their own, started beside the installed
    torch's run: those of every card the matrix would run there, before the installed torch says which
    cards pass (a job is the same whatever it says). The shipped deck's cold build had one core idle for
    ~3.5 s while the installed torch's pool warmed up, and ran torch 1.13.1's jobs only after 2.13's.
    The thread stops at its next outcome once `stopping` says the build fails (the matrix then runs what
    it still needs); `cancel` ends it at once (the build's end, whatever happened)."""

    def __init__(
        self,
        options: RunOptions,
        python: Path,
        work: dict[str, tuple[Card, Job]],
        cache: Cache,
        project_timeout: float,
        pool: Pool,
        stopping: Callable[[], bool],
    ) -> None:
        self.pool, self.outcomes = pool, dict[str, Outcome]()
        keyed, cards, _ = _keyed(work, python)
        found = cache.get_many(keyed)
        self.todo = {key: job for key, job in keyed.items() if key not in found}
        self._error: BaseException | None = None
        self._stopped = threading.Event()

        def told(key: str, outcome: Outcome) -> bool:
            self.outcomes[key] = outcome
            return not self._stopped.is_set() and not stopping()

        def run() -> None:
            try:
                run_under(options, self.todo, cards, python, project_timeout, told, pool=pool)
            except BaseException as exc:  # (raised where the matrix waits: `wait`)
                self._error = exc

        self._thread = threading.Thread(target=run, name="quizgen-ahead", daemon=True)
        if self.todo:
            self._thread.start()

    def wait(self, progress: Callable[[int, int], None] | None) -> dict[str, Outcome]:
        """The outcomes it gave, once its thread is over (the progress line told how many meanwhile)."""
        told = -1
        while self._thread.is_alive():
            self._thread.join(0.2)
            if progress is not None and told != (told := len(self.outcomes)):
                progress(told, len(self.todo))
        if self._error is not None:
            raise self._error
        return self.outcomes

    def cancel(self) -> None:
        """End its thread now: the pool is killed (its reader then sees the pool gone)."""
        if self._thread.is_alive():
            self._stopped.set()
            self.pool.kill()
            self._thread.join()


def _keyed(
    work: dict[str, tuple[Card, Job]], python: Path
) -> tuple[dict[str, Job], dict[str, list[Card]], dict[str, list[str]]]:
    """The jobs by their keys under `python`'s torch, the cards and labels of each key."""
    cards: dict[str, list[Card]] = {}
    labels: dict[str, list[str]] = {}
    runs = torch_of(python)  # results are cached by the torch that gave them
    keyed: dict[str, Job] = {}
    for label, (card, job) in work.items():
        key = job_key(job, runs)
        cards.setdefault(key, []).append(card)
        labels.setdefault(key, []).append(label)
        keyed[key] = job
    return keyed, cards, labels


def run_on(
    options: RunOptions,
    version: str,
    python: Path,
    work: dict[str, tuple[Card, Job]],
    cache: Cache,
    project_timeout: float,
    checked: Tally | None = None,
    early: Ahead | None = None,
) -> dict[str, tuple[str, Outcome]]:
    """Each job run under another torch (by its label in `work`: its key and outcome), from the cache
    where it ran before; what ran is not cached here (`check` keeps what a card is true with). `early`:
    what runs ahead on a pool already started under `python`: its outcomes are taken, and the pool runs
    the rest (its starter closes it)."""
    keyed, cards, labels = _keyed(work, python)
    found = cache.get_many(keyed)
    todo = {key: job for key, job in keyed.items() if key not in found}
    if checked is not None:
        checked.ran[version] = (len(todo), len(found))
    # (the progress line names a card waited on long, and the torch: its search says how far)
    with naming(options.progress, partial(_described, cards, version)) as watch:
        ran, stderr = _run(options, python, todo, cards, project_timeout, early, watch)
    for key, outcome in ran.items():
        if outcome.internal is not None:
            where = f"while running {cards[key][0].location} on torch {version}"
            raise InternalError(where, outcome.internal, stderr())
        found[key] = outcome
        timed = checked.timed if checked is not None else {}  # (--timings)
        for where in {f"{card.location} (torch {version})" for card in cards[key]}:
            timed[where] = timed.get(where, 0.0) + outcome.seconds
    return {label: (key, found[key]) for key, held in labels.items() for label in held if key in found}


def _run(
    options: RunOptions,
    python: Path,
    todo: dict[str, Job],
    cards: dict[str, list[Card]],
    project_timeout: float,
    early: Ahead | None,
    watch: Callable[[Running], None] | None,
) -> tuple[dict[str, Outcome], Callable[[], str]]:
    """The outcomes of `todo`: those run ahead, the rest run on the early pool or on one of their own;
    and what tells the tail of that pool's stderr (for a report of quizgen's bug)."""
    from quizgen.execution.pool import Pool

    ran: dict[str, Outcome] = {}
    if early is not None and todo:
        if watch is not None:
            watch(early.pool.running)
        gave = early.wait(options.progress)
        ran = {key: gave[key] for key in todo if key in gave}
    stderr: Callable[[], str] = early.pool.stderr_tail if early is not None else str
    if rest := {key: job for key, job in todo.items() if key not in ran}:
        workers = max(1, min(options.jobs, len(rest)))
        warm = len(rest) > workers
        pool = early.pool if early else Pool(workers, options.memory, warm, options.sandbox, python)
        done = 0

        def shown(key: str, outcome: Outcome) -> bool:
            nonlocal done
            done += 1
            if options.progress is not None:
                options.progress(done, len(rest))
            return True

        try:
            ran |= run_under(
                options, rest, cards, python, project_timeout, shown, pool=pool, jobs=workers, watch=watch
            )
        finally:
            if early is None:
                tail = pool.stderr_tail()  # (read before the pool closes)
                stderr = lambda: tail  # noqa: E731
                pool.close()
    return ran, stderr


def _described(cards: dict[str, list[Card]], version: str, key: str) -> str:
    """A job as the progress line names it: its card and the torch it runs on."""
    found = cards.get(key.partition("#")[0])  # (a split search's part: its whole search's card)
    if not found:
        return f"a card (torch {version})"
    return f"{found[0].id} ({found[0].location.path}:{found[0].location.line}, torch {version})"
