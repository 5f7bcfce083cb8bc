"""A worker's life: what it adds to each job's result on its own authority."""

from __future__ import annotations

from quizgen.execution.pool import Pool
from quizgen.execution.protocol import Job, Outcome

# Burns CPU in a process the snippet starts.
SPIN = "import time\\nt = time.process_time()\\nwhile time.process_time() - t < 0.4: pass"
BUSY = f"import subprocess, sys\nsubprocess.run([sys.executable, '-c', '{SPIN}'])\n"


def _job(code: str) -> Job:
    snippet = {"code": code, "path": "cards/t.yaml", "line": 1}
    return {"type": "run", "setup": [], "code": snippet}  # type: ignore[typeddict-item]


def test_a_jobs_cpu_is_measured_by_its_worker_with_every_process_it_started(pool: Pool) -> None:
    results = dict(pool.run({"busy": _job(BUSY), "idle": _job("x = 1\n")}))
    busy, idle = Outcome.from_result(results["busy"]), Outcome.from_result(results["idle"])
    assert busy.ok and idle.ok
    assert busy.cpu >= 0.4  # the snippet's child's CPU counts: it is the job's
    assert 0 < idle.cpu < 0.4
    assert "cpu" not in busy.to_json()  # how long it took is no part of what it gave (cache, cards.json)
