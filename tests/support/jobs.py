"""Jobs as the planner makes them, for tests that hand jobs to a pool or a worker's code directly."""

from __future__ import annotations

from quizgen.execution.protocol import RunJob


def answering(code: str, expr: str, path: str = "cards/t.yaml") -> RunJob:
    """A value card's job: `code`, then `expr` as its answer (on the line after the code)."""
    return {
        "type": "run",
        "setup": [],
        "code": {"code": code, "path": path, "line": 1},
        "answer": True,
        "expr": {"code": expr, "path": path, "line": code.count("\n") + 1},
    }
