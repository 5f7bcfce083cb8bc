"""Steps that differ only inside suites control never entered (order.suites): one of them runs."""

from __future__ import annotations

import random
import re
import sys

import pytest

from quizgen.execution.worker.order_search.budget import OverBudget
from quizgen.execution.worker.order_search.program import program_of
from quizgen.execution.worker.order_search.reach import Tracer
from quizgen.execution.worker.order_search.suites import Suites
from tests.support.order_puzzles import job, random_suite_puzzle, search

LINES = ["for k in range(3):", "if k > 5:", "a = 1", "b = 2", "c = k", "if k == 1:", "d = 0"]
LEVELS = [0, 1, 2, 2, 1, 1, 2]


def _program_and_suites() -> tuple[Suites, object]:
    program = program_of(job("", LINES, "pass\n", levels=LEVELS))
    return Suites(program), program


def _ran(suites: Suites, step: tuple[int, ...]) -> frozenset[int]:
    """The headers whose suites never ran when the step runs (traced as Runs.step traces it)."""
    source = suites.program.source(step)[0]
    code = compile(source, "step", "exec")
    tracer = Tracer(code, source.count("\n"))
    sys.settrace(tracer)
    try:
        exec(code, {})
    finally:
        sys.settrace(None)
    return suites.unentered(step, code, tracer.lines, list(range(1, source.count("\n") + 1)))


def _at(program: object, blocks: list[int], levels: list[int]) -> tuple[int, ...]:
    """The step of those blocks (origins) at those levels."""
    codes = program.codes  # type: ignore[attr-defined]
    found = []
    for b, level in zip(blocks, levels, strict=True):
        found.append(
            next(
                i
                for i in range(len(codes))
                if program.origin(i) == b and program.levels[i] == level  # type: ignore[attr-defined]
            )
        )
    return tuple(found)


def test_a_suite_control_never_entered_is_found_and_one_it_entered_is_not() -> None:
    suites, program = _program_and_suites()
    step = _at(program, [0, 1, 2, 3, 4, 5, 6], LEVELS)
    assert _ran(suites, step) == {1}  # (`if k > 5:` never; `if k == 1:` once)


def test_only_the_outermost_suite_never_entered_counts() -> None:
    suites, program = _program_and_suites()
    step = _at(program, [0, 1, 2, 5, 6, 3, 4], [0, 1, 2, 2, 3, 1, 1])  # `if k == 1` inside `if k > 5`
    assert _ran(suites, step) == {1}


def test_a_suite_of_constants_alone_is_never_taken_for_one_not_entered() -> None:
    """Entering it would leave no line in the trace: it cannot be told from a suite not entered."""
    program = program_of(job("", ["for k in range(2):", "if k == 1:", "0"], "pass\n", levels=[0, 1, 2]))
    suites = Suites(program)
    assert _ran(suites, (0, 1, 2)) == frozenset()


def test_steps_differing_only_inside_a_suite_taken_out_have_one_key() -> None:
    suites, program = _program_and_suites()
    one = _at(program, [0, 1, 2, 3, 4], [0, 1, 2, 2, 1])
    other = _at(program, [0, 1, 3, 2, 4], [0, 1, 2, 2, 1])  # the suite's lines the other way round
    fewer = _at(program, [0, 1, 3, 4], [0, 1, 2, 1])  # one line fewer in it
    deeper = _at(program, [0, 1, 3, 2, 4], [0, 1, 3, 3, 1])  # indented further: the same suite
    after = _at(program, [0, 1, 2, 3, 4], [0, 1, 2, 2, 2])  # `c = k` inside it: another statement
    key = suites.key(one, frozenset({1}))
    assert key is not None
    assert suites.key(other, frozenset({1})) == suites.key(fewer, frozenset({1})) == key
    assert suites.key(deeper, frozenset({1})) == key
    assert suites.key(after, frozenset({1})) != key
    assert suites.key(one, frozenset()) != suites.key(other, frozenset())  # (nothing taken out)


def test_a_sibling_that_differs_only_inside_a_suite_never_entered_is_not_run(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """With `flag` false, the loops whose `if flag:` holds `a = 1` and `b = 2` in either order do the
    same: once one of them ran, the other is not run (its threads go on from the state the first left),
    and the search accepts what the plain search accepts. Before, both ran."""
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
    `if`: the fast search, which does not run steps that differ only in suites never entered, accepts
    what the plain search accepts, and it did leave some out (the test is not vacuous)."""
    from quizgen.execution.worker.order_search import suites as order_suites

    found = order_suites.Skips.find
    joined: list[object] = []

    def counted(self: order_suites.Skips[object], step: tuple[int, ...]) -> object | None:
        outcome = found(self, step)
        if outcome is not None:
            joined.append(outcome)
        return outcome

    monkeypatch.setattr(order_suites.Skips, "find", counted)
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
    assert len(joined) > 20


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
