"""Comparing a declared answer with the executed Answer, and showing either.

static/judge.js is its learner-side twin (typed answers against the executed Answer)."""

from __future__ import annotations

import math
import re
from typing import Any

from quizgen.answers import display, patterns, typed
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


def _yaml_scalar(computed: Answer) -> bool:
    """Whether YAML writes this answer as a scalar of its own type (a number, true/false, null), so that
    a quoted declaration of it is a slip."""
    type_ = computed["type"]
    if type_ == "tensor":
        return computed.get("shape") == [] and not str(computed.get("dtype", "")).startswith("complex")
    return type_ in ("none", "bool", "int", "float")


def matches(declared: JSON, computed: Answer, tol: Tolerance) -> bool:
    """Whether an author's declared answer agrees with the executed value: the spellings learners may
    type (quizgen.answers.typed), with YAML's numbers, booleans, null and lists for what YAML can write."""
    type_, value = computed["type"], computed.get("value")
    if isinstance(declared, dict):
        if "raises" in declared:
            pattern = declared.get("match")
            message = str(computed.get("message", ""))
            return (
                type_ == "exception"
                and value == declared["raises"]
                and (not isinstance(pattern, str) or patterns.search(pattern, message))
            )
        if "shape" in declared:
            return type_ == "shape" and value == declared["shape"]
        return False
    if type_ == "exception":
        return False
    if isinstance(declared, str):
        # A quoted number, boolean or null is a slip that mismatch_hint names, not a spelling.
        return not _yaml_scalar(computed) and typed.judge(declared, computed, tol)[0]
    if type_ == "shape":
        return isinstance(declared, list) and all(type(d) is int for d in declared) and declared == value
    tree = typed.from_declared(declared)
    if tree is None or type_ in ("str", "dtype", "repr"):
        return False
    if type_ in ("none", "bool"):
        return tree == typed.from_declared(value)
    return typed.agree(tree, computed, tol)[0]


def show_declared(declared: JSON) -> str:
    if isinstance(declared, dict) and "raises" in declared:
        match = f" matching {declared['match']!r}" if "match" in declared else ""
        return f"raises {declared['raises']}{match}"
    if isinstance(declared, dict) and "shape" in declared:
        return f"shape {declared['shape']}"
    return repr(declared)


MAX_OPTION = 80  # characters of an exception's message an option shows (its first clause, at most)


def show_short(computed: Answer) -> str:
    """An answer as a multiple-choice option shows it: an exception as its type and the first clause of
    its message (cut at a word, at most MAX_OPTION characters), anything else as `show` does."""
    if computed["type"] != "exception":
        return show(computed)
    message = " ".join(str(computed.get("message", "")).split())
    first = re.split(r"(?<=[.;:!?])\s", message, maxsplit=1)[0].rstrip(".;:")
    if len(first) > MAX_OPTION:
        first = first[:MAX_OPTION].rsplit(" ", 1)[0].rstrip(",;:") + "…"
    return f"raises {computed['value']}: {first}" if first else f"raises {computed['value']}"


def show(computed: Answer) -> str:
    """How an executed value reads in messages and on cards."""
    if computed["type"] == "exception":
        message = str(computed.get("message", "")).strip()
        return f"raises {computed['value']}: {message}" if message else f"raises {computed['value']}"
    return str(computed.get("display", computed.get("value")))


def _declared_kind(declared: JSON) -> str:
    family = _declared_family(declared)
    if family == "list":
        shape = typed.shape_of(declared)
        if shape is None or len(shape) > 1:
            return f"a nested list of shape {shape}" if shape else "a ragged nested list"
        return f"a list of {shape[0]} values"
    names = {"exception": "an exception", "shape": "a shape", "bool": "a boolean", "number": "a number"}
    return names.get(family, "a string" if family == "string" else "null")


def _computed_kind(computed: Answer) -> str:
    type_, dtype = computed["type"], computed.get("dtype")
    if type_ == "tensor":
        return f"a {dtype or ''} tensor of shape {computed.get('shape')}".replace("  ", " ")
    if type_ == "list":
        shape = typed.shape_of(computed.get("value"))
        return f"a list of {dtype}s of shape {shape}" if dtype == "bool" else f"a list of shape {shape}"
    if type_ == "float" and dtype:
        return f"a float (from a {dtype} tensor)"
    names = {
        "none": "None", "bool": "a bool", "int": "an int", "float": "a float", "complex": "a complex number",
        "str": "a string", "shape": "a torch.Size", "dtype": "a dtype", "exception": "an exception",
        "repr": "a value compared by its repr",
    }  # fmt: skip
    return names[type_]


