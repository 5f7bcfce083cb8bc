"""Comparing a declared answer with the executed Answer, and showing either.

static/judge.js is its learner-side twin (typed answers against the executed Answer)."""

from __future__ import annotations

import math
import re
from typing import Any

from quizgen.cards.model import Tolerance
from quizgen.execution.protocol import JSON, Answer


def _number(x: Any) -> float | None:
    if isinstance(x, bool):
        return None
    if isinstance(x, (int, float)):
        return float(x)
    if isinstance(x, str) and x in ("nan", "inf", "-inf"):
        return float(x)
    return None


def close(declared: Any, computed: Any, tol: Tolerance) -> bool:
    """Numbers (or equally nested lists of numbers) equal within |d - c| <= atol + rtol * |c|."""
    if isinstance(declared, list) or isinstance(computed, list):
        if not (isinstance(declared, list) and isinstance(computed, list)):
            return False
        return len(declared) == len(computed) and all(
            close(d, c, tol) for d, c in zip(declared, computed, strict=True)
        )
    d, c = _number(declared), _number(computed)
    if d is None or c is None:
        return False
    if math.isnan(d) or math.isnan(c):
        return math.isnan(d) and math.isnan(c)
    if math.isinf(d) or math.isinf(c):
        return d == c
    return abs(d - c) <= tol.atol + tol.rtol * abs(c)


def _scalar_of(computed: Answer) -> Any:
    """The single element of a one-element tensor, or the marker that there is none."""
    value = computed.get("value")
    while isinstance(value, list) and len(value) == 1:
        value = value[0]
    return _NO if isinstance(value, list) else value


_NO = object()


def matches(declared: JSON, computed: Answer, tol: Tolerance) -> bool:
    """Whether an author's declared answer agrees with the executed value."""
    type_, value = computed["type"], computed.get("value")
    if isinstance(declared, dict):
        if "raises" in declared:
            pattern = declared.get("match")
            message = str(computed.get("message", ""))
            return (
                type_ == "exception"
                and value == declared["raises"]
                and (not isinstance(pattern, str) or re.search(pattern, message) is not None)
            )
        if "shape" in declared:
            return type_ == "shape" and value == declared["shape"]
        return False
    if type_ == "exception":
        return False
    if declared is None:
        return type_ == "none"
    if isinstance(declared, bool):
        if type_ == "tensor" and computed.get("dtype") == "bool":
            return _scalar_of(computed) is declared
        return type_ == "bool" and value is declared
    if isinstance(declared, (int, float)):
        if type_ in ("int", "float"):
            return close(declared, value, tol)
        if type_ == "tensor" and computed.get("dtype") != "bool":
            scalar = _scalar_of(computed)
            return scalar is not _NO and close(declared, scalar, tol)
        return False
    if isinstance(declared, list):
        if type_ in ("tensor", "list") and computed.get("dtype") != "bool":
            return close(declared, value, tol)
        if type_ == "tensor":
            return declared == value
        return type_ == "shape" and declared == value
    if isinstance(declared, str):
        if type_ == "dtype":
            return declared in (value, str(value).removeprefix("torch."))
        return type_ in ("str", "repr") and declared == value
    return False


def show_declared(declared: JSON) -> str:
    if isinstance(declared, dict) and "raises" in declared:
        match = f" matching {declared['match']!r}" if "match" in declared else ""
        return f"raises {declared['raises']}{match}"
    if isinstance(declared, dict) and "shape" in declared:
        return f"shape {declared['shape']}"
    return repr(declared)


def show(computed: Answer) -> str:
    """How an executed value reads in messages and on cards."""
    if computed["type"] == "exception":
        message = str(computed.get("message", "")).strip()
        return f"raises {computed['value']}: {message}" if message else f"raises {computed['value']}"
    return str(computed.get("display", computed.get("value")))
