"""What wrong orders near the one as written do when run: the feedback a learner gets for that mistake.

Each distractor is tried in place of the line it most resembles (a learner who picks it picks it
instead of that line); each block is moved one step (swapped with its neighbour). An order that fails
is recorded with the exception it raised and, for a failed assert of the check, the value of every
name in that assert.
"""

from __future__ import annotations

import ast
import difflib
import re
import traceback
from collections.abc import Container
from typing import TYPE_CHECKING

from quizgen.execution.protocol import Feedback, last_line
from quizgen.execution.worker.order_search import torch_state as order_settings
from quizgen.execution.worker.order_search.program import CHECK, Chunk

if TYPE_CHECKING:
    from quizgen.execution.worker.order_search.steps import Runs

VALUE_CHARS = 80  # of each value's repr
MAX_VALUES = 4


def look_alike(codes: tuple[str, ...], lines: int, distractor: int) -> int:
    """The block a distractor most resembles (the first of equals): as a whole, or by one of its lines,
    since a distractor often imitates one line of a multi-line block (the block's statement without
    the `with` around it)."""
    text = codes[distractor].strip()

    def likeness(code: str) -> float:
        parts = [code.strip(), *(line.strip() for line in code.splitlines() if line.strip())]
        return max(difflib.SequenceMatcher(None, text, part).ratio() for part in parts)

    ratios = [likeness(codes[i]) for i in range(lines)]
    return ratios.index(max(ratios))


def nearby(runs: Runs, accepted: Container[tuple[int, ...]]) -> list[Feedback]:
    """The feedback for every distractor and every wrong one-step move of the order as written."""
    program = runs.program
    n = program.lines
    given = list(range(n))
    tries: list[tuple[list[int], int | None]] = []
    for d in range(n, program.blocks):
        j = look_alike(program.codes, n, d)
        for at in (b for b in range(len(program.codes)) if program.origin(b) == d):  # at each level
            tries.append(([*given[:j], at, *given[j + 1 :]], d - n))
    for k in range(n - 1):
        order = given[:]
        order[k], order[k + 1] = order[k + 1], order[k]
        if tuple(order) not in accepted:
            tries.append((order, None))
    found = []
    start = order_settings.settings()
    for order, distractor in tries:
        order_settings.restore_settings(start)
        entry = _run(runs, order)
        if entry is not None:
            if distractor is not None:
                entry["distractor"] = distractor
                if program.indented:
                    entry["level"] = program.levels[next(b for b in order if program.origin(b) >= n)]
            found.append(entry)
    return found


def _run(runs: Runs, order: list[int]) -> Feedback | None:
    failure, ns, step = runs.attempt(runs.program.chunks(order))
    if failure is None:
        return None
    frames = [f for f in traceback.extract_tb(failure.__traceback__) if f.filename in runs.paths]
    line = int((frames[-1].lineno if frames else getattr(failure, "lineno", None)) or 0)
    text = (frames[-1].line or "").strip() if frames else (getattr(failure, "text", None) or "").strip()
    only = traceback.format_exception_only(type(failure), failure)
    exception = only[-1].strip()
    if isinstance(failure, SyntaxError):  # its "on line N" counts the lines of the assembled statement
        exception = f"{type(failure).__name__}: {re.sub(' on line [0-9]+', '', failure.msg)}"
    values = _assert_values(runs, ns, line) if step == CHECK and isinstance(failure, AssertionError) else {}
    block = -1 if step == CHECK else runs.program.origin(_block(runs, step, line))
    program = runs.program
    found = Feedback(
        order=[program.origin(b) for b in order],  # (a block at another level is that block)
        block=block,
        text=text,
        exception=exception[:300],
        values=values,
    )
    if program.indented:  # the arrangement it was run as: shown only for that one (judge.js)
        found["levels"] = [program.levels[b] for b in order]
    return found


def _block(runs: Runs, step: Chunk, line: int) -> int:
    """The block of the step whose lines hold file line `line` (the step's first when none does)."""
    for block in step:
        snippet = runs.snippets[block]
        if snippet["line"] <= line <= last_line(snippet):
            return block
    return step[0]


def _assert_values(runs: Runs, ns: dict[str, object], line: int) -> dict[str, str]:
    """The value of each name (or dotted name) in the check's assert at file line `line`."""
    check = runs.job["check"]
    try:
        tree = ast.parse("\n" * (check["line"] - 1) + check["code"])
    except SyntaxError:
        return {}
    found = [
        n for n in ast.walk(tree) if isinstance(n, ast.Assert) and n.lineno <= line <= (n.end_lineno or 0)
    ]
    if not found:
        return {}
    values: dict[str, str] = {}
    for expr in _dotted(found[0].test):
        if len(values) == MAX_VALUES:
            break
        try:
            value = eval(compile(ast.Expression(expr), check["path"], "eval", dont_inherit=True), ns)
        except Exception:
            continue
        if callable(value) or type(value).__name__ == "module":
            continue
        detach = getattr(value, "detach", None)  # a tensor: its values, not "Parameter containing:"
        shown = " ".join(repr(detach() if callable(detach) else value).split())
        values[ast.unparse(expr)] = shown if len(shown) <= VALUE_CHARS else shown[: VALUE_CHARS - 3] + "..."
    return values


def _dotted(test: ast.expr) -> list[ast.expr]:
    """The names and dotted names in an expression (`model.weight`, `total`), each once, in order."""
    found: list[ast.expr] = []
    seen: set[str] = set()

    def visit(node: ast.AST) -> None:
        chain = node
        while isinstance(chain, ast.Attribute):
            chain = chain.value
        if isinstance(node, (ast.Name, ast.Attribute)) and isinstance(chain, ast.Name):
            text = ast.unparse(node)
            if text not in seen:
                seen.add(text)
                found.append(node)
            return
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(test)
    return found
