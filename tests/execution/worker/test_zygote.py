"""The zygote: the warm state every job's process is forked from."""

from __future__ import annotations

from quizgen.execution.pool import Pool


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
