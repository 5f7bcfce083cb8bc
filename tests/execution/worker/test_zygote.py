"""The zygote: the warm state every job's process is forked from."""

from __future__ import annotations

import json
import mmap
from pathlib import Path

import pytest

from quizgen.execution.pool import Pool
from quizgen.execution.worker import huge_pages
from tests.support.forked import in_a_fork
from tests.support.fresh import printed
from tests.support.jobs import answering


def test_the_warm_state_is_out_of_the_collectors_reach_in_a_job(pool: Pool) -> None:
    # A full collection in a job's process went over torch's ~285,000 objects, writing to (copying) every
    # page they are on: ~165 ms of CPU; frozen in the zygote, it meets the job's own objects only.
    snippet = {"code": "import gc\nfrozen, tracked = gc.get_freeze_count(), len(gc.get_objects())\n"}
    job = {
        "type": "run",
        "setup": [],
        "code": {**snippet, "path": "cards/t.yaml", "line": 1},
        "answer": True,
        "expr": {"code": "frozen > 10 * tracked", "path": "cards/t.yaml", "line": 3},
    }
    [(_, result)] = pool.run({"job": job})  # type: ignore[dict-item]
    assert result["ok"] and result.get("value", {}).get("value") is True, result


def _value(pool: Pool, code: str, expr: str) -> object:
    [(_, result)] = pool.run({"job": answering(code, expr)})
    assert result["ok"] and "value" in result, result
    return result["value"]["value"]


def test_the_warm_state_is_in_huge_pages_in_a_job(pool: Pool) -> None:
    # Collapsed in the zygote: forking a job's process copies (and its exit takes down) one page-table
    # entry per 2 MiB of it, not 512 (huge_pages.py).
    if not _collapses_here():
        pytest.skip("this kernel collapses no memory into huge pages (MADV_COLLAPSE: Linux 6.1)")
    code = (
        "with open('/proc/self/smaps_rollup') as f:\n"
        "    huge = next(int(l.split()[1]) for l in f if l.startswith('AnonHugePages:'))\n"
    )
    assert _value(pool, code, "huge > 50_000") is True  # kB: of the ~220 MB torch and the warm-up wrote


def _collapses_here() -> bool:
    region = mmap.mmap(-1, 4 << 20, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    region.write(b"x" * len(region))
    return huge_pages.collapse() > 0


def _job_without_a_second_reset(workdir: str) -> str:
    from quizgen.execution.worker import isolate, runner

    def reset() -> None:
        raise AssertionError("reset again")

    runner.reset_state = reset
    isolate.become_subreaper()  # as a worker does (reap_all refuses anywhere else)
    return json.dumps(isolate.run_isolated(answering("x = 6 * 7\n", "x"), workdir, 30.0))


def test_a_jobs_process_does_not_reset_torchs_settings_again(tmp_path: Path) -> None:
    # The zygote reset them after its warm-up; every job's process is a fork of that state (~1.2 ms and
    # ~280 pages written a job when each reset them again). Run from a fork of this process: a worker
    # ends every child it has left after a job (isolate.reap_all), and here those are the session's pool
    # and browser.
    result = json.loads(in_a_fork(lambda: _job_without_a_second_reset(str(tmp_path))) or "{}")
    assert result.get("value", {}).get("value") == 42, result


def test_a_jobs_seeding_imports_nothing_the_zygote_did_not() -> None:
    # Every job's process seeds torch, random and numpy (snippets.seed). numpy 2 imports `numpy.random`
    # on first use: nine extension modules loaded again in every job, ~10 ms of CPU each on torch 2.13.
    # The zygote's seeding (seed_devices) imports what a job's seeding uses, in a fresh interpreter here.
    code = (
        "import sys\n"
        "from quizgen.execution.worker import snippets\n"
        "snippets.seed_devices()\n"
        "before = set(sys.modules)\n"
        "snippets.seed()\n"
        "print(sorted(set(sys.modules) - before))\n"
    )
    assert printed(code) == "[]"
