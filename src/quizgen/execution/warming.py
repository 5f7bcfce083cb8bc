"""torch's costly first uses that several jobs of a run share, made once for them (worker/warm.py
makes them): by the zygote before it forks the workers that run those jobs, or, for the first uses
`APART`, by one worker of its own that runs every job needing them.

Every job runs in a process of its own, forked from the zygote's warm state, so whatever torch sets up
the first time a feature is used is paid again by each job that uses it, unless it was used first in
the process the job is forked from. The features warmed at every pool's start (optimizers, autocast,
hooks: worker/warm.py) cost little; these cost too much to pay where no job needs them: `torch.compile`
imports dynamo's backends and inductor (~600 modules, ~1 s of CPU) even for a model it only wraps.
They are read from the jobs' code: a mention that is no use (Python's own `compile`) costs the pool one
warm-up, never a result.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from quizgen.execution.protocol import Job, job_snippets

# feature -> what in a snippet's code tells that it may use it
FIRST_USES: dict[str, re.Pattern[str]] = {
    "compile": re.compile(r"\bcompile\b"),
    # The first optimizer imports torch._dynamo (2-3 s of CPU): a pool that started cold (a project
    # with most results cached) pays it in each worker whose job makes one, such as each part of a
    # split search, unless the zygote pays it once.
    "optimizers": re.compile(r"\boptim\b"),
    # torch.func's transforms load decompositions when first used (~0.1 s of CPU): every pool's start
    # paid it while no shipped card uses them.
    "func": re.compile(r"\b(func|vmap|functional_call|jacrev|jacfwd|hessian)\b"),
}


# Made in a worker of its own, for the jobs that need it (zygote.py), never in the zygote, unless more
# jobs need it than one worker's share of the run (`apart`): every job's process is a fork of the
# zygote, and the ~600 modules `torch.compile` imports there made the fork and exit of each of the
# hundreds of jobs that never use it dearer (and were put into huge pages again: ~0.5 s of CPU).
APART = frozenset({"compile", "func"})


def shared(work: Mapping[str, Job]) -> list[str]:
    """The features that two or more of `work`'s jobs may use (one job pays the same either way)."""
    counts = _counts(work)
    return [name for name, count in counts.items() if count >= 2]


def apart(work: Mapping[str, Job], jobs: int) -> dict[str, int]:
    """The shared features to make in a worker of their own, with the jobs that need each: one worker
    runs every such job, so no more of them than one worker's share of the run (else the zygote
    makes it)."""
    counts = _counts(work)
    return {name: counts[name] for name in sorted(APART) if 2 <= counts[name] <= len(work) / max(jobs, 1)}


def _counts(work: Mapping[str, Job]) -> dict[str, int]:
    counts = dict.fromkeys(FIRST_USES, 0)
    for job in work.values():
        for name in uses(job):
            counts[name] += 1
    return counts


def uses(job: Job) -> set[str]:
    """The features whose first use the job's code may make."""
    text = "\n".join(snippet["code"] for snippet in job_snippets(job))
    return {name for name, pattern in FIRST_USES.items() if pattern.search(text)}


def behind_longest(work: Mapping[str, Job], features: list[str], jobs: int) -> dict[str, Job]:
    """`work` (the longest first) with the jobs that may make one of the first uses `features` (made
    apart) moved up behind the `jobs - 1` longest: their worker makes it beside those, on the core left,
    and they come to it one after another (a pool is handed as many jobs as it has workers:
    scheduling.Feed)."""
    items = list(work.items())
    if not features:
        return dict(items)
    head, rest = items[: jobs - 1], items[jobs - 1 :]
    needing = [item for item in rest if uses(item[1]).intersection(features)]
    return dict(head + needing + [item for item in rest if not uses(item[1]).intersection(features)])
