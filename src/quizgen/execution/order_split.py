"""One big order search split across the pool's workers, and its parts' results joined (parent side).

A search with many candidates becomes `n` part jobs, part k searching the candidates that begin with
its share of their first steps (Orders.share: the same in every worker); each part returns the
accepted orders it found. Their union, sorted, is exactly what one search finds: the search accepts a
candidate by running it, whichever part runs it. A last job is given that union and does the rest
(usable distractors, feedback), so the result is the unsplit search's. Every part first runs the order
as written, as the whole search does, so a card's mistake is reported as it would be unsplit.
Pure: no torch (the parent only estimates how many candidates there are).
"""

from __future__ import annotations

import ast
import builtins
from collections.abc import Iterable

from quizgen.execution.order_program import Orders, program_of
from quizgen.execution.order_search import dependencies, readable, relax
from quizgen.execution.protocol import Job, Result, SearchJob

SPLIT_FROM = 2000  # candidates from which a search is split (below, a part's start-up costs more)
_PART = "#part"


def candidates(job: SearchJob, limit: int) -> int:
    """How many candidates the search runs, about (the parent cannot run setup to see what it binds:
    names the setup binds at its top level count as bound). 0 when the lines do not parse."""
    try:
        program = program_of(job)
        predefined = set(dir(builtins))
        for setup in job["setup"]:
            predefined |= {n.id for n in ast.walk(ast.parse(setup["code"])) if isinstance(n, ast.Name)}
        lines = range(program.lines)
        before = relax(dependencies(readable(program), predefined), lines)
        return Orders(program, lines, before).count(limit)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return 0


class Split:
    """The jobs to send for `work` and, as results come in, the results of `work`'s keys."""

    def __init__(self, work: dict[str, Job], workers: int) -> None:
        self.first: dict[str, Job] = {}
        self.parts: dict[str, list[Result | None]] = {}  # a split key -> its parts' results so far
        self.jobs: dict[str, SearchJob] = {}
        for key, job in work.items():
            if workers < 2 or job["type"] != "search" or candidates(job, SPLIT_FROM) < SPLIT_FROM:
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
        return [], {key: {**self.jobs[key], "accepted": accepted}}

    def _joined(self, key: str, result: Result) -> Result:
        """The result of a split search: the last job's (or a failed part's), the parts' time added."""
        parts = [r for r in self.parts.pop(key, []) if r is not None]
        joined: Result = {**result, "seconds": result.get("seconds", 0.0) + _seconds(parts)}
        contaminated = sorted({c for r in [result, *parts] for c in r.get("contaminated", [])})
        if contaminated:
            joined["contaminated"] = contaminated
        return joined


def _seconds(results: Iterable[Result]) -> float:
    return sum(r.get("seconds", 0.0) for r in results)
