"""The truth path, unit by unit (pure: no worker process, no torch): answer comparison, the cache key,
the order search's pruning, and what value and myth cards are checked against.

Each test pins a rule a mutation tester found unguarded (bench/mutation.sh reruns it)."""

from __future__ import annotations

import math
import re
from typing import Any, cast

import pytest

from quizgen import verify
from quizgen.answers.compare import close, matches, show, show_declared
from quizgen.cards.model import Card, Declared, Snippet, Tolerance
from quizgen.errors import Location, Problem
from quizgen.execution import cache
from quizgen.execution.protocol import JSON, Answer, Job, Outcome, Placed
from quizgen.execution.worker.order_search.candidates import candidate_orders, dependencies, relax
from quizgen.kinds import myth, value
from quizgen.kinds.myth import MythCard, computed_verdict
from quizgen.kinds.value import ValueCard

TOL = Tolerance()
FILE = "cards/deck.yaml"


def ans(type_: str, val: JSON, **extra: Any) -> Answer:
    return cast(Answer, {"type": type_, "value": val, "display": repr(val), **extra})


# -- answers.close: |declared - computed| <= atol + rtol * |computed|, as static/judge.js -----------------


def test_close_is_inclusive_and_zero_tolerance_means_equal() -> None:
    exact = Tolerance(rtol=0.0, atol=0.0)
    assert close(1.0, 1.0, exact)
    assert not close(1.0, 1.0 + 2**-40, exact)
    half = Tolerance(rtol=0.0, atol=0.5)
    assert close(1.5, 1.0, half)  # exactly on the bound
    assert not close(1.5000001, 1.0, half)


def test_relative_tolerance_scales_with_the_computed_magnitude() -> None:
    tenth = Tolerance(rtol=0.1, atol=0.0)
    assert close(105.0, 100.0, tenth)
    assert close(-109.0, -100.0, tenth)
    assert not close(111.0, 100.0, tenth)
    assert not close(0.5, 0.0, tenth)  # no relative slack around zero


def test_nan_equals_only_nan() -> None:
    assert close(math.nan, "nan", TOL)
    assert not close(math.nan, 1.0, TOL)
    assert not close(1.0, "nan", TOL)
    assert not matches(math.nan, ans("float", 1.0), TOL)
    assert not matches(1.0, ans("float", "nan"), TOL)


def test_an_infinity_equals_only_the_same_infinity() -> None:
    assert close(math.inf, "inf", TOL)
    assert close(-math.inf, "-inf", TOL)
    assert not close(math.inf, "-inf", TOL)
    assert not close(1.0, "inf", TOL)  # atol + rtol * inf would accept anything
    assert not close(1e308, "inf", TOL)
    assert matches(-math.inf, ans("float", "-inf"), TOL)
    assert not matches(-math.inf, ans("float", "inf"), TOL)


def test_what_is_not_a_number_is_never_close() -> None:
    assert not close(1.0, None, TOL)
    assert not close(None, 1.0, TOL)
    assert not close("abc", "abc", TOL)
    assert not close(True, 1.0, TOL)  # a bool is no number here
    assert not close(1.0, "x", TOL)
    assert not close([1.0, 2.0], [1.0, "x"], TOL)


def test_lists_are_close_element_by_element_with_equal_lengths() -> None:
    assert close([[1.0, 2.0], [3.0, 4.0]], [[1.0, 2.0000001], [3.0, 4.0]], TOL)
    assert not close([1.0, 2.0], [1.0, 2.0, 3.0], TOL)
    assert not close([1.0], 1.0, TOL)
    assert not close(1.0, [1.0], TOL)


# -- answers.matches: each answer type --------------------------------------------------------------


def test_an_int_answer_is_judged_by_its_number() -> None:
    assert matches(3, ans("int", 3), TOL)
    assert matches(3.0, ans("int", 3), TOL)
    assert not matches(3, ans("int", 4), TOL)


