"""A job's result record as its process sent it, checked against the protocol before anyone trusts it.

The job's process runs the card's snippet, so what it sends is the snippet's to choose: a record of the
wrong shape (a list where an answer goes), fields the protocol does not have, or millions of tiny values
that a few MiB of JSON turn into gigabytes of objects in quizgen. The worker reads at most RESULT_LIMIT
bytes, parses them with a bound on their nesting, and keeps the record only if every field is what
protocol.Result says, within its limits; anything else is that card's own error. What it sends on is
written again from the checked record (so the zygote's copy has the same size). The checks are made from
protocol.py's TypedDicts themselves: a field added there is checked here without a word.
"""

from __future__ import annotations

import json
import types
import typing
from collections.abc import Callable
from typing import Any

from quizgen.constants import OUTPUT_LIMIT, RESULT_LIMIT
from quizgen.execution.protocol import JSON, Result

NODE_LIMIT = 200_000  # JSON values in one record (the shipped deck's largest holds 415; a tensor 10,000)
BUILD_NODE_LIMIT = 4_000_000  # in all the records of one run of the pool: ~250 MB of objects at most
TEXT_LIMIT = 1 << 20  # characters of one error, traceback or message

Check = Callable[[Any, str], None]


class Malformed(ValueError):
    """The record is not one the protocol allows (the message says where)."""


def _typed(*types: type) -> Check:
    def check(value: Any, where: str) -> None:
        # bool is an int to Python, not to the protocol; an int is a float to JSON
        if not isinstance(value, types) or (isinstance(value, bool) and bool not in types):
            raise Malformed(f"{where}: not a {'/'.join(t.__name__ for t in types)}")

    return check


def _text(value: Any, where: str) -> None:
    _typed(str)(value, where)
    if len(value) > TEXT_LIMIT:
        raise Malformed(f"{where}: longer than {TEXT_LIMIT:,} characters")


def _list(item: Check) -> Check:
    def check(value: Any, where: str) -> None:
        _typed(list)(value, where)
        for n, element in enumerate(value):
            item(element, f"{where}[{n}]")

    return check


def _mapping(item: Check) -> Check:
    def check(value: Any, where: str) -> None:
        _typed(dict)(value, where)
        for name, element in value.items():
            item(element, f"{where}[{name[:40]!r}]")

    return check


def _one_of(allowed: tuple[Any, ...]) -> Check:
    def check(value: Any, where: str) -> None:
        if value not in allowed:
            raise Malformed(f"{where}: not one of {', '.join(map(repr, allowed[:6]))}...")

    return check


def _any(value: Any, where: str) -> None:
    """Any JSON value (its size is bounded by the count of values)."""


def _record(spec: type) -> Check:
    """A check of a TypedDict of the protocol: its fields, each of its type, and no other."""
    # NotRequired read from the hints themselves: protocol.py's annotations are strings (PEP 563), which
    # TypedDict does not look into for __required_keys__.
    hints = typing.get_type_hints(spec, include_extras=True)
    required = {name for name, hint in hints.items() if typing.get_origin(hint) is not typing.NotRequired}
    fields = {name: _of(typing.get_args(h)[0] if name not in required else h) for name, h in hints.items()}

    def check(value: Any, where: str) -> None:
        _typed(dict)(value, where)
        for name in value:
            if name not in fields:
                raise Malformed(f"{where}: no field {name[:40]!r} in the protocol")
        for name, field in fields.items():
            if name in value:
                field(value[name], f"{where}.{name}")
            elif name in required:
                raise Malformed(f"{where}: no {name}")

    return check


def _of(hint: Any) -> Check:
    """The check of a value of type `hint`, as protocol.py writes its types."""
    if hint == JSON or hint == typing.ForwardRef("JSON"):  # any JSON value (its nested parts: by name)
        return _any
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is typing.Literal:
        return _one_of(args)
    if origin is list:
        return _list(_of(args[0]))
    if origin is dict:
        return _mapping(_of(args[1]))
    if origin in (typing.Union, types.UnionType):
        options = [_of(a) for a in args]

        def either(value: Any, where: str) -> None:
            for option in options:
                try:
                    return option(value, where)
                except Malformed:
                    continue
            raise Malformed(f"{where}: not a {hint}")

        return either
    if typing.is_typeddict(hint):
        return _record(hint)
    if hint is str:
        return _text
    if hint is float:
        return _typed(int, float)
    if hint is type(None):
        return _one_of((None,))
    if hint in (bool, int):
        return _typed(hint)
    raise TypeError(f"records.py cannot check {hint!r}: teach it")  # quizgen's own protocol grew a type


_RESULT = _record(Result)


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
    if len(record["output"]) > OUTPUT_LIMIT + 200:  # (+ the note of what was cut)
        raise Malformed(f"result.output: longer than {OUTPUT_LIMIT:,} characters")
    if len(json.dumps(record)) > RESULT_LIMIT:  # as the zygote writes it again (\u escapes)
        raise Malformed(f"its result is larger than {RESULT_LIMIT >> 20} MiB")
    result: Result = record
    result["nodes"] = nodes  # the worker's count, for the parent's budget of all records (pool.py)
    return result
