"""A job's result record as its process sent it, checked against the protocol before anyone trusts it.

The job's process runs the card's snippet, so what it sends is the snippet's to choose: a record of the
wrong shape (a list where an answer goes), fields the protocol does not have, or millions of tiny values
that a few MiB of JSON turn into gigabytes of objects in quizgen. The worker reads at most RESULT_LIMIT
bytes, parses them with a bound on their nesting, and keeps the record only if every field is what
protocol.Result says, within its limits; anything else is that card's own error. What it sends on is
written again from the checked record (so the zygote's copy has the same size).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from quizgen.constants import MAX_ANSWER_TEXT, OUTPUT_LIMIT, RESULT_LIMIT
from quizgen.execution.protocol import ANSWER_TYPES, Result

NODE_LIMIT = 200_000  # JSON values in one record (the shipped deck's largest holds 415; a tensor 10,000)
BUILD_NODE_LIMIT = 4_000_000  # in all the records of one run of the pool: ~250 MB of objects at most
TEXT_LIMIT = 1 << 20  # characters of one error, traceback or message

Check = Callable[[Any, str], None]


class Malformed(ValueError):
    """The record is not one the protocol allows (the message says where)."""


def _is(*types: type) -> Check:
    def check(value: Any, where: str) -> None:
        if not isinstance(value, types) or (isinstance(value, bool) and bool not in types):
            raise Malformed(f"{where}: not a {'/'.join(t.__name__ for t in types)}")

    return check


def _text(limit: int = TEXT_LIMIT) -> Check:
    def check(value: Any, where: str) -> None:
        _is(str)(value, where)
        if len(value) > limit:
            raise Malformed(f"{where}: longer than {limit:,} characters")

    return check


def _list(item: Check) -> Check:
    def check(value: Any, where: str) -> None:
        _is(list)(value, where)
        for n, element in enumerate(value):
            item(element, f"{where}[{n}]")

    return check


def _fields(required: Mapping[str, Check], optional: Mapping[str, Check] = {}) -> Check:
    def check(value: Any, where: str) -> None:
        _is(dict)(value, where)
        for name in value:
            if name not in required and name not in optional:
                raise Malformed(f"{where}: no field {name[:40]!r} in the protocol")
        for name, field in required.items():
            if name not in value:
                raise Malformed(f"{where}: no {name}")
            field(value[name], f"{where}.{name}")
        for name, field in optional.items():
            if name in value:
                field(value[name], f"{where}.{name}")

    return check


def _mapping(item: Check) -> Check:
    def check(value: Any, where: str) -> None:
        _is(dict)(value, where)
        for name, element in value.items():
            item(element, f"{where}[{name[:40]!r}]")

    return check


def _answer_type(value: Any, where: str) -> None:
    if value not in ANSWER_TYPES:
        raise Malformed(f"{where}: not an answer type")


def _any(value: Any, where: str) -> None:
    """Any JSON value (its size is bounded by the node count)."""


_INT, _NUMBER, _INTS = _is(int), _is(int, float), _list(_is(int))
_ANSWER = _fields(
    {"type": _answer_type, "value": _any, "display": _text(4 * MAX_ANSWER_TEXT)},
    {"dtype": _text(64), "shape": _INTS, "message": _text()},
)
_RESULT = _fields(
    {"ok": _is(bool), "output": _text(OUTPUT_LIMIT + 200)},  # (+ the note of what was cut)
    {
        "seconds": _NUMBER,
        "error": _text(),
        "internal": _text(),
        "value": _ANSWER,
        "raised": _fields(
            {
                "frames": _list(_fields({"snippet": _INT, "offset": _INT, "name": _text(), "text": _text()})),
                "exception": _text(),
            }
        ),
        "orders": _list(_INTS),
        "placements": _list(_list(_INTS)),
        "usable_distractors": _list(_fields({"distractor": _INT, "order": _INTS}, {"levels": _INTS})),
        "tried": _INT,
        "feedback": _list(
            _fields(
                {
                    "order": _INTS,
                    "block": _INT,
                    "text": _text(),
                    "exception": _text(),
                    "values": _mapping(_text()),
                },
                {"distractor": _INT, "level": _INT, "levels": _INTS},
            )
        ),
        "cited": _mapping(_ANSWER),
        "retire": _is(bool),
    },
)


def _nodes(value: Any) -> int:
    """How many JSON values `value` holds, counted without recursion, stopping past NODE_LIMIT."""
    count, stack = 0, [value]
    while stack and count <= NODE_LIMIT:
        item = stack.pop()
        count += 1
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return count


def parse(data: bytes) -> Result:
    """The record in `data` (one JSON line), checked; Malformed says why it is not one."""
    if len(data) > RESULT_LIMIT:
        raise Malformed(f"its result is larger than {RESULT_LIMIT >> 20} MiB")
    try:
        record = json.loads(data)
    except (ValueError, RecursionError) as exc:  # nested past Python's limit: RecursionError
        raise Malformed(f"not JSON ({type(exc).__name__})") from None
    nodes = _nodes(record)
    if nodes > NODE_LIMIT:
        raise Malformed(f"its result holds more than {NODE_LIMIT:,} values")
    _RESULT(record, "result")
    if len(json.dumps(record)) > RESULT_LIMIT:  # as the zygote writes it again (\u escapes)
        raise Malformed(f"its result is larger than {RESULT_LIMIT >> 20} MiB")
    result: Result = record
    result["nodes"] = nodes  # the worker's count, for the parent's budget of all records (pool.py)
    return result
