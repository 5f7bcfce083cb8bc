"""The judge's table of cases (tests/cases/judge_cases.json): static/judge.js runs all of them under node
(tests/js/), and quizgen.answers.matches, its Python twin, judges the shared ones the same way."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from quizgen.answers import matches
from quizgen.cards.model import Tolerance
from quizgen.execution.protocol import ANSWER_TYPES

from .quiz_support import missing

ROOT = Path(__file__).parents[1]
CASES_FILE = ROOT / "tests" / "cases" / "judge_cases.json"
CASES: dict[str, Any] = json.loads(CASES_FILE.read_text(encoding="utf-8"))
VALUES: list[dict[str, Any]] = CASES["values"]
SHARED = [case for case in VALUES if "declared" in case]
NODE_TESTS = sorted((ROOT / "tests" / "js").glob("*.test.js"))


def test_every_answer_type_has_cases_and_shared_cases() -> None:
    assert {case["answer"]["type"] for case in VALUES} == set(ANSWER_TYPES)
    assert {case["answer"]["type"] for case in SHARED} == set(ANSWER_TYPES)


def test_every_case_says_why_and_is_said_once() -> None:
    keys = [(case["answer"]["type"], case["why"]) for case in VALUES]
    assert len(keys) == len(set(keys))
    assert all(case["why"] and isinstance(case["ok"], bool) for case in [*VALUES, *CASES["orders"]])


@pytest.mark.parametrize("case", SHARED, ids=[f"{c['answer']['type']}: {c['why']}" for c in SHARED])
def test_python_judges_a_shared_case_as_judge_js_does(case: dict[str, Any]) -> None:
    tolerance = Tolerance(**case.get("tolerance", {}))
    assert matches(case["declared"], case["answer"], tolerance) is case["ok"], case["typed"]


def test_judge_js_passes_its_node_tests() -> None:
    """Every case through judge.js, and the quiz's pure modules (tests/js/*.test.js) under `node --test`."""
    node = shutil.which("node")
    if node is None:
        missing("node")
    assert node is not None and NODE_TESTS
    done = subprocess.run(
        [node, "--test", *map(str, NODE_TESTS)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
