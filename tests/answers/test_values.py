"""Declared answers against executed values."""

from __future__ import annotations

from typing import Any

import pytest

from quizgen.answers.compare import close, matches, show, show_declared
from quizgen.cards.model import Tolerance

TOL = Tolerance()


def v(type_: str, value: Any, **kw: Any) -> dict[str, Any]:
    return {"type": type_, "value": value, "display": repr(value), **kw}


@pytest.mark.parametrize(
    ("declared", "computed", "ok"),
    [
        (8.0, v("float", 8.0), True),
        (8, v("float", 8.0000001), True),
        (8.1, v("float", 8.0), False),
        (8.0, v("tensor", 8.0, dtype="float32", shape=[]), True),
        (8.0, v("tensor", [8.0], dtype="float32", shape=[1]), True),
        (8.0, v("tensor", [8.0, 1.0], dtype="float32", shape=[2]), False),
        (True, v("bool", True), True),
        (True, v("int", 1), False),
        (1, v("bool", True), False),
        (True, v("tensor", True, dtype="bool", shape=[]), True),
        (None, v("none", None), True),
        (None, v("float", 0.0), False),
        (0.0, v("none", None), False),
        ("float32", v("dtype", "torch.float32"), True),
        ("torch.float32", v("dtype", "torch.float32"), True),
        ("abc", v("str", "abc"), True),
        ([1.0, 2.0], v("tensor", [1.0, 2.0], dtype="float32", shape=[2]), True),
        ([[1.0], [2.0]], v("tensor", [1.0, 2.0], dtype="float32", shape=[2]), False),
        ([2, 3], v("shape", [2, 3]), True),
        ({"shape": [2, 3]}, v("shape", [2, 3]), True),
        ({"shape": [3, 2]}, v("shape", [2, 3]), False),
        ({"raises": "RuntimeError"}, v("exception", "RuntimeError"), True),
        ({"raises": "ValueError"}, v("exception", "RuntimeError"), False),
        (1.0, v("exception", "RuntimeError"), False),
        ("nan", v("float", "nan"), False),
        (float("nan"), v("float", "nan"), True),
        (float("inf"), v("float", "inf"), True),
    ],
)
def test_matches(declared: Any, computed: dict[str, Any], ok: bool) -> None:
    assert matches(declared, computed, TOL) is ok


def test_tolerance_is_the_cards() -> None:
    assert not close(0.33, 1 / 3, TOL)
    assert close(0.33, 1 / 3, Tolerance(rtol=0.0, atol=0.01))


def test_show() -> None:
    assert show(v("exception", "RuntimeError")) == "raises RuntimeError"
    assert show({"type": "shape", "value": [2], "display": "torch.Size([2])"}) == "torch.Size([2])"
    assert show_declared({"raises": "X"}) == "raises X"
    assert show_declared(8.0) == "8.0"