def test_number_lists_use_the_tolerance_for_tensors_and_lists() -> None:
    near: list[JSON] = [1.0, 2.0000001]
    assert matches([1.0, 2.0], ans("tensor", near, dtype="float32", shape=[2]), TOL)
    assert matches([1.0, 2.0], ans("list", near), TOL)
    assert not matches([1.0, 2.5], ans("list", near), TOL)


def test_a_number_is_not_a_one_element_list() -> None:
    assert not matches(1.0, ans("list", [1.0]), TOL)
    assert matches(1.0, ans("tensor", [[1.0]], dtype="float32", shape=[1, 1]), TOL)


def test_a_repr_answer_is_compared_as_text() -> None:
    assert matches("Linear(in=2)", ans("repr", "Linear(in=2)"), TOL)
    assert not matches("Linear(in=3)", ans("repr", "Linear(in=2)"), TOL)


def test_raises_match_searches_the_message() -> None:
    boom = ans("exception", "RuntimeError", message="element 0 of tensors does not require grad")
    assert matches({"raises": "RuntimeError"}, boom, TOL)
    assert matches({"raises": "RuntimeError", "match": r"does not require grad"}, boom, TOL)
    assert matches({"raises": "RuntimeError", "match": r"^element \d"}, boom, TOL)
    assert not matches({"raises": "RuntimeError", "match": r"in-place"}, boom, TOL)
    assert not matches({"raises": "ValueError", "match": r"element"}, boom, TOL)
    silent = ans("exception", "RuntimeError")  # no message at all: searched as ""
    assert not matches({"raises": "RuntimeError", "match": r"grad"}, silent, TOL)
    assert matches({"raises": "RuntimeError", "match": r"^$"}, silent, TOL)
    assert not matches({"raises": "RuntimeError", "match": r"None"}, silent, TOL)


def test_no_other_mapping_matches() -> None:
    assert not matches({"value": 1}, ans("int", 1), TOL)
    assert not matches({}, ans("none", None), TOL)


# -- answers.show / show_declared: what messages and cards say -----------------------------------------


def test_show_declared() -> None:
    assert show_declared({"raises": "ValueError"}) == "raises ValueError"
    assert show_declared({"raises": "ValueError", "match": "bad .*"}) == "raises ValueError matching 'bad .*'"
    assert show_declared({"shape": [2, 3]}) == "shape [2, 3]"
    assert show_declared(1.5) == "1.5"
    assert show_declared("float32") == "'float32'"


def test_show_gives_the_exception_type_and_its_message() -> None:
    assert show(ans("exception", "ValueError", message="bad input\n")) == "raises ValueError: bad input"
    assert show(ans("exception", "ValueError", message="  \n")) == "raises ValueError"
    assert show(ans("exception", "ValueError")) == "raises ValueError"
    assert show(ans("float", 8.0, display="8.0000")) == "8.0000"
    assert show(cast(Answer, {"type": "int", "value": 3})) == "3"  # no display: the value


# -- execution.cache.job_key: every part of the job counts, places do not ------------------------------


def _snippet(code: str, path: str = "a.yaml", line: int = 1) -> dict[str, object]:
    return {"code": code, "path": path, "line": line}


def _key(job: dict[str, Any]) -> str:
    return cache.job_key(cast(Job, job))


def test_job_key_reads_inside_lists_of_snippets() -> None:
    one = {"type": "run", "setup": [_snippet("import torch")], "code": _snippet("x = 1")}
    other = {"type": "run", "setup": [_snippet("import numpy")], "code": _snippet("x = 1")}
    moved = {
        "type": "run",
        "setup": [_snippet("import torch", "b.yaml", 40)],
        "code": _snippet("x = 1", "b", 9),
    }
    assert _key(one) != _key(other)
    assert _key(one) == _key(moved)
    lines = {"type": "search", "lines": [_snippet("a = 1"), _snippet("b = 2")], "check": _snippet("assert a")}
    swapped = {**lines, "lines": [_snippet("b = 2"), _snippet("a = 1")]}
    assert _key(lines) != _key(swapped)


