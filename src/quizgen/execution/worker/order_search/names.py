"""The names an order puzzle's code reads and binds, and which variables are live at each point of a
candidate's run (only live ones are part of its state). Pure: no torch.
"""

from __future__ import annotations

import ast
import io
import tokenize
from collections.abc import Sequence
from dataclasses import dataclass

from quizgen.execution.worker.order_search.program import Chunk, Orders, Program

# Names through which code can read any variable: every variable then counts as read.
_INTROSPECTION = {
    "globals", "locals", "vars", "dir", "eval", "exec", "sys", "inspect", "__import__", "importlib",
    "builtins", "__builtins__", "breakpoint", "compile",
}  # fmt: skip
# Attributes that lead to a namespace whatever they are read from (a function's globals, a frame's).
_INTROSPECTING_ATTRIBUTES = {
    "__globals__", "__builtins__", "f_globals", "f_locals", "f_back", "gi_frame", "cr_frame", "tb_frame",
    "__import__",
}  # fmt: skip
# Names through which code can see objects outside its namespace: no snapshot can be trusted.
_REACHES_OUT = {"gc", "ctypes"}
# Names through which tensors can share data without sharing a version counter (which autograd checks
# and a fingerprint cannot see), or autograd can run code of the card's: graphs are then not compared.
_GRAPH_BLIND = {
    "data", "set_", "numpy", "from_numpy", "frombuffer", "as_tensor", "untyped_storage", "storage",
    "_version", "register_hook", "register_prehook", "retain_grad", "saved_tensors_hooks", "Function",
    "hooks", "graph",
}  # fmt: skip
# Names through which code can look below a graph's first node, or run a backward pass that starts
# below it (only towards some inputs, which decides whether that node runs): a graph whose first node
# was freed by a backward is then more than that node (order.tensors: graphs kept whole).
_GRAPH_INSIDE = {
    *_GRAPH_BLIND, *_INTROSPECTION, *_INTROSPECTING_ATTRIBUTES, *_REACHES_OUT, "grad_fn", "next_functions",
    "autograd", "inputs", "func", "functorch", "getattr", "__dict__", "__getattribute__", "_C",
}  # fmt: skip
# Names through which code can see where in its line an expression is (a traceback's carets, a code
# object's positions): statements that differ only so do the same elsewhere (order.program.same_code).
_COLUMNS = {
    "sys", "inspect", "traceback", "__traceback__", "tb_frame", "co_positions", "co_linetable", "logging",
    "exc_info", "dis", "_getframe", "currentframe", "f_code", "gi_code", "__code__",
}  # fmt: skip
# Names through which code can see which line of the card file a statement is (a warning's or a frame's
# line number, code reading its own source): code numbered otherwise does the same elsewhere.
_LINES = {
    *_COLUMNS, "warnings", "catch_warnings", "showwarning", "lineno", "f_lineno", "tb_lineno", "gi_frame",
    "cr_frame", "ag_frame", "f_back", "co_firstlineno", "co_lines", "co_lnotab", "linecache", "jit",
    "compile", "_dynamo", "getsource",
}  # fmt: skip
# Names through which code can read a storage's bytes beyond the tensors that view it.
_BEYOND_VIEWS = {
    *_GRAPH_BLIND, "as_strided", "as_strided_", "resize", "resize_", "resize_as_", "data_ptr",
    "_typed_storage", "stride_tricks", "from_file",
}  # fmt: skip


@dataclass(frozen=True)
class Names:
    reads: frozenset[str]  # variables the step may read (at the top level or in a loop, `with`, ...)
    kills: frozenset[str]  # variables every run of the step binds anew at the top level
    deferred: frozenset[str]  # names read inside function, lambda and class bodies: read any time later


