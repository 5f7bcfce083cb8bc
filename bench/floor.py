"""The floor of one torch version: one process imports torch once and executes each job's code once.

    PYTHON bench/floor.py JOBS_JSON KEY OUT [--searches]   (the jobs under JOBS_JSON[KEY]: bench/jobs.py)

Plain Python and torch, no quizgen: the least any tool that really runs the snippets could do on one
core. Each job starts from a fresh namespace with torch seeded, runs its setup, and then:

- a value, myth or basic card's job (and each value variant's): its code, its answer expression if it
  has one, and each cited expression;
- an order card's job: the lines as written (at their levels when indentation is part of the answer),
  `repeat` times, then the check and each cited expression; then, once for each distractor, from a
  fresh namespace again, the lines as written with that distractor after them, `repeat` times, and the
  check. Nothing else: no other order is tried (the search is what the build adds).

With `--searches` (quizgen on the import path), each order card's job is then also searched in this
process as a worker searches it (quizgen's own search code: `order_search.search`, as bench/orders.py
calls it), without the sandbox, a process per job or the split across workers: the floor of a build
that must run the same search, so that the build's ratio to it is what the build adds around the
same executions.

An exception (a myth's, a distractor's) ends that run and is not reported: only the time counts. With
`--searches`, torch's errors skip the C++ trace nobody reads, as in the build's workers
(worker/backtraces.py: 6-7 ms an error on torch 1.13): the floor is what any tool could do.
What the snippets print goes where the process's output goes (as quizgen captures it, each job's
output is read); OUT gets {"orders cpu", "orders wall": seconds spent in order cards' jobs as above,
"searches cpu", "searches wall": in their searches (0 without --searches)}.
"""

from __future__ import annotations

import json
import sys
import time
from typing import Any

Snippet = dict[str, Any]


def _run(snippets: list[Snippet], evaluated: list[Snippet]) -> None:
    import torch

    torch.manual_seed(0)
    ns: dict[str, Any] = {"__name__": "__main__"}
    try:
        for snippet in snippets:
            exec(compile(snippet["code"], snippet["path"], "exec"), ns)
        for snippet in evaluated:
            eval(compile(snippet["code"], snippet["path"], "eval"), ns)
    except Exception:  # the answer is not the floor's business, its cost is
        pass


def _program(job: dict[str, Any], blocks: list[Snippet]) -> Snippet:
    """The blocks as one program: each at its level when indentation is part of the answer."""
    unit, levels = job.get("indent", 0), job.get("levels", [])
    everything = [*job["lines"], *job["distractors"]]
    text = []
    for block in blocks:
        pad = " " * (unit * levels[everything.index(block)]) if unit else ""
        text += [pad + line if line.strip() else "" for line in block["code"].rstrip("\n").split("\n")]
    return {"code": "\n".join(text) + "\n", "path": job["lines"][0]["path"]}


def _order(job: dict[str, Any]) -> None:
    cites = list(job.get("cite", {}).values())
    written = _program(job, job["lines"])
    _run([*job["setup"], *[written] * job["repeat"], job["check"]], cites)
    for distractor in job["distractors"]:
        program = _program(job, [*job["lines"], distractor])
        _run([*job["setup"], *[program] * job["repeat"], job["check"]], [])


def _search(job: dict[str, Any]) -> None:
    """The order card's search, as a worker runs it in a job's process (bench/orders.py's way)."""
    from quizgen.execution.worker import runner

    runner._register_lines(job)  # type: ignore[arg-type]
    runner.reset_state()
    runner._run_by_type(job)  # type: ignore[arg-type]


def main() -> None:
    with open(sys.argv[1]) as f:
        jobs = json.load(f)[sys.argv[2]]
    searches = "--searches" in sys.argv[4:]
    import torch

    torch.set_num_threads(1)
    if searches:
        from quizgen.execution.worker import runner

        runner.remember_state()
        try:  # (a quizgen before it, when the bench measures an older commit: --src)
            from quizgen.execution.worker import backtraces
        except ImportError:
            pass
        else:
            # As in the build's workers (zygote.py): torch's errors without a C++ trace nobody reads,
            # which 1.13 symbolizes for each (6-7 ms); a tool that runs the snippets could do the same.
            backtraces.skip_cpp_traces()
    spent = {"orders cpu": 0.0, "orders wall": 0.0, "searches cpu": 0.0, "searches wall": 0.0}
    for job in jobs:
        if job["type"] == "search":
            for part, run in (("orders", _order), ("searches", _search if searches else None)):
                if run is not None:
                    began, wall = time.process_time(), time.perf_counter()
                    run(job)
                    spent[f"{part} cpu"] += time.process_time() - began
                    spent[f"{part} wall"] += time.perf_counter() - wall
        else:
            expr = [job["expr"]] if job.get("answer") and job.get("expr") else []
            _run([*job["setup"], job["code"]], [*expr, *job.get("cite", {}).values()])
    with open(sys.argv[3], "w") as f:
        json.dump(spent, f)


if __name__ == "__main__":
    main()
