"""What runs ahead on another version's early pool (versioned.Ahead), beside the installed torch's run:
taken by the matrix's run there, stopped once the build fails, cancelled at once at the build's end.
Here under quizgen's own Python (a version is a Python to run under): the 1.13.1 builds are in
test_matrix.py."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from quizgen import kinds
from quizgen.cards import loader
from quizgen.cards.model import Card, Tolerance
from quizgen.execution.cache import Cache, job_key
from quizgen.execution.pool import Pool
from quizgen.execution.protocol import Job
from quizgen.torch_versions import versioned
from quizgen.torch_versions.installed import of as torch_of
from tests.support.progress_line import RecordedLine
from tests.support.projects import write_project

PYTHON = Path(sys.executable)
DECK = """\
deck: Ahead
setup: |
  import time
  import torch
cards:
{cards}
"""
VALUE = """\
  - id: {id}
    kind: value
    ask: "What is the sum?"
    code: |
      {code}
    answer_expr: torch.ones({n}).sum().item()
    answer: {n}.0
"""


class Options:
    jobs = 1
    memory = 2048
    sandbox = "auto"
    timeout = None
    progress = None


def work_of(root: Path, codes: dict[str, str]) -> dict[str, tuple[Card, Job]]:
    """Value cards with these codes by id, loaded from a project in `root`, with their jobs."""
    cards = "".join(VALUE.format(id=i, code=code, n=n) for n, (i, code) in enumerate(codes.items(), 1))
    write_project(root, {"deck.yaml": DECK.format(cards=cards)})
    decks, problems = loader.load(root / "cards", Tolerance(), "choice")
    assert not problems
    work = {}
    for deck, card in loader.iter_cards(decks):
        job = kinds.get(card.kind).job(deck, card)
        assert job is not None
        work[card.id] = (card, job)
    return work


@pytest.fixture
def cache(tmp_path: Path) -> Iterator[Cache]:
    found = Cache.for_output(tmp_path / "build")
    yield found
    found.close()


@pytest.fixture
def pool() -> Iterator[Pool]:
    """A pool of this test's own: some are killed."""
    made = Pool(1)
    yield made
    made.stop()


def key(job: Job) -> str:
    return job_key(job, torch_of(PYTHON))


def test_what_ran_ahead_is_taken_and_only_the_rest_runs_there(
    tmp_path: Path, cache: Cache, pool: Pool
) -> None:
    work = work_of(tmp_path, {"a": "pass", "b": "pass", "c": "pass"})
    ahead = versioned.Ahead(Options(), PYTHON, {k: work[k] for k in "ab"}, cache, 10.0, pool, lambda: False)
    assert set(ahead.wait(None)) == {key(work["a"][1]), key(work["b"][1])}
    runs: list[set[str]] = []
    running = pool.run
    pool.run = lambda jobs, *args: runs.append(set(jobs)) or running(jobs, *args)  # type: ignore[method-assign]
    found = versioned.run_on(Options(), "ahead", PYTHON, {k: work[k] for k in "ac"}, cache, 10.0, None, ahead)
    assert runs == [{key(work["c"][1])}]  # a's outcome was taken; b is not asked for
    values = {label: (outcome.value or {}).get("value") for label, (_, outcome) in found.items()}
    assert values == {"a": 1.0, "c": 3.0}


def test_a_build_that_fails_stops_it_at_its_next_outcome(tmp_path: Path, cache: Cache, pool: Pool) -> None:
    work = work_of(tmp_path, {"a": "pass", "b": "pass", "c": "pass"})
    ahead = versioned.Ahead(Options(), PYTHON, work, cache, 10.0, pool, lambda: True)
    assert len(ahead.wait(None)) == 1  # one worker: the others were queued and are dropped
    found = versioned.run_on(Options(), "ahead", PYTHON, work, cache, 10.0, None, ahead)
    assert sorted(found) == ["a", "b", "c"]  # what the matrix still needs runs on the same pool


def test_cancelling_ends_a_running_job_at_once(tmp_path: Path, cache: Cache, pool: Pool) -> None:
    work = work_of(tmp_path, {"slow": "time.sleep(8)"})
    ahead = versioned.Ahead(Options(), PYTHON, work, cache, 10.0, pool, lambda: False)
    while pool.running.longest() is None:  # (the job has started)
        ahead._thread.join(0.05)
    ahead.cancel()
    assert not ahead._thread.is_alive() and pool.proc.poll() is not None
    assert ahead.outcomes == {}  # not waited for: it would have answered after 8 s


def test_a_pool_that_died_is_raised_where_the_matrix_waits(tmp_path: Path, cache: Cache, pool: Pool) -> None:
    from quizgen.errors import QuizgenError

    work = work_of(tmp_path, {"a": "pass"})
    ahead = versioned.Ahead(Options(), PYTHON, work, cache, 10.0, pool, lambda: False)
    pool.kill()
    with pytest.raises(QuizgenError):
        ahead.wait(None)


def test_nothing_runs_ahead_of_what_the_cache_holds(tmp_path: Path, cache: Cache, pool: Pool) -> None:
    work = work_of(tmp_path, {"a": "pass"})
    first = versioned.Ahead(Options(), PYTHON, work, cache, 10.0, pool, lambda: False)
    cache.put(key(work["a"][1]), first.wait(None)[key(work["a"][1])])
    again = versioned.Ahead(Options(), PYTHON, work, cache, 10.0, pool, lambda: False)
    assert again.todo == {} and not again._thread.is_alive()


@pytest.mark.parametrize("ahead", [True, False])
def test_the_progress_line_names_the_card_a_version_runs(
    tmp_path: Path, cache: Cache, pool: Pool, ahead: bool
) -> None:
    work = work_of(tmp_path, {"a": "pass"})
    line = RecordedLine()
    options = Options()
    options.progress = line  # type: ignore[assignment]
    early = versioned.Ahead(Options(), PYTHON, work, cache, 10.0, pool, lambda: False) if ahead else None
    versioned.run_on(options, "1.13.1", PYTHON, work, cache, 10.0, None, early)
    named = [describe(key(work["a"][1])) for _, describe in line.watched]
    assert named == [f"a ({tmp_path}/cards/deck.yaml:6, torch 1.13.1)"]
    assert line.watched[0][0] is not None and line.counts[-1] == (1, 1) and line.stopped == 1
