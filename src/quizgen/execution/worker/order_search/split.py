"""One big order search split across the pool's workers, and its parts' results joined (parent side).

A search with many candidates becomes `n` part jobs, part k searching the candidates that begin with
its share of their first steps (Orders.share: the same in every worker); each part returns the
accepted orders it found. An indented search is split by its spaces instead (levels.share: the lines'
own and each distractor's, inserted or in place of a line), each part returning what it accepted and
the first arrangement that passes in each of its distractor spaces. Their union, sorted, is exactly
what one search finds: the search accepts a candidate by running it, whichever part runs it. A last
job is given that union and does the rest (usable distractors, feedback), so the result is the
unsplit search's. Every part first runs the order as written, as the whole search does, so a card's
mistake is reported as it would be unsplit.
A search is split only where that saves time (worth_splitting: an estimate of how many states each
part meets, since a part cannot merge its states with another's). Pure: no torch.
"""

from __future__ import annotations

import ast
import builtins
from collections.abc import Iterable

from quizgen.execution.protocol import Job, Result, SearchJob
from quizgen.execution.worker.order_search.candidates import dependencies, readable, relax
from quizgen.execution.worker.order_search.names import identifiers_of
from quizgen.execution.worker.order_search.program import Chunk, Orders, Share, program_of

SPLIT_FROM = 2000  # candidates from which a search is split (below, a part's start-up costs more)
# with indentation, counted with each line at every level (the shipped loop, 8,220 here: 3.8 -> 2.6 s in
# a warm pool; the token window, 2,376: 1.67 -> 1.63 s, its spaces share more than its parts gain)
SPLIT_INDENTED_FROM = 5000
MERGED = 0.7  # a split whose busiest part meets more than this share of the whole's states is not worth it
_STATES = 5_000  # counting states stops here: a search that meets so many has few merges to lose
_PART = "#part"


def _orders(job: SearchJob, levels: bool = False) -> Orders | None:
    """The search's candidates, about (the parent cannot run setup to see what it binds: names the
    setup binds at its top level count as bound), with `levels` each block at every level. None when
    the lines do not parse."""
    try:
        program = program_of(job)
        predefined = set(dir(builtins))
        for setup in job["setup"]:
            predefined |= {n.id for n in ast.walk(ast.parse(setup["code"])) if isinstance(n, ast.Name)}
        lines = range(program.lines)
        return Orders(program, lines, relax(dependencies(readable(program), predefined), lines), levels)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def candidates(job: SearchJob, limit: int) -> int:
    """How many candidates the search runs, about (counting stops past `limit`). 0 when the lines do
    not parse."""
    orders = _orders(job)
    try:
        return 0 if orders is None else orders.count(limit)
    except RecursionError:
        return 0


def worth_splitting(job: SearchJob, workers: int, idle: bool = False) -> bool:
    """Whether splitting the search across `workers` saves time. A part cannot merge its states with
    another's, so a split pays only where the parts meet different states (on a busy machine, or in a
    build whose other workers have cards to run, the parts' sum counts too). Not with `repeat` above 1:
    every later pass starts from the states the first pass ends in, which all parts tend to reach
    (an accepted order ends where the check wants), so each part would run nearly all of them. Else
    by an estimate of the states each part meets, blocks that share no name taken to commute.
    With indentation, only where workers would otherwise be `idle` (fewer jobs than workers: an
    author's edited card): the parts search the lines' and the distractors' spaces apart, losing the
    runs they share for the time of the largest share (the shipped loop: 4% more CPU in place; in a
    one-shot check ~30% more, each part compiling its statements anew in a process of its own)."""
    if workers < 2 or job["type"] != "search" or job["repeat"] > 1:
        return False
    orders = _orders(job)
    if orders is not None and orders.program.indented:
        if not (idle and job["distractors"]):
            return False
        everywhere = _orders(job, levels=True)
        return everywhere is not None and _count(everywhere, SPLIT_INDENTED_FROM) >= SPLIT_INDENTED_FROM
    if orders is None or _count(orders, SPLIT_FROM) < SPLIT_FROM:
        return False
    whole = _states(orders, None)
    if whole >= _STATES:
        return True
    busiest = max(_states(orders, orders.share(k, workers)) for k in range(workers))
    return busiest <= MERGED * whole