def _family(computed: Answer) -> str:
    """What YAML spelling an answer takes: number, bool, none, list, string, shape or exception."""
    type_, dtype = computed["type"], str(computed.get("dtype", ""))
    if type_ == "tensor" and computed.get("shape") == [] and not dtype.startswith("complex"):
        return "bool" if dtype == "bool" else "number"
    families = {"int": "number", "float": "number", "tensor": "list", "complex": "string", "dtype": "string"}
    return families.get(type_, "string" if type_ in ("str", "repr") else type_)


def _declared_family(declared: JSON) -> str:
    if isinstance(declared, dict):
        return "exception" if "raises" in declared else "shape"
    if isinstance(declared, bool):
        return "bool"
    if isinstance(declared, (int, float)):
        return "number"
    if isinstance(declared, str):
        return "string"
    return "list" if isinstance(declared, list) else "none"


NEAR_MISS = 0.02  # a declared number this close (relatively) is probably the computed one, rounded


def _near_miss(d: float, c: float, tol: Tolerance, where: str = "") -> str:
    """For a number that is the computed one rounded: the tolerance used, and how to change it."""
    if not abs(d - c) <= NEAR_MISS * max(abs(c), abs(d)):
        return ""  # a different number, not a rounding of it: the tolerance is beside the point
    allowed = tol.atol + tol.rtol * abs(c)
    return (
        f"{where}|{d:g} - {c:g}| = {abs(d - c):.3g} is more than the tolerance allows "
        f"(atol {tol.atol:g} + rtol {tol.rtol:g} x |{c:g}| = {allowed:.3g}): declare the computed "
        "value, or set `tolerance: {rtol: ..., atol: ...}` if the difference is noise"
    )


def _yaml(computed: Answer) -> str:
    """The computed answer as an author writes it in YAML (answers YAML writes as a scalar)."""
    scalar = _scalar_of(computed)
    if isinstance(scalar, bool) or scalar is None:
        return {True: "true", False: "false", None: "null"}[scalar]
    if isinstance(scalar, str) and scalar in ("nan", "inf", "-inf"):  # how JSON carries them
        return {"nan": ".nan", "inf": ".inf", "-inf": "-.inf"}[scalar]
    dtype = computed.get("dtype")
    return display.number(scalar, dtype) if computed["type"] == "tensor" else show(computed)


def _list_hint(declared: list[JSON], computed: Answer, tol: Tolerance) -> str:
    tree = typed.from_declared(declared)
    wanted = typed.flatten(computed.get("value"))
    if tree is None or typed.agree(tree, computed, tol)[1]:
        return f"{_declared_kind(declared)} was declared, execution gives {_computed_kind(computed)}"
    for at, (d, c) in enumerate(zip(typed.flatten(tree), wanted, strict=True)):
        if d[0] == "num" and not isinstance(c, (bool, dict)) and not typed.close(d[1], c, tol):
            return _near_miss(d[1], typed.to_number(str(c)), tol, f"element {at}: ")
    return ""


def mismatch_hint(declared: JSON, computed: Answer, tol: Tolerance) -> str:
    """Why a declared answer does not match, and what to write instead (for the author's message)."""
    family, kind = _family(computed), _computed_kind(computed)
    if isinstance(declared, str) and _yaml_scalar(computed):
        if typed.judge(declared, computed, tol)[0]:
            return f"a string was declared, execution gives {kind}: write {_yaml(computed)} without quotes"
        return f"a string was declared, execution gives {kind}"
    if isinstance(declared, str) and family != "string":
        reason = typed.judge(declared, computed, tol)[1] if family == "list" else ""
        return f"the string is read as a learner's typed answer: {reason}" if reason else ""
    if isinstance(declared, list) and family == "list":
        return _list_hint(declared, computed, tol)
    scalar = _scalar_of(computed)
    if _number(declared) is not None and _number(scalar) is not None and family in ("number", "list"):
        return _near_miss(float(declared), float(scalar), tol)  # type: ignore[arg-type]
    if _declared_family(declared) == family:
        return ""
    hint = f"{_declared_kind(declared)} was declared, execution gives {kind}"
    if computed["type"] == "complex" or str(computed.get("dtype", "")).startswith("complex"):
        return f'{hint}: YAML has no complex numbers, quote one (answer: "2+4j")'
    if family == "shape":
        return f"{hint}: declare a shape as {{shape: {computed.get('value')}}}"
    return hint
