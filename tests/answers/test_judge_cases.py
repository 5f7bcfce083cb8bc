"""The judge's table of cases (tests/cases/judge_cases.json): static/judge.js runs all of them under node
(tests/js/); quizgen.answers.typed, its Python twin, reads every typed answer the same way, and
quizgen.answers.compare.matches judges the authors' declared ones."""

from __future__ import annotations

import itertools
import json
import shutil
import subprocess
from typing import Any

import pytest

from quizgen.answers.compare import matches
from quizgen.answers.typed import judge
from quizgen.cards.model import Tolerance
from quizgen.execution.protocol import ANSWER_TYPES
from quizgen.kinds.order import partial_order
from quizgen.kinds.order.answer import accepts, judge_typed
from tests.support.paths import REPO
from tests.support.tools import missing

CASES_FILE = REPO / "tests" / "cases" / "judge_cases.json"
CASES: dict[str, Any] = json.loads(CASES_FILE.read_text(encoding="utf-8"))
VALUES: list[dict[str, Any]] = CASES["values"]
SHARED = [case for case in VALUES if "declared" in case]
NODE_TESTS = sorted((REPO / "tests" / "js").glob("*.test.js"))


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
    ok = case.get("declared_ok", case["ok"])
    assert matches(case["declared"], case["answer"], tolerance) is ok, case["typed"]


@pytest.mark.parametrize("case", VALUES, ids=[f"{c['answer']['type']}: {c['why']}" for c in VALUES])
def test_python_reads_every_typed_answer_as_judge_js_does(case: dict[str, Any]) -> None:
    ok, reason = judge(case["typed"], case["answer"], Tolerance(**case.get("tolerance", {})))
    assert ok is case["ok"]
    if "reason" in case:
        assert reason == case["reason"]


def test_a_quoted_answer_differs_from_the_typed_one_only_where_yaml_has_a_scalar() -> None:
    """`declared_ok` is for the author's quoted number, boolean or null, nowhere else."""
    differ = [c for c in SHARED if c.get("declared_ok", c["ok"]) != c["ok"]]
    assert differ and all(isinstance(c["declared"], str) for c in differ)
    assert {c["answer"]["type"] for c in differ} <= {"none", "bool", "int", "float"}


ORDERS: list[dict[str, Any]] = CASES["orders"]


@pytest.mark.parametrize("case", ORDERS, ids=[f"order {c['typed']!r}: {c['why']}" for c in ORDERS])
def test_python_judges_an_order_case_as_judge_js_does(case: dict[str, Any]) -> None:
    assert judge_typed(CASES[case.get("card", "order_card")], case["typed"]) is case["ok"]


def test_an_order_judged_by_the_graph_as_by_the_list_of_its_orders() -> None:
    """The before-pairs shipped instead of the list accept exactly the orders partial_order found them for."""
    card = CASES["graph_card"]
    assert partial_order(card["orders_of_graph"], 4) == [tuple(pair) for pair in card["before"]]
    listed = {**card, "orders": card["orders_of_graph"], "before": None}
    del listed["before"]
    for lines in itertools.permutations(range(4)):
        assert accepts(card, lines) == accepts(listed, lines) == (list(lines) in card["orders_of_graph"])


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
        cwd=REPO,
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