def test_job_key_does_not_depend_on_the_order_of_a_jobs_fields() -> None:
    job = {"type": "run", "setup": [], "code": _snippet("x = 1"), "expr": _snippet("x")}
    reordered = dict(reversed(list(job.items())))
    reordered["code"] = {"line": 1, "path": "a.yaml", "code": "x = 1"}
    assert list(reordered) != list(job)
    assert _key(reordered) == _key(job)


def test_job_key_is_a_sha256_hex_digest() -> None:
    key = _key({"type": "run", "setup": [], "code": _snippet("x = 1")})
    assert re.fullmatch(r"[0-9a-f]{64}", key)


# -- order.search: pruning follows the names a line binds --------------------------------------------


@pytest.mark.parametrize(
    ("binder", "reader"),
    [
        ("def f(): return 1", "y = f()"),
        ("class A: pass", "a = A()"),
        ("import os.path", "s = os.sep"),
        ("import torch.nn as nn", "m = nn.Linear"),
        ("from math import pi", "r = pi / 2"),
        ("dec = staticmethod", "@dec\ndef g(): pass"),  # a decorator runs when the def does
    ],
)
def test_a_line_reading_a_name_comes_after_the_line_binding_it(binder: str, reader: str) -> None:
    assert dependencies([binder, reader], predefined=set()) == {0: set(), 1: {0}}
    assert dependencies([reader, binder], predefined=set()) == {0: {1}, 1: set()}


def test_a_function_body_is_no_constraint() -> None:
    assert dependencies(["def h(): return later", "later = 1"], predefined=set()) == {0: set(), 1: set()}


def test_candidate_orders_are_exactly_the_topological_orders() -> None:
    before = {0: set(), 1: {0}, 2: {0}}
    assert list(candidate_orders(3, before)) == [[0, 1, 2], [0, 2, 1]]
    assert list(candidate_orders(3, relax({0: {2}, 1: set(), 2: set()}, [0, 1, 2]))) == [
        [0, 1, 2], [0, 2, 1], [1, 0, 2], [1, 2, 0], [2, 0, 1], [2, 1, 0],
    ]  # fmt: skip


# -- value cards: kinds/value verify -------------------------------------------------------------------------


def _where(line: int, card: str, field: str | None) -> Location:
    return Location(FILE, line, 0, card, field)


def value_card(declared: JSON | None = None, *, answer_expr: bool = True) -> ValueCard:
    fields = {"code": _where(5, "v", "code"), "answer": _where(9, "v", "answer")}
    return ValueCard(
        id="v",
        kind="value",
        deck="D",
        location=_where(3, "v", None),
        fields=fields,
        code=Snippet("w = 1\ny = w + 1\n", FILE, 5),
        answer_expr=Snippet("y.item()", FILE, 8) if answer_expr else None,
        declared=None if declared is None else Declared(declared, fields["answer"]),
    )


def test_a_value_card_without_an_answer_fails_at_its_code() -> None:
    problems = value.KIND.verify(value_card(8.0), Outcome(ok=True))
    assert problems == [Problem(_where(5, "v", "code"), "execution produced no answer")]


def test_a_value_card_agrees_or_names_both_answers() -> None:
    card = value_card(8.0)
    assert value.KIND.verify(card, Outcome(ok=True, value=ans("float", 8.0))) == []
    assert value.KIND.verify(value_card(None), Outcome(ok=True, value=ans("float", 3.0))) == []
    wrong = value.KIND.verify(card, Outcome(ok=True, value=ans("float", 7.5)))
    assert wrong == [Problem(_where(9, "v", "answer"), "declared answer 8.0 but execution gives 7.5")]


