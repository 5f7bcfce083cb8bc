"""Steps that would run what a sibling ran (order.routes): told by its run, not run."""

from __future__ import annotations

import random
import re
import sys

import pytest

from quizgen.execution.worker.order_search.budget import OverBudget
from quizgen.execution.worker.order_search.program import Program, program_of
from quizgen.execution.worker.order_search.reach import Tracer
from quizgen.execution.worker.order_search.routes import Routes, Trie
from tests.support.order_puzzles import job, random_suite_puzzle, search

LINES = ["for k in range(3):", "if k > 5:", "a = 1", "b = 2", "c = k", "if k == 1:", "d = 0"]
LEVELS = [0, 1, 2, 2, 1, 1, 2]


def _routes(lines: list[str], levels: list[int]) -> tuple[Routes, Program]:
    program = program_of(job("", lines, "pass\n", levels=levels))
    return Routes(program), program


def _at(program: Program, blocks: list[int], levels: list[int]) -> tuple[int, ...]:
    """The step of those blocks (origins) at those levels."""
    found = []
    for b, level in zip(blocks, levels, strict=True):
        found.append(
            next(
                i for i in range(len(program.codes)) if program.origin(i) == b and program.levels[i] == level
            )
        )
    return tuple(found)


def _run(routes: Routes, trie: Trie, step: tuple[int, ...], ns: dict[str, object], outcome: object) -> bool:
    """Run the step on `ns` traced as Runs.step traces it, and keep its route; whether it raised."""
    source = routes.program.source(step)[0]
    code = compile(source, "step", "exec")
    record = routes.record(step, code, list(range(1, source.count("\n") + 1)), ns)
    assert record is not None
    tracer = Tracer(code, source.count("\n"), record)
    sys.settrace(tracer)
    try:
        exec(code, ns)
        raised = False
    except Exception:
        raised = True
    finally:
        sys.settrace(None)
    routes.add(trie, step, record, raised, None if raised else outcome)
    return raised


def test_a_sibling_that_differs_only_inside_a_suite_never_entered_is_told() -> None:
    routes, program = _routes(LINES, LEVELS)
    trie = Trie()
    assert not _run(routes, trie, _at(program, [0, 1, 2, 3, 4, 5, 6], LEVELS), {}, "node")
    other = _at(program, [0, 1, 3, 2, 4, 5, 6], LEVELS)  # (the never-entered suite the other way round)
    fewer = _at(program, [0, 1, 3, 4, 5, 6], [0, 1, 3, 1, 1, 2])  # (one line fewer in it, deeper)
    entered = _at(program, [0, 1, 2, 3, 5, 6, 4], [0, 1, 2, 2, 1, 2, 1])  # (`c = k` after `if k == 1:`)
    moved = _at(program, [0, 1, 2, 3, 4, 5, 6], [0, 1, 2, 2, 1, 1, 1])  # (`d = 0` out of its suite)
    assert routes.find(trie, other) == routes.find(trie, fewer) == (False, "node")
    assert routes.find(trie, entered) is None and routes.find(trie, moved) is None


def test_a_pure_test_moved_past_lines_that_do_not_change_its_names_is_told() -> None:
    """`if k > 5:` never holds: before `c = k` or after it, the loop runs the same lines."""
    routes, program = _routes(LINES, LEVELS)
    trie = Trie()
    assert not _run(routes, trie, _at(program, [0, 4, 1, 2, 5, 6], [0, 1, 1, 2, 1, 2]), {}, "node")
    after = _at(program, [0, 4, 5, 6, 1, 2], [0, 1, 1, 2, 1, 2])
    inside = _at(program, [0, 4, 5, 1, 2, 6], [0, 1, 1, 2, 3, 2])  # (in `if k == 1:` before `d = 0`)
    assert routes.find(trie, after) == routes.find(trie, inside) == (False, "node")


def test_a_pure_test_is_computed_from_its_names_where_the_sibling_reaches_it() -> None:
    """`x = 1` then `if x == 1: y = 2` enters the suite; the other way round, from x == 0, it does not:
    the sibling's route is not the run's."""
    lines = ["for k in range(1):", "x = 1", "if x == 1:", "y = 2"]
    routes, program = _routes(lines, [0, 1, 1, 2])
    trie = Trie()
    assert not _run(routes, trie, _at(program, [0, 1, 2, 3], [0, 1, 1, 2]), {"x": 0}, "node")
    assert routes.find(trie, _at(program, [0, 2, 3, 1], [0, 1, 2, 1])) is None


