"""torch's errors without the C++ stack trace nobody reads (worker/backtraces.py): the same messages,
on the torch that symbolizes eagerly (1.13) and on the one that does it lazily (left alone)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import quizgen
from quizgen.execution import pool
from quizgen.execution.protocol import RunJob
from tests.support.torch_matrix import OLD, REAL_TORCHES, real_old_python

SRC = str(Path(quizgen.__file__).resolve().parent.parent)

# Torch's errors with their C++ trace shown (TORCH_SHOW_CPP_STACKTRACES), before and after; the process
# then ends as Python ends, running C++'s static destructors (torch's fetcher among them).
TRACED = f"""\
import json, sys
sys.path.insert(0, {SRC!r})
import torch
from quizgen.execution.worker import backtraces

def errors():
    w = torch.ones(2, requires_grad=True)
    loss = (w * w).sum()
    loss.backward()
    said = []
    for bad in (loss.backward, lambda: torch.ones(2).view(3)):
        try:
            bad()
        except RuntimeError as exc:
            said.append(str(exc))
    return said

before = errors()
changed = backtraces.skip_cpp_traces()
print(json.dumps({{"changed": changed, "again": backtraces.skip_cpp_traces(), "before": before,
                  "after": errors()}}))
"""


def _traced(python: Path | str, show: bool) -> dict[str, object]:
    env = {"PATH": "/usr/bin:/bin", "TORCH_SHOW_CPP_STACKTRACES": "1" if show else "0"}
    done = subprocess.run([str(python), "-c", TRACED], capture_output=True, text=True, env=env, check=False)
    assert done.returncode == 0, done.stderr  # (no crash as the process ends)
    said: dict[str, object] = json.loads(done.stdout)
    return said


def test_a_torch_that_traces_lazily_is_left_alone() -> None:
    said = _traced(sys.executable, show=False)
    assert said["changed"] is False and said["before"] == said["after"]


@pytest.mark.slow
def test_torch_1_13_raises_the_same_errors_without_symbolizing_a_trace() -> None:
    python = real_old_python()
    shown = _traced(python, show=True)
    assert shown["changed"] is True and shown["again"] is False  # made once
    before, after = shown["before"], shown["after"]
    assert isinstance(before, list) and isinstance(after, list)
    assert all("frame #0" in message for message in before[:1])  # the trace torch symbolized
    assert not any("frame #" in message for message in after)  # none now
    cut = "Exception raised from"
    assert [m.split(cut)[0] for m in before] == [m.split(cut)[0] for m in after]
    plain = _traced(python, show=False)  # as a pool runs it: the messages, word for word
    assert plain["before"] == plain["after"]


@pytest.mark.slow
def test_a_pool_under_torch_1_13_reports_a_cards_error_as_torch_words_it() -> None:
    python = real_old_python()
    code = "w = torch.ones(2, requires_grad=True)\nloss = (w * w).sum()\nloss.backward()\nloss.backward()\n"
    job: RunJob = {
        "type": "run",
        "setup": [{"code": "import torch\n", "path": "a.yaml", "line": 1}],
        "code": {"code": code, "path": "a.yaml", "line": 2},
    }
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("QUIZGEN_TORCH_DIR", str(REAL_TORCHES))
        with pool.Pool(1, python=python) as running:
            [(_, result)] = list(running.run({"a": job}))
    assert OLD in result["torch_version"]
    assert not result["ok"]
    assert result["error"].splitlines()[-1] == FREED  # torch's message, word for word, and nothing more


FREED = (
    "RuntimeError: Trying to backward through the graph a second time (or directly access saved tensors "
    "after they have already been freed). Saved intermediate values of the graph are freed when you call "
    ".backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the graph a "
    "second time or if you need to access saved tensors after calling backward."
)
