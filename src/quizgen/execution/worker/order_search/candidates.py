"""The order search's candidates: which orders of a puzzle's lines can pass its check, and the variants of
a distractor to try.

Data dependencies prune the n! orders (pure functions, usable anywhere); `runs.search` runs the candidates
inside a worker process: the fast search (order.tree) where the state can be copied, else each candidate
from a fresh namespace (the plain search, kept for what the fast one cannot vouch for and for the tests).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Sequence

from quizgen.execution.worker.order_search.names import always_binds
from quizgen.execution.worker.order_search.program import Program

_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


def _targets(target: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}


def _scoped_names(tree: ast.AST) -> tuple[set[str], set[str]]:
    """Names a statement reads and binds when it runs (not inside lambdas or function bodies).

    A name a loop binds before its body reads it (`for i in ...`, a comprehension's variable) is not a
    read: no other line need come first. Too few dependencies only cost time (more orders are run);
    a wrong one would hide a valid order.
    """
    reads: set[str] = set()
    binds: set[str] = set()
    loop_bound: set[str] = set()

    def visit(node: ast.AST) -> None:
        if isinstance(node, _COMPREHENSIONS):
            local = set().union(*(_targets(g.target) for g in node.generators))
            for child in ast.iter_child_nodes(node):
                inner_reads, inner_binds = _scoped_names(child)
                reads.update(inner_reads - local)
                binds.update(inner_binds - local)
            return
        if isinstance(node, (ast.For, ast.AsyncFor)):
            loop_bound.update(_targets(node.target))
        if isinstance(node, (ast.Lambda, ast.FunctionDef, ast.AsyncFunctionDef)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                binds.add(node.name)
                for deco in node.decorator_list:
                    visit(deco)
            return
        if isinstance(node, ast.ClassDef):
            binds.add(node.name)
        if isinstance(node, ast.Name):
            if isinstance(node.ctx, ast.Load):
                reads.add(node.id)
            else:
                binds.add(node.id)
        elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
            reads.add(node.target.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                binds.add((alias.asname or alias.name).split(".")[0])
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return reads - loop_bound, binds


def dependencies(lines: Sequence[str], predefined: set[str]) -> dict[int, set[int]]:
    """For each line, the lines that must come before it: those binding a name it reads.

    A name that setup already defines is no constraint: reading it early sees the old value,
    which the check may or may not accept.
    """
    names = [_block_names(line) for line in lines]
    before: dict[int, set[int]] = {i: set() for i in range(len(lines))}
    for i, (reads, _) in enumerate(names):
        for name in reads - predefined:
            for j, (_, binds) in enumerate(names):
                if j != i and name in binds:
                    before[i].add(j)
    return before


def _block_names(code: str) -> tuple[set[str], set[str]]:
    """`_scoped_names` of a block, statement by statement: a name read after an earlier statement of
    the same block always bound it (`loss = ...` then `loss.backward()`) reads the block's own value."""
    reads: set[str] = set()
    binds: set[str] = set()
    bound: set[str] = set()
    for stmt in ast.parse(code).body:
        stmt_reads, stmt_binds = _scoped_names(stmt)
        reads |= stmt_reads - bound
        binds |= stmt_binds
        bound |= always_binds(stmt)
    return reads, binds


def relax(before: dict[int, set[int]], given: Sequence[int]) -> dict[int, set[int]]:
    """Drop any constraint the author's own order breaks: that order is known to run."""
    position = {line: k for k, line in enumerate(given)}
    return {i: {j for j in deps if position[j] < position[i]} for i, deps in before.items()}


def candidate_orders(n: int, before: dict[int, set[int]]) -> Iterator[list[int]]:
    """Every order of range(n) in which each line comes after the lines it depends on."""
    order: list[int] = []
    placed = [False] * n

    def extend() -> Iterator[list[int]]:
        if len(order) == n:
            yield list(order)
            return
        for i in range(n):
            if not placed[i] and all(placed[j] for j in before[i]):
                placed[i] = True
                order.append(i)
                yield from extend()
                order.pop()
                placed[i] = False

    yield from extend()


def distractor_variants(order: Sequence[int], distractor: int) -> Iterator[list[int]]:
    """Ways a learner could use a distractor in an order: inserted anywhere, or instead of a line."""
    for k in range(len(order) + 1):
        yield [*order[:k], distractor, *order[k:]]
    for k in range(len(order)):
        yield [*order[:k], distractor, *order[k + 1 :]]


def readable(program: Program) -> list[str]:
    """The lines as code `dependencies` can parse: an indented block alone may not be (`for x in xs:`)."""
    if not program.indented:
        return list(program.codes[: program.lines])
    found = []
    for code in program.codes[: program.lines]:
        for attempt in (code, code.rstrip("\n") + "\n" + " " * program.unit * 8 + "pass\n"):
            try:
                ast.parse(attempt)
            except SyntaxError:
                continue
            found.append(attempt)
            break
        else:
            found.append("pass")  # `else:` and the like: no names of its own
    return found
