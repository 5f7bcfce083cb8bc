"""Running jobs under a torch: quizgen's own Python or a provisioned environment's, each job within the
longest timeout its cards allow, the environment held in use meanwhile (`quizgen torch remove` waits).
The one way the pipeline, the matrix and drift run jobs."""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from quizgen.cards.model import Card
from quizgen.execution import timeouts
from quizgen.execution.protocol import Job, Outcome
from quizgen.torch_versions import environments

if TYPE_CHECKING:
    from quizgen.execution.pool import Pool, Running


class RunOptions(Protocol):
    """What running reads of a run's options (pipeline.Options)."""

    jobs: int
    memory: int
    sandbox: str
    timeout: float | None  # the user's --timeout, over every card's own


@runtime_checkable
class Line(Protocol):
    """The progress line (terminal.ProgressLine) as a run uses it beside its counts."""

    def __call__(self, done: int, total: int) -> None: ...
    def watch(self, running: Running, describe: Callable[[str], str]) -> None: ...
    def stop(self) -> None: ...


@contextlib.contextmanager
def naming(
    progress: Callable[[int, int], None] | None, describe: Callable[[str], str]
) -> Iterator[Callable[[Running], None] | None]:
    """The `watch` for run_under that lets a terminal's progress line name the job waited on longest
    (`describe`: a key as the user knows it); None without one. The line is stopped after: no more
    redrawing, and the next output starts on a line of its own."""
    if not isinstance(progress, Line):
        yield None
        return
    try:
        yield partial(progress.watch, describe=describe)
    finally:
        progress.stop()  # (a run stopped early leaves no line redrawn under what follows)


def run_under(
    options: RunOptions,
    work: dict[str, Job],
    cards: Mapping[str, Sequence[Card]],
    python: Path | None,
    project_timeout: float,
    on_result: Callable[[str, Outcome], bool] | None = None,
    *,
    pool: Pool | None = None,
    jobs: int | None = None,
    watch: Callable[[Running], None] | None = None,
) -> dict[str, Outcome]:
    """Run `work` under `python` (None: quizgen's own), each job within its cards' longest timeout."""
    from quizgen.execution.pool import execute  # here: a check with nothing to run needs no pool

    limits = {
        key: max(timeouts.limit(c, options.timeout, project_timeout) for c in cards[key]) for key in work
    }
    held = environments.using(python) if python is not None else contextlib.nullcontext()
    with held:
        return execute(
            work,
            jobs=jobs or options.jobs,
            timeout=options.timeout or project_timeout,
            memory=options.memory,
            on_result=on_result,
            pool=pool,
            sandbox=options.sandbox,
            python=python,
            watch=watch,
            timeouts=limits,
        )


# What a busy or small machine makes a run fail with, whatever the torch: its timeout, the order search's
# time or memory budget, a queue or process group left waiting (distributed cards).
_MACHINE = re.compile(
    r"\(timeout\)|the search would take about|needs more memory than a worker has|queue\.Empty|"
    r"timed out|Timeout",
)


def machine_failure(outcome: Outcome | None) -> bool:
    """Whether a run failed for the machine's sake (time, memory), which says nothing of torch."""
    return outcome is not None and not outcome.ok and bool(_MACHINE.search(outcome.error or ""))
