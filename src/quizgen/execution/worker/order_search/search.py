"""Running an order puzzle's search inside a worker: the fast and the plain search, usable distractors,
feedback (the steps themselves: order.steps). An indented puzzle is searched with every block at every
level a learner may give it (order.levels).

The fast search (order.tree) answers where it can vouch for its answer, the plain one (every candidate
from a fresh namespace) elsewhere; both restore torch's settings and generators before each start.
"""

from __future__ import annotations

import contextlib
import itertools
import sys
import time
from collections.abc import Callable, Iterator
from types import CodeType

from quizgen.constants import MAX_CANDIDATES
from quizgen.execution import progress
from quizgen.execution.protocol import Result, SearchJob, UsableDistractor
from quizgen.execution.worker import cite
from quizgen.execution.worker.order_search import feedback as order_feedback
from quizgen.execution.worker.order_search import levels as order_levels
from quizgen.execution.worker.order_search import split as order_split
from quizgen.execution.worker.order_search import torch_state as order_settings
from quizgen.execution.worker.order_search.budget import PLAIN_SECONDS, Budget, young_collections_only
from quizgen.execution.worker.order_search.candidates import (
    dependencies,
    distractor_variants,
    readable,
    relax,
)
from quizgen.execution.worker.order_search.frozen import Thawed
from quizgen.execution.worker.order_search.making import Plain as _Plain
from quizgen.execution.worker.order_search.making import make_tree as _tree
from quizgen.execution.worker.order_search.program import Chunk, Orders, Share, flatten
from quizgen.execution.worker.order_search.program_state import Opaque
from quizgen.execution.worker.order_search.steps import Runs
from quizgen.execution.worker.order_search.threads import Thread, firsts
from quizgen.execution.worker.order_search.torch_state import Settings
from quizgen.execution.worker.order_search.tree import Tree
from quizgen.execution.worker.snippets import (
    SnippetFailed,
    format_exception,
    fresh_namespace,
)

USABLE_BATCH = 4096  # ways to use a distractor searched at once
NODE_COST = 70e-6  # CPU seconds the fast search spends on each state it meets, besides running steps
SMALL = 0.25  # CPU seconds under which the plain search is run: the fast one costs more to start
# What the lines' space costs in a split indented search, against a distractor's space each (the shipped
# loop and token window: 0.7 s against 0.3 s; a space's candidates say little: 64,084 inserted, 973 in
# place of a line, alike in time)
LINES_WEIGHT = 2


class _Discard:
    """Where the search's prints go: only the order as written has its output kept."""

    def write(self, text: str) -> int:
        return len(text)

    def flush(self) -> None:
        pass


@young_collections_only()  # (the whole search: counting its candidates makes most of its objects)
def search(job: SearchJob, setups: list[CodeType], paths: set[str], fast: bool = True) -> Result:
    """Every accepted order of the job's lines, the distractors that can be used, and what wrong orders
    near the one as written do (in a worker). `fast=False` runs every candidate from scratch."""
    start = order_settings.settings()
    runs = Runs(job, setups, paths)
    program = runs.program
    lines = list(range(program.lines))
    started = time.process_time()
    failure, given_ns, _ = runs.attempt(program.chunks(lines))
    runs.one = time.process_time() - started  # (with each step's compiling: more than a later run)
    if failure is not None:
        raise SnippetFailed("the order as written fails the check:\n" + format_exception(failure, paths))
    cited = cite.evaluate(job.get("cite", {}), given_ns, paths)
    predefined = set(fresh_namespace(setups, paths)) | set(dir(__builtins__))
    before = relax(dependencies(readable(program), predefined), lines)
    orders = Orders(program, lines, before)  # each block at its written level
    tried = orders.count(MAX_CANDIDATES)
    if tried > MAX_CANDIDATES:
        raise SnippetFailed(
            f"more than {MAX_CANDIDATES} candidate orders: split the puzzle or make "
            "the lines depend on each other"
        )
    if program.indented:  # every level a learner may give each block
        orders = order_levels.space(program, lines, before)
    runs.budget = Budget(order_levels.counted(orders) if program.indented else tried)
    part = job.get("part")
    share = None if part is None or program.indented else orders.share(*part)
    saved = sys.stdout, sys.stderr
    sys.stdout = sys.stderr = _Discard()
    try:
        order_settings.restore_settings(start)  # what one candidate costs, its steps compiled
        started = time.process_time()
        runs.attempt(program.chunks(lines))
        runs.one = min(runs.one, time.process_time() - started)
        if program.indented:
            accepted, found, usable = _indented(runs, orders, before, start, fast)
            if part is not None:  # one part of a split search: what its spaces found is all it says
                return {"ok": True, "output": "", "orders": accepted, "found": found, "tried": tried}
        else:
            accepted = job["accepted"] if "accepted" in job else _accepted(runs, orders, start, fast, share)
            if share is not None:  # one part of a split search: its accepted orders are all it finds
                return {"ok": True, "output": "", "orders": accepted, "tried": tried}
            runs.phase = 1  # (the distractors now: execution.progress.PHASES)
            usable = _usable(runs, accepted, start, fast)
        order_settings.restore_settings(start)
        as_written = [order for order in accepted if order_levels.written(program, order)]
        feedback = order_feedback.nearby(runs, set(map(tuple, as_written)))
    finally:
        sys.stdout, sys.stderr = saved
    result: Result = {"ok": True, "output": "", "orders": as_written, "usable_distractors": usable}
    placements = order_levels.placements(program, accepted)
    if placements:
        result["placements"] = placements
    result["tried"], result["feedback"] = tried, feedback
    if cited:
        result["cited"] = cited
    return result