def names(source: str) -> Names:
    """The names a piece of code reads and binds (source that does not parse reads and binds none)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return Names(frozenset(), frozenset(), frozenset())
    reads: set[str] = set()
    deferred: set[str] = set()
    kills: set[str] = set()
    for stmt in tree.body:
        kills |= always_binds(stmt)
    _collect(tree, reads, deferred, False)
    return Names(frozenset(reads), frozenset(kills), frozenset(deferred))


def always_binds(stmt: ast.stmt) -> set[str]:
    """Names a top-level statement always binds when it completes."""
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {stmt.name}
    if isinstance(stmt, (ast.Import, ast.ImportFrom)):
        return {(a.asname or a.name).split(".")[0] for a in stmt.names if a.name != "*"}
    targets: list[ast.expr] = []
    if isinstance(stmt, ast.Assign):
        targets = list(stmt.targets)
    elif isinstance(stmt, (ast.AnnAssign, ast.AugAssign)) and (
        stmt.value is not None or isinstance(stmt, ast.AugAssign)
    ):
        targets = [stmt.target]
    bound: set[str] = set()
    while targets:
        target = targets.pop()
        if isinstance(target, ast.Name):
            bound.add(target.id)
        elif isinstance(target, (ast.Tuple, ast.List)):
            targets.extend(target.elts)
        elif isinstance(target, ast.Starred):
            targets.append(target.value)
    return bound


def _collect(node: ast.AST, reads: set[str], deferred: set[str], inside: bool) -> None:
    nested = isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef))
    for child in ast.iter_child_nodes(node):
        body_part = nested and not _evaluated_at_definition(node, child)
        _collect(child, reads, deferred, inside or body_part)
    if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Load, ast.Del)):
        (deferred if inside else reads).add(node.id)
    elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
        (deferred if inside else reads).add(node.target.id)


def _evaluated_at_definition(node: ast.AST, child: ast.AST) -> bool:
    """Decorators, defaults, bases and annotations run when the def or class does, not later."""
    if (
        isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
        and child in node.decorator_list
    ):
        return True
    if isinstance(node, ast.ClassDef):
        return child in node.bases or child in node.keywords
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
        return child is node.args
    return False


def _reached(source: str) -> tuple[set[str], set[str]]:
    """The names the code reads or imports, and the attributes it reads. A block that does not parse
    alone (`for k in vars():`) counts every word it has as both: more than it uses is safe."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        words = identifiers_of(source)
        return words, words
    found, attributes = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            found.add(node.id)
        elif isinstance(node, ast.Attribute):
            attributes.add(node.attr)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            found.update(a.name.split(".")[0] for a in node.names)
            if isinstance(node, ast.ImportFrom) and node.module:
                found.add(node.module.split(".")[0])
    return found, attributes


def introspects(sources: Sequence[str]) -> bool:
    """Whether some code can read variables by other means than their names (`model.eval()` is a
    method, not the builtin: attributes count only where they lead to a namespace)."""
    for source in sources:
        found, attributes = _reached(source)
        if found & _INTROSPECTION or attributes & _INTROSPECTING_ATTRIBUTES:
            return True
    return False


def reaches_out(sources: Sequence[str]) -> bool:
    """Whether some code can see objects outside its namespace (then only the plain search is sound)."""
    return any(set().union(*_reached(s)) & _REACHES_OUT for s in sources)


def graphs_comparable(sources: Sequence[str]) -> bool:
    """Whether autograd graphs in the state can be compared (order.tensors): no code can make tensors
    share data behind autograd's back or hook into a backward pass."""
    return not any(identifiers_of(s) & _GRAPH_BLIND for s in sources)


def freed_graphs_shareable(sources: Sequence[str]) -> bool:
    """Whether a tensor whose graph's first node a backward freed can be shared by branches as it is
    (order.tensors): no code looks below that node or runs a backward that could start below it, so
    every backward through it raises there, before any node of the graph runs (_GRAPH_INSIDE)."""
    return not any(identifiers_of(s) & _GRAPH_INSIDE for s in sources)


def reads_columns(sources: Sequence[str]) -> bool:
    """Whether some code can tell apart statements that differ only in their columns (_COLUMNS)."""
    return any(identifiers_of(s) & _COLUMNS for s in sources)


def reads_lines(sources: Sequence[str]) -> bool:
    """Whether some code can tell apart statements that differ only in their lines' numbers (_LINES)."""
    return any(identifiers_of(s) & _LINES for s in sources)


def views_only(sources: Sequence[str]) -> bool:
    """Whether no code can read a tensor's storage beyond what the tensors viewing it span (bytes an
    op left there unused, uninitialized, are then no part of the state)."""
    return not any(identifiers_of(s) & _BEYOND_VIEWS for s in sources)


