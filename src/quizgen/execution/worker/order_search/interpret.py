"""An indented puzzle's step run block by block along its structure, as Python would run it compiled whole.

The fast search runs thousands of distinct statements once each (the shipped loop: ~1,700 loops with
different bodies). Compiling each cost ~0.2 ms, and telling its siblings what it did needed its lines
traced, which slows every Python frame torch runs meanwhile. A step whose structure order.routes reads
(simple blocks; `if`, `elif`, `else`, `for` and `while` with their suites) is instead run here: each
block's code compiled once for the whole search, control walked as Python walks it (routes.run_along), and
the route (the effects in order, the branches taken, the watched names before each) written down as it
runs, with the blocks control reached: what a traced run tells, without a tracer.

Why it runs what the compiled statement runs. At the top level of a module (every step is compiled as
one: Runs.step) a simple statement compiles to the same operations on the namespace inside a loop or an
`if` as alone, and a test or a loop's iterable is an expression evaluated there. A `for` evaluates its
iterable once, takes `iter()` of it and `next()` until StopIteration, binding each item to its target
as an assignment statement does (here a function whose target names are `global`: stored in the same
namespace by name, read from it and then builtins, as at the top level); its `else` runs when it ends. An
`if`, `elif` or `while` test is taken for its truth as the compiled jump takes it (`bool`, `__bool__`).
With no `break`, `continue`, `return`, `yield`, `try` or `with` among the blocks (routes reads none of
them), that is all of Python's control among them. What differs is only what no block can see where the
search runs steps this way (Runs.unnumbered, routes' conditions): the traceback's frames and line
numbers. One thing Python does by position is kept: a string alone as a module's first statement binds
`__doc__`, so a simple block that begins the step is compiled as the step's first statement, every other
one as not.

Only the fast search's tree runs steps so; the plain search compiles each candidate's steps whole, so the
two searches' agreement (the tests' corpora) checks this against Python itself.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator
from types import CodeType, FunctionType
from typing import NamedTuple

from quizgen.execution.worker.order_search.program import Chunk
from quizgen.execution.worker.order_search.routes import Item, Routes, Unknown, Walked, run_along, watched
from quizgen.execution.worker.order_search.structure import ELIF, ELSE, ENTER, FOR, NEXT, RUN, SIMPLE, TEST

# Python's own, taken as this module loads: the compiled statement's GET_ITER, FOR_ITER and jumps do not
# look them up, so neither does a step run here (card code may rebind `builtins.iter`, say).
_exec, _eval, _iter, _next_item, _truth = exec, eval, iter, next, bool


class _Block(NamedTuple):
    """A block compiled to be run alone: a simple block's code (as a step's first statement, and as any
    other), a header's test or iterable, a `for` target's binding."""

    code: CodeType | None
    first: CodeType | None = None
    assign: CodeType | None = None


class Interpreter:
    """Runs an indented program's steps that have a structure (Routes.structure), block by block."""

    def __init__(self, routes: Routes, path: str) -> None:
        self.routes, self.path = routes, path
        self._blocks: dict[int, _Block] = {}  # by block (its code at its level)

    def start(self, step: Chunk, ns: dict[str, object], record: bool) -> Run | None:
        """The step's run on `ns`, to `go` (None where it has no structure: it is compiled whole)."""
        structure = self.routes.structure(step)
        return None if structure is None else Run(self, structure, step, ns, record)

    def block(self, block: int) -> _Block:
        found = self._blocks.get(block)
        if found is None:
            found = self._blocks[block] = self._compile(block)
        return found

    def _compile(self, block: int) -> _Block:
        text = self.routes.program.codes[block].strip()
        kind = self.routes.kind(block)
        if kind == SIMPLE:
            tree = ast.parse(text)
            first = compile(tree, self.path, "exec", dont_inherit=True)
            tree.body.insert(0, ast.Pass(lineno=1, col_offset=0, end_lineno=1, end_col_offset=0))
            return _Block(compile(tree, self.path, "exec", dont_inherit=True), first)  # (no docstring)
        if kind == ELSE:
            return _Block(None)
        header = ast.parse(("if" + text[4:] if kind == ELIF else text) + " pass").body[0]
        if kind != FOR:
            return _Block(self._expression(header.test))  # type: ignore[attr-defined]
        assert isinstance(header, ast.For)
        return _Block(self._expression(header.iter), assign=self._binding(header.target))

    def _expression(self, node: ast.expr) -> CodeType:
        return compile(ast.Expression(node), self.path, "eval", dont_inherit=True)

    def _binding(self, target: ast.expr) -> CodeType:
        """A function's code binding its argument to a `for` target as the loop does (the target's
        names global: the namespace it runs in)."""
        names = sorted({n.id for n in ast.walk(target) if isinstance(n, ast.Name)})
        item = "item"
        while item in names:
            item += "_"
        stored = sorted(
            {n.id for n in ast.walk(target) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
        )
        declared = f"    global {', '.join(stored)}\n" if stored else ""
        source = f"def bind({item}):\n{declared}    {ast.unparse(target)} = {item}\n"
        scope: dict[str, object] = {}
        exec(compile(source, self.path, "exec", dont_inherit=True), scope)
        function = scope["bind"]
        assert isinstance(function, FunctionType)
        return function.__code__


class Run:
    """One step's run: the walker routes.run_along drives, running each effect as it is met. `go` runs
    it (what a block raises propagates); then `reached` holds the positions in the step of the blocks
    control reached, and `route` tells its route (routes.Walked; None where it tells nothing)."""

    def __init__(
        self,
        interpreter: Interpreter,
        structure: tuple[Item, ...],
        step: Chunk,
        ns: dict[str, object],
        record: bool,
    ) -> None:
        self.interpreter, self.structure, self.ns, self.step = interpreter, structure, ns, step
        self.position = {block: k for k, block in enumerate(step)}
        self.reached: set[int] = set()
        # each loop entered: its iterator, and its target's binding (a function of the namespace)
        self.iterators: dict[int, tuple[Iterator[object], Callable[[object], object]]] = {}
        self.known = record  # the route can be told (a pure test on names that are not numbers: not)
        self.effects: list[tuple[int, int, bool | None, tuple[object, ...] | None, bool]] = []
        self.moves = 0
        self._values: tuple[object, ...] | None = None  # the watched names at this point
        self._read: Callable[[dict[str, object]], tuple[object, ...]] = interpreter.routes.reader()

    def go(self) -> None:
        try:
            run_along(self.structure, self)
        finally:
            self.iterators.clear()  # (as the compiled loop lets go of them when control leaves it)

    def values(self) -> tuple[object, ...]:
        if self._values is None:
            self._values = watched(self._read(self.ns))
        return self._values

    def effect(self, item: Item, does: int) -> bool | None:
        block = item[1]
        at = self.position[block]
        self.reached.add(at)
        self.moves += 1
        values = self.values() if self.known else None
        compiled = self.interpreter.block(block)
        ns = self.ns
        try:
            if does == RUN:
                _exec(compiled.first if at == 0 else compiled.code, ns)  # type: ignore[arg-type]
                branch = None
            elif does == ENTER:
                iterator = _iter(_eval(compiled.code, ns))  # type: ignore[arg-type]
                self.iterators[item[6]] = iterator, FunctionType(compiled.assign, ns)  # type: ignore[arg-type]
                branch = self._next(item)
            elif does == NEXT:
                branch = self._next(item)
            else:  # a test with effects of its own (routes: TEST)
                branch = _truth(_eval(compiled.code, ns))  # type: ignore[arg-type]
        except BaseException:
            if self.known:
                self.effects.append((item[2], does, None, values, True))
            raise
        if self.known:
            self.effects.append((item[2], does, branch, values, False))
        self._values = None
        return branch

    def _next(self, item: Item) -> bool:
        """The loop's next item bound to its target; False once it has none."""
        iterator, bind = self.iterators[item[6]]
        try:
            value = _next_item(iterator)
        except StopIteration:
            del self.iterators[item[6]]
            return False
        bind(value)
        return True

    def test(self, item: Item) -> bool | None:
        pure = item[5]
        if pure is None:
            return self.effect(item, TEST)
        self.reached.add(self.position[item[1]])
        self.moves += 1
        try:
            value = _truth(_eval(self.interpreter.block(item[1]).code, self.ns))  # type: ignore[arg-type]
        except BaseException:
            self.known = False  # (a pure test does not raise in a route: nothing is told)
            raise
        if self.known:
            try:
                self.known = self.interpreter.routes.value(pure, self.values()) == value
            except Unknown:
                self.known = False
        return value

    def route(self, raised: bool) -> Walked | None:
        if not self.known or (not self.moves and not raised):
            return None
        effects = self.effects if raised else [*self.effects, (-1, RUN, None, self.values(), False)]
        return Walked(effects, self.moves)