def _fast(make: Callable[[bool], Tree], threads: list[Thread]) -> tuple[Tree, list[Thread]]:
    """The fast search of a tree `make` builds, freezing what no step changes; when a step did change
    it, the search starts again from setup, freezing nothing (order.frozen). _Plain as _explore."""
    tree = make(True)
    try:
        return tree, _explore(tree, threads)
    except Thawed:
        tree = make(False)
        return tree, _explore(tree, threads)


def _explore(tree: Tree, threads: list[Thread]) -> list[Thread]:
    """Run the fast search; _Plain when it cannot vouch for its answer."""
    generators = order_settings.generators_state()
    try:
        passed = tree.explore(threads)
    except Opaque:
        raise _Plain from None
    if tree.shared.changed() or (not tree.generators and order_settings.generators_state() != generators):
        raise _Plain  # a step changed what all branches share
    return passed


def _accepted(
    runs: Runs,
    orders: Orders,
    start: Settings,
    fast: bool,
    share: Share | None = None,
    first: bool = False,
) -> list[list[int]]:
    """The orders that pass the check (those of one part of a split search), sorted; with `first`, the
    first of them alone (none: none passes), however many pass (both searches give the same one)."""
    count = orders.count(MAX_CANDIDATES)
    if fast and not _small(runs, count) and not _unmerged(runs, orders):
        with contextlib.suppress(_Plain):

            def make(freeze: bool) -> Tree:
                tree = _tree(runs, start, [orders], share, freeze)
                tree.phase, tree.total = runs.phase, count
                tree.cap_passed = not first
                return tree

            tree, passed = _fast(make, [Thread((), 0, False)])
            if first:  # (each thread's first arrangement: the first of all is among them)
                return sorted(flatten(tree.spaces[0].first(t.chunks)) for t in passed)[:1]
            return sorted(flatten(c) for t in passed for c in tree.spaces[0].arrangements(t.chunks))
    estimate = count  # what the plain search will run
    if runs.program.indented and runs.one * count > PLAIN_SECONDS:  # (most are run as another, or not at all)
        estimate = len({runs.program_of(chunks) for chunks in _runnable(runs, orders, share)})
    runs.budget.plain(runs.one, estimate)
    found = []
    for decided, chunks in enumerate(_runnable(runs, orders, share)):
        progress.report(runs.phase, decided, count)
        if runs.passes(chunks, start):
            found.append(flatten(chunks))
            if not first:
                runs.budget.accepted(len(found))
    return sorted(found)[: 1 if first else None]


def _runnable(runs: Runs, orders: Orders, share: Share | None) -> Iterator[tuple[Chunk, ...]]:
    """The candidates (of the share) the plain search runs: with indentation, those whose every step
    compiles (a step that does not fails from any state)."""
    indented = runs.program.indented
    for chunks in orders.all():
        if share is not None and not share.allows(chunks):
            continue
        runs.budget.tick()
        if not (indented and any(runs.broken(step) for step in chunks)):
            yield chunks


def _usable(runs: Runs, accepted: list[list[int]], start: Settings, fast: bool) -> list[UsableDistractor]:
    """For each distractor that can be used, the first way to use it that passes (inserted anywhere
    into an accepted order, or put in place of one of its lines). The ways are run a batch at a time,
    so that what is held stays small whatever the number of accepted orders."""
    program = runs.program
    first: dict[int, list[int]] = {}
    everything = Orders(program, range(program.blocks), {}, levels=True)
    for d in range(program.lines, program.blocks):
        at = [b for b in range(len(program.codes)) if program.origin(b) == d]  # at each of its levels
        variants = (
            program.chunks(v) for order in accepted for b in at for v in distractor_variants(order, b)
        )
        while d not in first:
            batch = list(itertools.islice(variants, USABLE_BATCH))
            if not batch:
                break
            found = _passing(runs, batch, start, fast, everything, first=True)
            if found:
                first[d] = found[0]
    return order_levels.usable_list(program, first)


def _small(runs: Runs, candidates: int) -> bool:
    """Whether running every candidate from the start costs so little that the fast search costs more:
    what it spends to start (its code read, setup run again, the start walked and copied) and to copy
    and compare states (each a handful of steps of a training step) is not won back by a few merges.
    Then the plain search is the faster one, and the one run."""
    return candidates * runs.one < max(SMALL, 2 * runs.start_cost)


