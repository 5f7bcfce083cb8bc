"""Torch version numbers and ranges, as a project's matrix and a card's `torch:` field write them.

Only release numbers (`1.13.1`, `2.0`): a missing part is zero, so `2.0` and `2.0.0` are one version. A
range is clauses joined by commas, each an operator and a version: `>=2.0`, `>=1.13,<2.0`, `==1.13.1`.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable, Iterable

VERSION = re.compile(r"^\d+\.\d+\.\d+$", re.ASCII)  # a release, as torch names them (a matrix lists releases)
_CLAUSE = re.compile(r"^\s*(>=|<=|==|!=|>|<)\s*(\d+(?:\.\d+){0,2})\s*$", re.ASCII)
_OPERATORS: dict[str, Callable[[tuple[int, ...], tuple[int, ...]], bool]] = {
    ">=": operator.ge,
    "<=": operator.le,
    "==": operator.eq,
    "!=": operator.ne,
    ">": operator.gt,
    "<": operator.lt,
}


def key(version: str) -> tuple[int, ...]:
    """A version for comparing: its numbers, padded to three (a local part like `+cpu` left out)."""
    numbers = [int(n) for n in re.findall(r"\d+", version.split("+")[0])[:3]]
    return tuple(numbers + [0] * (3 - len(numbers)))


def release(version: str) -> str:
    """The release a version names, without a local part: `2.13.0+cpu` -> `2.13.0`."""
    return version.split("+")[0].strip()


def same(a: str, b: str) -> bool:
    return key(a) == key(b)


def ordered(versions: Iterable[str]) -> list[str]:
    """The versions, oldest first, each once."""
    unique: dict[tuple[int, ...], str] = {}
    for version in versions:
        unique.setdefault(key(version), version)
    return [unique[k] for k in sorted(unique)]


def range_problem(text: str) -> str:
    """Why `text` is not a version range ("" when it is one)."""
    clauses = text.split(",")
    for clause in clauses:
        if not _CLAUSE.match(clause):
            return (
                f"expected a torch version range such as '>=2.0' or '>=1.13,<2.0' (operators >=, >, <=, <, "
                f"==, !=), not {text!r}"
            )
    return ""


def clauses(text: str) -> list[tuple[str, str]]:
    """The range's clauses as (operator, version), in the order written (a range that is none: empty)."""
    found = [_CLAUSE.match(clause) for clause in text.split(",")] if text.strip() else []
    return [(m.group(1), m.group(2)) for m in found if m is not None]


def in_range(version: str, text: str) -> bool:
    """Whether the version lies in the range (every version lies in the empty range)."""
    if not text.strip():
        return True
    for clause in text.split(","):
        found = _CLAUSE.match(clause)
        if found is None or not _OPERATORS[found.group(1)](key(version), key(found.group(2))):
            return False
    return True
