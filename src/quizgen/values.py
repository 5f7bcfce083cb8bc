"""Comparing a declared answer with the value execution produced, and showing either."""

from __future__ import annotations

import math
from typing import Any

from quizgen.model import Tolerance


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


def _scalar_of(computed: dict[str, Any]) -> Any:
    """The single element of a one-element tensor, or the marker that there is none."""
    value = computed.get("value")
    while isinstance(value, list) and len(value) == 1:
        value = value[0]
    return _NO if isinstance(value, list) else value


_NO = object()


def matches(declared: Any, computed: dict[str, Any], tol: Tolerance) -> bool:
    """Whether an author's declared answer agrees with the executed value."""
    kind, value = computed["type"], computed.get("value")
    if isinstance(declared, dict):
        if "raises" in declared:
            return kind == "exception" and value == declared["raises"]
        if "shape" in declared:
            return kind == "shape" and value == declared["shape"]
        return False
    if kind == "exception":
        return False
    if declared is None:
        return kind == "none"
    if isinstance(declared, bool):
        if kind == "tensor" and computed.get("dtype") == "bool":
            return _scalar_of(computed) is declared
        return kind == "bool" and value is declared
    if isinstance(declared, (int, float)):
        if kind in ("int", "float"):
            return close(declared, value, tol)
        if kind == "tensor" and computed.get("dtype") != "bool":
            scalar = _scalar_of(computed)
            return scalar is not _NO and close(declared, scalar, tol)
        return False
    if isinstance(declared, list):
        if kind in ("tensor", "list") and computed.get("dtype") != "bool":
            return close(declared, value, tol)
        if kind == "tensor":
            return declared == value
        return kind == "shape" and declared == value
    if isinstance(declared, str):
        if kind == "dtype":
            return declared in (value, str(value).removeprefix("torch."))
        return kind in ("str", "repr") and declared == value
    return False


def show_declared(declared: Any) -> str:
    if isinstance(declared, dict) and "raises" in declared:
        return f"raises {declared['raises']}"
    if isinstance(declared, dict) and "shape" in declared:
        return f"shape {declared['shape']}"
    return repr(declared)


def show(computed: dict[str, Any]) -> str:
    """How an executed value reads in messages and on cards."""
    if computed["type"] == "exception":
        return f"raises {computed['value']}"
    return str(computed.get("display", computed.get("value")))
