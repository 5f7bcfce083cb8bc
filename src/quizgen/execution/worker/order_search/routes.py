"""Steps that run the same statements from one state do the same: a step's run, traced, tells which of
its siblings would run exactly what it ran, and those go on from the state it left (or fail as it did)
without running.

An indented puzzle's step is one top-level statement put together from blocks. Its blocks are read as
Python reads them (`_structure`): simple blocks (a statement, or several, that open no suite), and the
headers `if`, `elif`, `else`, `for` and `while` with their suites. Running a step is a route through
them: *effects* (a simple block run; a `for` header entered or taking its next item; the test of a
header that is not pure) and *pure tests*: an `if`, `elif` or `while` test made only of names,
whole-number constants and arithmetic or comparisons (`(i + 1) % accum == 0`), which changes nothing.

A traced run (`Record`: the step's own lines as they ran, and at each one the values of the names
pure tests read) is read against the step's structure (`Routes.add`); the reading must account for
every line event exactly, each pure test's value computed from the recorded names agreeing with the
branch taken, or the run tells nothing (a step run block by block, order.interpret, writes its
effects down as it runs: `Walked`). What it tells is kept in a trie per state (`Trie`): the
effects in order, the branch each one took, the state's watched names before each, and where the run
ended (its node) or raised. A sibling is then walked through its own structure along the trie
(`Routes.find`): each effect must be the next one recorded (the same block's code, so the same code:
steps are compared by origin, a block's code being the same at every level), a branch goes the way the
recorded one went, and a pure test is computed from the names as they were at that point of the
recorded run. A walk that reaches the end of the sibling where the run ended, or the effect that raised,
is that run.

Why it is sound. From equal states the same effect does the same (the same code; nothing can see line
numbers or columns: Runs.unnumbered), and a pure test reads names only: its value is a function of the
names' values, which are those recorded at that point, since only effects change the state and the
effects before it are the recorded ones. So, step by step, the sibling runs the effects of the recorded
run from the same states and takes the same branches: it ends in the same state, or raises the same.
Python's control among these blocks is what the walk follows: a suite runs when its header's test holds
(or its loop takes an item), an `elif` or `else` when none before it did, a loop's `else` when it ends
(no `break`: a block holding `break`, `continue`, `return` or `yield`, or a header the walk does not
know, `try`, `with`, makes the step unknown). Conditions as for order.reach's rules: the puzzle defines
no function or class and declares nothing global, no block holds an annotated assignment (code that
never runs binds `__annotations__`), and only the step's own frame is read (comprehensions run inside a
block). A pure test whose names are not all bound to `int` or `bool` is no pure test there: the route
is unknown.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from types import CodeType
from typing import NamedTuple, Protocol

from quizgen.execution.worker.order_search.program import Chunk, Program
from quizgen.execution.worker.order_search.structure import (
    ENTER,
    FOR,
    NEXT,
    RUN,
    SIMPLE,
    TEST,
    WHILE,
    Item,
    Pure,
    items,
    read,
)

MISSING = object()  # a watched name unbound, or bound to something other than an int or a bool
_WALK_LIMIT = 4  # a walk makes at most this many times the recorded lines' moves (a loop of pure tests)


class Unknown(Exception):
    """The route cannot be told: the run tells nothing, or the sibling is not the run."""


class _Raised(Exception):
    """The walk reached the effect that raised."""


class _Point:
    """A point of the recorded runs: the watched names there, the effects that follow, and the outcome
    of a run that ended there."""

    __slots__ = ("effects", "ended", "values")

    def __init__(self) -> None:
        self.values: tuple[object, ...] | None = None
        self.effects: dict[tuple[int, int], _Edge] = {}  # by (origin, what it does)
        self.ended: object = None


class _Edge:
    __slots__ = ("agrees", "branch", "raised", "to")

    def __init__(self, branch: bool | None, raised: bool) -> None:
        self.branch = branch  # where a header sent control (None: a simple block)
        self.raised = raised
        self.to = _Point()
        self.agrees = True  # every run that took it went the same way (else: nothing is told past it)


class Trie:
    """The routes of the steps run from one state (a node's siblings)."""

    def __init__(self) -> None:
        self.root = _Point()
        self.moves = 0  # the longest recorded run's line events (bounds a walk)


class Record:
    """A step's run as traced: each line event of its own frame (collapsed to the block it is in) with
    the watched names' values then (as bound: `watched` reads them); filled by the tracer
    (order.reach.Tracer)."""

    def __init__(
        self, code: CodeType, blocks: dict[int, int], names: tuple[str, ...], ns: dict[str, object]
    ) -> None:
        self.code, self.blocks, self.names, self.ns = code, blocks, names, ns
        self.events: list[tuple[int, tuple[object, ...]]] = []
        self.whole = True  # every line of the frame mapped to a block
        self._last = -1
        self._read = _reader(names)

    def line(self, number: int) -> None:
        block = self.blocks.get(number, -1)
        if block < 0:
            self.whole = False
        elif block != self._last:
            self._last = block
            self.events.append((block, self._read(self.ns)))

    def values(self) -> tuple[object, ...]:
        return self._read(self.ns)


class Walked(NamedTuple):
    """A step's route as order.interpret ran it: its effects as _Reading reads a traced run's, and how
    many effects and tests it met (a walk's bound, as a record's line events)."""

    effects: list[tuple[int, int, bool | None, tuple[object, ...] | None, bool]]
    moves: int


@cache
def _reader(names: tuple[str, ...]) -> Callable[[dict[str, object]], tuple[object, ...]]:
    """A function reading the names from a namespace as they are bound (MISSING where they are not):
    called at every line a route records, so one expression, not a loop."""
    gets = "".join(f"ns.get({name!r}, MISSING), " for name in names)
    return eval(f"lambda ns: ({gets})", {"MISSING": MISSING})  # (names: identifiers a test reads)


def watched(values: tuple[object, ...]) -> tuple[object, ...]:
    """The values a pure test may read: ints and bools (anything else is MISSING)."""
    return tuple([v if type(v) is int or type(v) is bool else MISSING for v in values])


class Routes:
    """A program's steps read as routes (see above)."""

    def __init__(self, program: Program) -> None:
        self.program = program
        kinds = [read(code) for code in program.codes]
        self.names = tuple(sorted({name for r in kinds if r is not None for name in r[2]}))
        self._blocks: list[tuple[int, int, Pure | None] | None] = []  # (kind, origin, pure test)
        for block, r in enumerate(kinds):
            if r is None:
                self._blocks.append(None)
                continue
            kind, test, names = r
            pure = None if test is None else (test, tuple(self.names.index(n) for n in names))
            self._blocks.append((kind, program.origin(block), pure))
        self._structures: dict[Chunk, tuple[Item, ...] | None] = {}
        self._values: dict[tuple[CodeType, tuple[object, ...]], bool] = {}

    def record(self, step: Chunk, code: CodeType, numbers: list[int], ns: dict[str, object]) -> Record | None:
        """A record for the step's run (its lines numbered so in `code`), None where it has no route."""
        if self.structure(step) is None:
            return None
        heights = self.program.heights
        blocks: dict[int, int] = {}
        k = 0
        for block in step:
            for _ in range(heights[block]):
                blocks[numbers[k]] = block
                k += 1
        return Record(code, blocks, self.names, ns)

    def add(self, trie: Trie, step: Chunk, record: Record | Walked, raised: bool, outcome: object) -> None:
        """Keep what a run tells (`outcome`: the node it went on to; None where it raised)."""
        if isinstance(record, Walked):  # (run along its structure: its route as it ran, order.interpret)
            _keep(trie, record.effects, outcome)
            trie.moves = max(trie.moves, record.moves)
            return
        structure = self.structure(step)
        if structure is None or not record.whole or not record.events:
            return
        reading = _Reading(self, step, record.events, raised, None if raised else watched(record.values()))
        try:
            run_along(structure, reading)
            if raised or reading.at < len(record.events):
                return  # (a raise the walk did not meet, or lines left over: not this model)
            reading.end()
        except _Raised:
            pass
        except Unknown:
            return
        _keep(trie, reading.effects, outcome)
        trie.moves = max(trie.moves, len(record.events))

    def find(self, trie: Trie, step: Chunk) -> tuple[bool, object] | None:
        """(False, the node) when the step does what a recorded run did; (True, None) when it raises as
        one did; None when neither is known."""
        structure = self.structure(step) if trie.moves else None
        if structure is None:
            return None
        walk = _Walk(self, trie.root, trie.moves * _WALK_LIMIT + 8)
        try:
            run_along(structure, walk)
        except _Raised:
            return True, None
        except Unknown:
            return None
        ended = walk.point.ended
        return None if ended is None else (False, ended)

    def value(self, pure: Pure, values: tuple[object, ...] | None) -> bool:
        """A pure test's value on the watched names."""
        if values is None:
            raise Unknown
        key = pure[0], values
        found = self._values.get(key)
        if found is None:
            bound = {}
            code, where = pure
            for name, k in zip(code.co_names, where, strict=True):
                if values[k] is MISSING:
                    raise Unknown
                bound[name] = values[k]
            try:
                found = self._values[key] = bool(eval(code, {"__builtins__": {}}, bound))
            except ArithmeticError:
                raise Unknown from None
        return found

    def kind(self, block: int) -> int | None:
        """The block's kind as the walk reads it (structure.read: SIMPLE, IF, ...); None: unknown."""
        known = self._blocks[block]
        return None if known is None else known[0]

    def reader(self) -> Callable[[dict[str, object]], tuple[object, ...]]:
        """Reads the watched names from a namespace (MISSING where unbound)."""
        return _reader(self.names)

    def structure(self, step: Chunk) -> tuple[Item, ...] | None:
        """The step's blocks as Python reads them; None where one is not a known kind."""
        found = self._structures.get(step, False)
        if found is False:
            found = self._structures[step] = self._structure(step)
        return found  # type: ignore[return-value]

    def _structure(self, step: Chunk) -> tuple[Item, ...] | None:
        blocks = []
        for block in step:
            known = self._blocks[block]
            if known is None:
                return None
            blocks.append(known)
        return items(step, [self.program.levels[b] for b in step], blocks)


class _Reading:
    """Reading a run's line events against its step's structure (Routes.add): each effect with the
    watched names before it (equal at every line since the effect before: pure tests change nothing)."""

    def __init__(
        self,
        routes: Routes,
        step: Chunk,
        events: list[tuple[int, tuple[object, ...]]],
        raised: bool,
        final: tuple[object, ...] | None,
    ) -> None:
        self.routes, self.events, self.raised, self.final = routes, events, raised, final
        self.position = {block: k for k, block in enumerate(step)}
        self.at = 0
        self.moves = len(events) * _WALK_LIMIT + 8
        self.values: tuple[object, ...] | None = None  # the names at this point of the run
        self.effects: list[tuple[int, int, bool | None, tuple[object, ...] | None, bool]] = []

    def _next(self, block: int) -> tuple[object, ...]:
        """Take the next line event, which must be the block's; the names then."""
        self.moves -= 1
        if self.moves < 0 or self.at >= len(self.events) or self.events[self.at][0] != block:
            raise Unknown
        values = watched(self.events[self.at][1])
        if self.values is None:
            self.values = values
        elif values != self.values:
            raise Unknown  # (the names changed without an effect: not this model)
        self.at += 1
        return values

    def effect(self, item: Item, does: int) -> bool | None:
        values = self._next(item[1])
        self.values = None
        last = self.at == len(self.events)
        if last and self.raised:
            self.effects.append((item[2], does, None, values, True))
            raise _Raised
        branch = None
        if does != RUN:
            branch = not last and item[6] <= self.position[self.events[self.at][0]] < item[7]
        self.effects.append((item[2], does, branch, values, False))
        return branch

    def test(self, item: Item) -> bool | None:
        if item[5] is None:
            return self.effect(item, TEST)
        values = self._next(item[1])
        if self.at == len(self.events) and self.raised:
            raise Unknown  # (a pure test does not raise: not this model)
        return self.routes.value(item[5], values)

    def end(self) -> None:
        """The run ended: the names as it left them."""
        if self.values is not None and self.values != self.final:
            raise Unknown
        self.effects.append((-1, RUN, None, self.final, False))


class _Walk:
    """Walking a sibling's structure along a trie (Routes.find)."""

    def __init__(self, routes: Routes, point: _Point, moves: int) -> None:
        self.routes, self.point, self.moves = routes, point, moves

    def effect(self, item: Item, does: int) -> bool | None:
        self.moves -= 1
        edge = self.point.effects.get((item[2], does))
        if edge is None or not edge.agrees or self.moves < 0:
            raise Unknown
        if edge.raised:
            raise _Raised
        self.point = edge.to
        return edge.branch

    def test(self, item: Item) -> bool | None:
        if item[5] is None:
            return self.effect(item, TEST)
        self.moves -= 1
        if self.moves < 0:
            raise Unknown
        return self.routes.value(item[5], self.point.values)


class Walker(Protocol):
    """What follows control through a step: tells each effect's branch and each test's value (reading a
    traced run, walking a trie, or running the step: order.interpret)."""

    def effect(self, item: Item, does: int) -> bool | None: ...

    def test(self, item: Item) -> bool | None: ...


def run_along(items: tuple[Item, ...], walker: Walker) -> None:
    """Follow control through the items as Python would, the walker telling each effect's branch and
    each test's value."""
    for item in items:
        kind = item[0]
        if kind == SIMPLE:
            walker.effect(item, RUN)
        elif kind == FOR:
            more = walker.effect(item, ENTER)
            while more:
                run_along(item[3], walker)
                more = walker.effect(item, NEXT)
            run_along(item[4], walker)
        elif kind == WHILE:
            while walker.test(item):
                run_along(item[3], walker)
            run_along(item[4], walker)
        else:  # IF, ELIF
            run_along(item[3] if walker.test(item) else item[4], walker)


def _keep(
    trie: Trie, effects: list[tuple[int, int, bool | None, tuple[object, ...] | None, bool]], outcome: object
) -> None:
    """Add a read run to the trie: its effects in order, the names before each, where it ended."""
    point = trie.root
    for origin, does, branch, values, raised in effects:
        if point.values is None:
            point.values = values
        elif point.values != values:
            return  # (the same effects from one state left other values: tell nothing more)
        if origin < 0:
            if point.ended is None and outcome is not None:
                point.ended = outcome
            return
        edge = point.effects.get((origin, does))
        if edge is None:
            edge = point.effects[(origin, does)] = _Edge(branch, raised)
        elif edge.branch != branch or edge.raised != raised:
            edge.agrees = False
            return
        point = edge.to