def _count(orders: Orders, limit: int) -> int:
    """The candidates, counted up to `limit` (0 where the count cannot be made)."""
    try:
        return orders.count(limit)
    except RecursionError:
        return 0


def _names(code: str) -> set[str]:
    """The variables a block names (a method call changes what it is called on: `a.add_(1)` names `a`)."""
    try:
        found = {n.id for n in ast.walk(ast.parse(code)) if isinstance(n, ast.Name)}
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        found = identifiers_of(code)
    return found - set(dir(builtins))


def _states(orders: Orders, share: Share | None, limit: int = _STATES) -> int:
    """How many distinct states the search of the candidates in `share` (None: all) meets if blocks
    that have no name in common commute and nothing else merges (counting stops at `limit`): a
    prefix's state is the blocks placed and the order of each two of them that share a name."""
    words = {b: _names(orders.program.codes[b]) for b in orders.blocks}
    seen: set[tuple[int, frozenset[tuple[int, int]]]] = set()
    stack: list[tuple[tuple[Chunk, ...], int, frozenset[tuple[int, int]]]] = [((), 0, frozenset())]
    while stack and len(seen) < limit:
        prefix, placed, pairs = stack.pop()
        for chunk, after in orders.next_chunks(placed):
            steps = (*prefix, chunk) if share is not None and len(prefix) < share.depth else prefix
            if share is not None and not share.allows((*prefix, chunk)):
                continue
            earlier = [a for a in orders.blocks if placed >> a & 1]
            ordered = pairs | {(a, b) for b in chunk for a in earlier if words[a] & words[b]}
            if (after, ordered) not in seen:
                seen.add((after, ordered))
                stack.append((steps, after, ordered))
    return len(seen)


def states(orders: Orders, limit: int) -> int:
    """How many distinct states the whole search meets in its first pass, about (_states; counting
    stops at `limit`)."""
    return _states(orders, None, limit)


class Split:
    """The jobs to send for `work` and, as results come in, the results of `work`'s keys."""

    def __init__(self, work: dict[str, Job], workers: int) -> None:
        self.first: dict[str, Job] = {}
        self.parts: dict[str, list[Result | None]] = {}  # a split key -> its parts' results so far
        self.jobs: dict[str, SearchJob] = {}
        idle = len(work) < workers
        for key, job in work.items():
            if job["type"] != "search" or not worth_splitting(job, workers, idle):
                self.first[key] = job
                continue
            self.jobs[key] = job
            self.parts[key] = [None] * workers
            for k in range(workers):
                part: SearchJob = {**job, "part": [k, workers]}
                self.first[f"{key}{_PART}{k}"] = part

    def receive(self, name: str, result: Result) -> tuple[list[tuple[str, Result]], dict[str, Job]]:
        """What a result means: results of work's keys to yield, and further jobs to send."""
        if name in self.jobs:  # the last job of a split search
            return [(name, self._joined(name, result))], {}
        key, _, part = name.rpartition(_PART)
        if key not in self.parts:
            return [(name, result)], {}
        results = self.parts[key]
        results[int(part)] = result
        if any(r is None for r in results):
            return [], {}
        done = [r for r in results if r is not None]
        failed = next((r for r in done if not r["ok"]), None)
        if failed is not None:  # what the unsplit search would have met first: the lowest part's
            return [(key, self._joined(key, failed))], {}
        accepted = sorted(order for r in done for order in r.get("orders", []))
        last: SearchJob = {**self.jobs[key], "accepted": accepted}
        if any("found" in r for r in done):  # indented: each part's spaces in turn, as the spaces are
            last["found"] = [hit for r in done for hit in r.get("found", [])]
        return [], {key: last}

    def _joined(self, key: str, result: Result) -> Result:
        """The result of a split search: the last job's (or a failed part's), the parts' time added."""
        parts = [r for r in self.parts.pop(key, []) if r is not None]
        joined: Result = {**result, "seconds": result.get("seconds", 0.0) + _seconds(parts)}
        return joined


def _seconds(results: Iterable[Result]) -> float:
    return sum(r.get("seconds", 0.0) for r in results)