def _unmerged(runs: Runs, orders: Orders) -> bool:
    """Whether the fast search would meet so many states (its lines hardly commute: 8 appends to one
    list) that what it spends on each (NODE_COST) passes what running every candidate costs."""
    if runs.program.indented:
        return False  # (no estimate of what commutes: a statement holds several blocks)
    even = int(orders.count(MAX_CANDIDATES) * runs.one / NODE_COST)
    return order_split.states(orders, even + 1) > even


def _indented(
    runs: Runs, orders: Orders, before: dict[int, set[int]], start: Settings, fast: bool
) -> tuple[list[list[int]], list[list[int] | None], list[UsableDistractor]]:
    """With indentation: the accepted arrangements, the first that passes in each distractor space
    (None: none passes) and the usable distractors. A part of a split search searches its share of the
    spaces, the lines' own first (levels.share: its usable distractors are the last job's to tell); the
    last job is given what the parts found."""
    job, program = runs.job, runs.program
    spaces, owners, too_big = order_levels.searchable(program, before)
    if "found" in job:
        return job["accepted"], job["found"], order_levels.pick(program, job["found"], owners, too_big)
    lines = True
    if "part" in job:
        mine = order_levels.share([LINES_WEIGHT] + [1] * len(spaces), *job["part"])
        lines = 0 in mine
        spaces, owners = [spaces[k - 1] for k in mine if k], [owners[k - 1] for k in mine if k]
    together = _together(runs, orders, spaces, start) if lines and fast else None
    if together is not None:
        accepted, found = together
    else:
        accepted = _accepted(runs, orders, start, fast) if lines else []
        runs.phase = 1  # (the distractors now: execution.progress.PHASES)
        found = _first_of_each(runs, spaces, owners, start, fast)
    usable = [] if "part" in job else order_levels.pick(program, found, owners, too_big)
    return accepted, found, usable


def _together(
    runs: Runs, orders: Orders, spaces: list[Orders], start: Settings
) -> tuple[list[list[int]], list[list[int] | None]] | None:
    """With indentation: the accepted orders and the first passing arrangement of each distractor space
    from one fast search of the lines' space and those: they share every run they have in common (the
    steps of a distractor space that do not hold the distractor are the lines' steps). None where the
    fast search is not the one to run (then each is searched on its own, as without it)."""
    total = sum(space.count(MAX_CANDIDATES) for space in [orders, *spaces])
    if _small(runs, total):
        return None

    def make(freeze: bool) -> Tree:
        tree = _tree(runs, start, [orders, *spaces], freeze=freeze)
        tree.phase, tree.total, tree.cap_passed = runs.phase, total, True  # (the lines' space: Tree._passed)
        return tree

    try:
        tree, passed = _fast(make, [Thread((), 0, False, space=k) for k in range(len(spaces) + 1)])
    except _Plain:
        return None
    lines = tree.spaces[0]
    accepted = sorted(flatten(c) for t in passed if t.space == 0 for c in lines.arrangements(t.chunks))
    return accepted, firsts(tree.spaces, passed)[1:]


def _first_of_each(
    runs: Runs, spaces: list[Orders], owners: list[int], start: Settings, fast: bool
) -> list[list[int] | None]:
    """The first passing candidate of each space (None: none passes), the spaces searched by one fast
    search where it can vouch for its answer: spaces that share prefixes share their runs. The plain
    search stops searching a distractor's spaces at the first that has one."""
    counts = [orders.count(MAX_CANDIDATES) for orders in spaces]
    if fast and spaces and not _small(runs, sum(counts)):
        with contextlib.suppress(_Plain):

            def make(freeze: bool) -> Tree:
                tree = _tree(runs, start, spaces, freeze=freeze)
                tree.phase, tree.total = runs.phase, sum(counts)
                return tree

            threads = [Thread((), 0, False, space=k) for k in range(len(spaces))]
            tree, passed = _fast(make, threads)
            return firsts(tree.spaces, passed)
    found: list[list[int] | None] = []
    for orders, owner in zip(spaces, owners, strict=True):
        used = any(hit is not None and o == owner for hit, o in zip(found, owners, strict=False))
        hit = None if used else _accepted(runs, orders, start, fast=False, first=True)
        found.append(hit[0] if hit else None)
    return found


def _passing(
    runs: Runs, batch: list[tuple[Chunk, ...]], start: Settings, fast: bool, everything: Orders, first: bool
) -> list[list[int]]:
    """The candidates of the batch that pass the check, in the batch's order (with `first`, only the
    first of them)."""
    program = runs.program
    if program.indented:  # a step that does not compile fails from any state: no need to run up to it
        batch = [chunks for chunks in batch if not any(runs.broken(step) for step in chunks)]
    if fast and not _small(runs, len(batch)):
        with contextlib.suppress(_Plain):
            threads = [
                Thread(c, sum(1 << program.origin(b) for b in flatten(c)), True, 0, k)
                for k, c in enumerate(batch)
            ]
            tags = sorted(t.tag for t in _explore(_tree(runs, start, [everything]), threads))
            return [flatten(batch[k]) for k in tags[:1] if first] or [flatten(batch[k]) for k in tags]
    found = []
    for chunks in batch:
        runs.budget.tick()
        if runs.passes(chunks, start):
            found.append(flatten(chunks))
            if first:
                break
    return found