class Liveness:
    """Which variables the rest of a candidate's run may still read: only they are part of its state.

    A variable is live when some step to come reads it before a step binds it anew; names read inside
    function bodies are always live, and every variable is when some code can read variables by other
    means (None stands for all of them). Without indentation the dependencies tell which blocks come
    first in every candidate, so a variable a block reads is dead when a block that must precede it
    binds the variable anew.
    """

    def __init__(
        self, program: Program, orders: Orders, repeat: int, check: str, always: frozenset[str] | None
    ) -> None:
        self.program, self.blocks, self.repeat, self.always = program, orders.blocks, repeat, always
        self.check = names(check)
        self.block_names = {b: self._block_names(b) for b in self.blocks}
        self.preceding = _closure(orders.needs, self.blocks)
        self.kills_all = frozenset().union(*(self.block_names[b].kills for b in self.blocks))
        self.next_pass = self._pass_live(orders.full) if repeat > 1 else frozenset()
        self._steps: dict[Chunk, Names] = {}
        self._complete: dict[tuple[tuple[Chunk, ...], int], frozenset[str]] = {}
        self._prefix: dict[int, frozenset[str] | None] = {}

    def _block_names(self, b: int) -> Names:
        code = self.program.codes[b]
        if not self.program.indented:
            return names(code)
        everything = frozenset(identifiers_of(code))  # a block alone may not parse: every word it has
        return Names(everything, frozenset(), frozenset())

    def _pass_live(self, unplaced: int) -> frozenset[str]:
        live: set[str] = set()
        for b in self.blocks:
            if unplaced >> b & 1:
                killed = set().union(
                    *(self.block_names[k].kills for k in self.preceding[b] if unplaced >> k & 1)
                )
                live |= self.block_names[b].reads - killed
        return frozenset(live)

    def of_prefix(self, placed: int) -> frozenset[str] | None:
        """The live variables after the blocks in `placed` ran in the first pass."""
        if placed not in self._prefix:
            self._prefix[placed] = self._of_prefix(placed)
        return self._prefix[placed]

    def _of_prefix(self, placed: int) -> frozenset[str] | None:
        if self.always is None:
            return None
        unplaced = sum(1 << b for b in self.blocks) & ~placed
        later = (
            self.kills_all
            if self.repeat > 1
            else frozenset().union(*(self.block_names[b].kills for b in self.blocks if unplaced >> b & 1))
        )
        return self.always | self._pass_live(unplaced) | self.next_pass | (self.check.reads - later)

    def of_complete(self, chunks: tuple[Chunk, ...], k: int) -> frozenset[str] | None:
        """The live variables of a whole candidate after its first `k` steps."""
        if self.always is None:
            return None
        key = (chunks, k)
        if key not in self._complete:
            m = len(chunks)
            if k > m * self.repeat:
                return self.always
            used = self.check if k == m * self.repeat else self._step_names(chunks[k % m])
            after = self.of_complete(chunks, k + 1)
            assert after is not None
            self._complete[key] = used.reads | (after - used.kills) | self.always
        return self._complete[key]

    def _step_names(self, step: Chunk) -> Names:
        if step not in self._steps:
            self._steps[step] = names(self.program.source(step)[0])
        return self._steps[step]


def identifiers_of(code: str) -> set[str]:
    """Every word of the code (keywords too), read by tokens: a block need not parse on its own."""
    found: set[str] = set()
    try:
        for tok in tokenize.generate_tokens(io.StringIO(code).readline):
            if tok.type == tokenize.NAME:
                found.add(tok.string)
    except (tokenize.TokenError, IndentationError, SyntaxError):
        found.add("\0unreadable")
    return found


def _closure(needs: dict[int, int], blocks: Sequence[int]) -> dict[int, set[int]]:
    """For each block, every block that comes before it in every candidate (where it runs at the top
    level: with indentation, no block is known to)."""
    result: dict[int, set[int]] = {}

    def visit(b: int) -> set[int]:
        if b not in result:
            result[b] = set()
            for j in blocks:
                if needs[b] >> j & 1:
                    result[b] |= {j, *visit(j)}
        return result[b]

    for b in blocks:
        visit(b)
    return result


class ReachesOut(Exception):
    """Some code names a way around what the fast search can see (`reaches_out`): run the plain one."""


def always_read(fixed: Sequence[str], program: Program) -> frozenset[str] | None:
    """Variables every step may read: those read in function bodies (None: all, code reads any);
    `fixed` the code that always parses (setup and check). ReachesOut where the fast search is blind."""
    blocks = list(program.codes)
    if reaches_out([*fixed, *blocks]):
        raise ReachesOut
    if introspects([*fixed, *blocks]):
        return None
    always = frozenset().union(*(names(code).deferred for code in fixed))
    if not program.indented:
        return always.union(*(names(code).deferred for code in blocks))
    # an indented block alone may not parse, and any block may be the body of a function another block
    # defines (the body runs when the function is called, by any later step): every word counts
    if not any({"def", "lambda", "class"} & identifiers_of(code) for code in blocks):
        return always
    return always.union(*(identifiers_of(code) for code in blocks))


def check_only(check: str, program: Program, always: frozenset[str] | None) -> frozenset[str]:
    """Variables only the check reads: named by no block (distractors included), read in no function
    body. The search shares them between branches where no step can reach them (Tree._set_aside)."""
    if always is None:
        return frozenset()
    named = set().union(*(identifiers_of(code) for code in program.codes))
    return frozenset(names(check).reads - named - always)
