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


def _declared_kind(declared: JSON) -> str:
    if isinstance(declared, dict):
        return "an exception" if "raises" in declared else "a shape"
    if isinstance(declared, bool):
        return "a boolean"
    if isinstance(declared, (int, float)):
        return "a number"
    if isinstance(declared, str):
        return "a string"
    if isinstance(declared, list):
        return "a list"
    return "null"


def _computed_kind(computed: Answer) -> str:
    type_ = computed["type"]
    if type_ == "tensor":
        return f"a {computed.get('dtype', '')} tensor of shape {computed.get('shape')}".replace("  ", " ")
    names = {
        "none": "None", "bool": "a bool", "int": "an int", "float": "a float", "str": "a string",
        "shape": "a torch.Size", "dtype": "a dtype", "list": "a list", "exception": "an exception",
        "repr": "a value compared by its repr",
    }  # fmt: skip
    return names[type_]


NEAR_MISS = 0.02  # a declared number this close (relatively) is probably the computed one, rounded


def mismatch_hint(declared: JSON, computed: Answer, tol: Tolerance) -> str:
    """Why a declared answer does not match, and what to write instead (for the author's message)."""
    shown = show(computed)
    quoted = isinstance(declared, str) and computed["type"] not in ("str", "repr", "dtype", "exception")
    if quoted and str(declared).strip() == shown:
        kind = _computed_kind(computed)
        return f"a string was declared, execution gives {kind}: write {shown} without quotes"
    scalar = _scalar_of(computed) if computed["type"] in ("float", "int", "tensor") else _NO
    if _number(declared) is not None and _number(scalar) is not None:
        d, c = float(declared), float(scalar)  # type: ignore[arg-type]
        allowed = tol.atol + tol.rtol * abs(c)
        if not abs(d - c) <= NEAR_MISS * max(abs(c), abs(d)):
            return ""  # a different number, not a rounding of it: the tolerance is beside the point
        return (
            f"|{d:g} - {c:g}| = {abs(d - c):.3g} is more than the tolerance allows "
            f"(atol {tol.atol:g} + rtol {tol.rtol:g} x |{c:g}| = {allowed:.3g}): declare the computed "
            "value, or set `tolerance: {rtol: ..., atol: ...}` if the difference is noise"
        )
    d_kind, c_kind = _declared_kind(declared), _computed_kind(computed)
    if d_kind.split()[-1] != c_kind.split()[-1]:
        return f"{d_kind} was declared, execution gives {c_kind}"
    return ""