def test_a_raise_is_told_to_a_sibling_that_reaches_it() -> None:
    lines = ["for k in range(2):", "if k == 1:", "z = 1", "w = 1 / 0", "v = 2"]
    routes, program = _routes(lines, [0, 1, 2, 1, 1])
    trie = Trie()
    assert _run(routes, trie, _at(program, [0, 1, 2, 3, 4], [0, 1, 2, 1, 1]), {}, "node")
    assert routes.find(trie, _at(program, [0, 1, 4, 2, 3], [0, 1, 2, 2, 1])) == (True, None)
    assert routes.find(trie, _at(program, [0, 4, 3], [0, 1, 1])) is None  # (`v = 2` ran first)


def test_a_test_with_effects_is_one_and_names_that_are_not_numbers_tell_nothing() -> None:
    lines = ["for k in range(2):", "if xs.pop():", "a = 1", "if flag == 1:", "b = 1"]
    routes, program = _routes(lines, [0, 1, 2, 1, 2])
    trie = Trie()
    step = _at(program, [0, 1, 2, 3, 4], [0, 1, 2, 1, 2])
    assert not _run(routes, trie, step, {"xs": [0, 1], "flag": 0}, "node")
    assert routes.find(trie, step) == (False, "node")  # (`xs.pop()` returned 1, then 0: recorded)
    trie = Trie()
    assert not _run(routes, trie, step, {"xs": [0, 1], "flag": 0.0}, "node")  # (a float: not watched)
    assert routes.find(trie, step) is None


@pytest.mark.parametrize(
    ("lines", "levels"),
    [
        (
            ["for k in range(3):", "if k == 0:", "a = 1", "elif k == 1:", "b = 1", "else:", "c = 1"],
            [0, 1, 2, 1, 2, 1, 2],
        ),
        (["for k in range(2):", "n = k", "else:", "m = 1"], [0, 1, 0, 1]),
        (["while n < 3:", "n += 1", "if n == 2:", "m = n"], [0, 1, 1, 2]),
    ],
)
def test_elif_else_and_while_are_followed_as_python_runs_them(lines: list[str], levels: list[int]) -> None:
    routes, program = _routes(lines, levels)
    trie = Trie()
    step = _at(program, list(range(len(lines))), levels)
    assert routes.structure(step) is not None
    assert not _run(routes, trie, step, {"n": 0}, "node")
    assert routes.find(trie, step) == (False, "node")


@pytest.mark.parametrize(
    "block",
    ["break", "continue", "try:", "with open('f') as f:", "from __future__ import annotations", "x ="],
)
def test_a_step_holding_a_block_the_walk_does_not_know_has_no_route(block: str) -> None:
    routes, program = _routes(["for k in range(2):", block, "pass"], [0, 1, 2 if block.endswith(":") else 1])
    assert routes.structure(_at(program, [0, 1, 2], [0, 1, 2 if block.endswith(":") else 1])) is None


def test_a_sibling_told_by_a_route_is_not_run(monkeypatch: pytest.MonkeyPatch) -> None:
    """With `flag` false, the loops whose `if flag:` holds `a = 1` and `b = 2` in either order do the
    same: once one of them ran, the other is not run (its threads go on from the state the first left),
    and the search accepts what the plain search accepts. Before order.suites, both ran."""
    from quizgen.execution.worker.order_search.tree import Tree

    ran: list[str] = []
    run = Tree._run

    def recorded(self: Tree, step: tuple[int, ...], traced: bool = False) -> BaseException | None:
        if self.runs is not None and len(step) > 1:
            ran.append(self.runs.program.source(step)[0])
        return run(self, step, traced)

    monkeypatch.setattr(Tree, "_run", recorded)
    lines = ["for k in range(2):", "if flag:", "a = 1", "b = 2", "c = 10", "out = c + k"]
    puzzle = job("flag = False\na = b = 0\n", lines, "assert out == 11\n", levels=[0, 1, 2, 2, 1, 1])
    fast, _ = search(puzzle, fast=True)
    assert fast == search(puzzle, fast=False)[0]
    in_if = re.compile(r"(?m)^( *)if flag:\n(\1 +)a = 1\n\2b = 2$")
    swap = r"\1if flag:\n\2b = 2\n\2a = 1"
    both = [s for s in ran if in_if.search(s) and in_if.sub(swap, s) in ran]
    assert len(ran) > 10 and both == []