def _raised(line: int, exc: str = "AttributeError", message: str = "no gard") -> Outcome:
    tb = f'Traceback (most recent call last):\n  File "{FILE}", line {line}\n{exc}: {message}'
    return Outcome(ok=True, value=ans("exception", exc, message=message), placed=Placed(FILE, line, tb))


def test_an_undeclared_exception_fails_at_the_line_and_field_that_raised() -> None:
    hint = (
        "the snippet raised an exception the card does not declare "
        "(if raising is the point, declare it: answer: {raises: Type})"
    )
    outcome = _raised(8)
    assert outcome.placed is not None
    in_expr = value.KIND.verify(value_card(8.0), outcome)
    assert in_expr == [Problem(_where(8, "v", "answer_expr"), f"{hint}:\n{outcome.placed.traceback}")]
    in_code = value.KIND.verify(value_card(None), _raised(6))
    assert [p.location for p in in_code] == [_where(6, "v", "code")]
    in_setup = value.KIND.verify(value_card(None), _raised(2))  # named after the card's first snippet
    assert [p.location for p in in_setup] == [_where(2, "v", "code")]
    unplaced = Outcome(ok=True, value=ans("exception", "NameError", message="name 'x' is not defined"))
    nowhere = value.KIND.verify(value_card(None), unplaced)
    assert nowhere == [Problem(_where(5, "v", "code"), f"{hint}:\nraises NameError: name 'x' is not defined")]


def test_a_declared_exception_must_come_from_the_cards_own_lines() -> None:
    card = value_card({"raises": "RuntimeError"}, answer_expr=False)
    assert value.KIND.verify(card, _raised(5, "RuntimeError")) == []
    assert value.KIND.verify(card, _raised(6, "RuntimeError")) == []
    [after_code] = value.KIND.verify(card, _raised(7, "RuntimeError"))  # the code has two lines: 5 and 6
    assert after_code.message.startswith("declared raises RuntimeError, but the exception came from line 7,")
    with_expr = value_card({"raises": "RuntimeError"})
    assert value.KIND.verify(with_expr, _raised(8, "RuntimeError")) == []  # answer_expr is the card's own
    from_setup = _raised(2, "RuntimeError")
    assert from_setup.placed is not None
    assert value.KIND.verify(card, from_setup) == [
        Problem(
            _where(9, "v", "answer"),
            "declared raises RuntimeError, but the exception came from line 2, not from the card's code "
            f"or answer_expr:\n{from_setup.placed.traceback}",
        )
    ]
    outside = Outcome(
        ok=True, value=ans("exception", "RuntimeError", message="m"), placed=Placed("", 0, "RuntimeError: m")
    )
    [problem] = value.KIND.verify(card, outside)
    assert "came from outside the card file" in problem.message


def test_a_declared_exception_of_another_type_names_both() -> None:
    card = value_card({"raises": "ValueError", "match": "bad"}, answer_expr=False)
    assert value.KIND.verify(card, _raised(5, "RuntimeError", "boom")) == [
        Problem(
            _where(9, "v", "answer"),
            "declared answer raises ValueError matching 'bad' but execution gives raises RuntimeError: boom",
        )
    ]


# -- myth cards: kinds/myth verify and computed_verdict ------------------------------------------------------


def myth_card(verdict: bool | None) -> MythCard:
    fields = {name: _where(line, "m", name) for name, line in [("proof", 6), ("holds", 9), ("verdict", 10)]}
    return MythCard(
        id="m",
        kind="myth",
        deck="D",
        location=_where(4, "m", None),
        fields=fields,
        claim="eval() turns off gradients",
        verdict=verdict,
        proof=Snippet("model.eval()\ny = model(x)\n", FILE, 6),
        holds=Snippet("  y.grad_fn is None\n", FILE, 9),
    )