def test_fast_and_plain_searches_agree_on_40_random_loops_with_suites_not_entered(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Loops holding an `if` that is never true, or true now and then, with an `else:` or a nested
    `if`: the fast search, which does not run steps a sibling's route tells, accepts what the plain
    search accepts, and it did leave some out, nodes and raises both (the test is not vacuous)."""
    found = Routes.find
    told: list[object] = []

    def counted(self: Routes, trie: Trie, step: tuple[int, ...]) -> tuple[bool, object] | None:
        outcome = found(self, trie, step)
        if outcome is not None:
            told.append(outcome[0])
        return outcome

    monkeypatch.setattr(Routes, "find", counted)
    rng = random.Random(29)
    differing, searched = [], 0
    for n in range(200):  # (a puzzle whose lines hardly constrain each other is drawn again)
        puzzle = random_suite_puzzle(rng)
        try:
            fast = search(puzzle, fast=True)[0]
        except OverBudget:
            continue
        if fast != search(puzzle, fast=False)[0]:
            differing.append((n, [s["code"] for s in puzzle["lines"]], puzzle["levels"]))  # type: ignore[typeddict-item]
        searched += 1
        if searched == 40:
            break
    assert differing == [] and searched == 40
    assert told.count(True) > 20 and told.count(False) > 20


def test_a_line_that_never_runs_but_binds_annotations_is_told_apart() -> None:
    """An annotated assignment anywhere in a module's code makes Python bind `__annotations__` as the
    code starts, run or not: the loop whose never-entered `if flag:` holds the distractor `a: int = 1`
    does not do what its sibling holding `a = 1` does. Before, the fast search sent it on from its
    sibling's state and accepted the distractor where the plain search rejects it."""
    lines = ["for k in range(2):", "if flag:", "a = 1", "b = 2", "c = k"]
    check = "assert c == 1\nassert '__annotations__' not in vars()\n"
    puzzle = job("flag = False\n", lines, check, distractors=("a: int = 1",), levels=[0, 1, 2, 2, 1, 2])
    assert search(puzzle, fast=True)[0] == search(puzzle, fast=False)[0]


@pytest.mark.parametrize(
    ("block", "expected"),
    [
        ("x: int = 1", True),
        ("model.w: float", True),
        ("xs[0]: int = 2", True),
        ("x = lambda: 0", True),  # (taken to: no harm in more)
        ("match = 1", False),
        ("if k > 5:", False),
        ("for i, (a, b) in enumerate(pairs):", False),
        ("y = d[1:2]", False),
        ("z = {a: b}", False),
        ("(loss * accum).backward()", False),
        ("else:", False),
    ],
)
def test_which_blocks_may_bind_annotations(block: str, expected: bool) -> None:
    from quizgen.execution.worker.order_search.reach import annotates

    assert annotates([block]) is expected


@pytest.mark.parametrize(
    ("lines", "levels"),
    [
        (
            [
                "for i, (xb, yb) in enumerate(micro):",
                "loss = mse(model(xb), yb) / accum",
                "loss.backward()",
                "if (i + 1) % accum == 0:",
                "opt.step()",
                "opt.zero_grad()",
                "if i % accum == 0:",
            ],
            [0, 1, 1, 1, 2, 2, 1],
        ),
        (
            ["while n < 3:", "n += 1", "if n == 2:", "m = n", "elif n > 5:", "else:", "break"],
            [0, 1, 1, 2, 1, 1, 2],
        ),
    ],
)
def test_every_statement_with_a_route_compiles(lines: list[str], levels: list[int]) -> None:
    """Routes.find tells a step without compiling it (threads.Siblings.known): so every statement the
    blocks can make at any level whose structure the walk reads must compile (here all of them: the
    shipped accumulation loop's blocks with a distractor, and a loop with `elif`, `else` and `break`)."""
    from quizgen.execution.worker.order_search.program import Orders

    program = program_of(job("", lines, "pass\n", levels=levels))
    routes = Routes(program)
    orders = Orders(program, list(range(len(lines))), {}, levels=True)
    steps, masks, seen = set(), [0], {0}
    while masks:
        for chunk, after in orders.next_chunks(masks.pop()):
            steps.add(chunk)
            if after not in seen:
                seen.add(after)
                masks.append(after)
    read = [step for step in steps if routes.structure(step) is not None]
    for step in read:
        compile(program.source(step)[0], "step", "exec")  # (raises if it does not)
    assert len(read) > 50