@pytest.mark.parametrize(
    ("answer", "verdict"),
    [
        (ans("bool", True), True),
        (ans("bool", False), False),
        (ans("tensor", True, dtype="bool", shape=[]), True),
        (ans("tensor", [[False]], dtype="bool", shape=[1, 1]), False),
        (ans("tensor", [True, True], dtype="bool", shape=[2]), None),
        (ans("tensor", 1.0, dtype="float32", shape=[]), None),
        (ans("int", 1), None),
        (ans("bool", "True"), None),
        (ans("none", None), None),
    ],
)
def test_the_verdict_is_a_bool_or_a_one_element_bool_tensor(answer: Answer, verdict: bool | None) -> None:
    assert computed_verdict(answer) is verdict


def test_a_myth_verdict_is_computed_and_a_declared_one_must_agree() -> None:
    true = Outcome(ok=True, value=ans("bool", True))
    assert myth.KIND.verify(myth_card(None), true) == []
    assert myth.KIND.verify(myth_card(True), true) == []
    assert myth.KIND.verify(myth_card(False), true) == [
        Problem(
            _where(10, "m", "verdict"),
            "declared verdict false, but `y.grad_fn is None` is True after the proof",
        )
    ]
    false = Outcome(ok=True, value=ans("tensor", [False], dtype="bool", shape=[1]))
    [problem] = myth.KIND.verify(myth_card(True), false)
    assert problem.message == "declared verdict true, but `y.grad_fn is None` is False after the proof"


def test_a_myth_whose_holds_is_no_truth_value_or_missing_fails_at_holds() -> None:
    three = Outcome(ok=True, value=ans("int", 3, display="3"))
    assert myth.KIND.verify(myth_card(None), three) == [
        Problem(_where(9, "m", "holds"), "holds must be True or False, not 3")
    ]
    assert myth.KIND.verify(myth_card(True), Outcome(ok=True)) == [
        Problem(_where(9, "m", "holds"), "execution produced no verdict")
    ]


def test_a_myth_whose_proof_raises_fails_at_the_raising_line() -> None:
    outcome = _raised(7, "AssertionError", "")
    assert outcome.placed is not None
    hint = "the proof does not run (a proof must run, its asserts must pass and `holds` must evaluate)"
    assert myth.KIND.verify(myth_card(True), outcome) == [
        Problem(_where(7, "m", "proof"), f"{hint}:\n{outcome.placed.traceback}")
    ]
    [in_holds] = myth.KIND.verify(myth_card(True), _raised(9, "NameError", "y"))
    assert in_holds.location == _where(9, "m", "holds")


# -- verify.verify_card: failures are blamed on the kind's run field -------------------------------------


def test_a_successful_execution_is_checked_by_the_cards_kind() -> None:
    assert verify.verify_card(value_card(8.0), Outcome(ok=True, value=ans("float", 8.0))) == []
    assert verify.verify_card(value_card(8.0), Outcome(ok=True, value=ans("float", 7.5))) == [
        Problem(_where(9, "v", "answer"), "declared answer 8.0 but execution gives 7.5")
    ]
    [myth_problem] = verify.verify_card(myth_card(False), Outcome(ok=True, value=ans("bool", True)))
    assert myth_problem.location == _where(10, "m", "verdict")


def test_a_failed_execution_is_reported_at_the_run_field_indented() -> None:
    card: Card = value_card(8.0)
    assert verify.verify_card(card, None) == []
    failed = verify.verify_card(card, Outcome(ok=False, error="timed out\nafter 5 s\n  at line 2"))
    assert failed == [Problem(_where(5, "v", "code"), "timed out\n    after 5 s\n      at line 2")]
    assert verify.verify_card(card, Outcome(ok=False)) == [
        Problem(_where(5, "v", "code"), "execution failed")
    ]
    [proof] = verify.verify_card(myth_card(True), Outcome(ok=False, error="AssertionError"))
    assert proof == Problem(
        _where(6, "m", "proof"),
        "the proof does not run (a proof must run and its asserts must pass):\n    AssertionError",
    )


def test_indent() -> None:
    assert verify.indent("one line") == "one line"
    assert verify.indent("first\nsecond\n third") == "first\n    second\n     third"
