"""Data-dependency pruning of order puzzles (pure: no torch)."""

from __future__ import annotations

import math
from pathlib import Path

from quizgen.cards import loader
from quizgen.execution.worker.order_search.candidates import (
    candidate_orders,
    dependencies,
    distractor_variants,
    relax,
)
from quizgen.execution.worker.order_search.feedback import look_alike
from quizgen.execution.worker.order_search.indentation import shape
from quizgen.execution.worker.order_search.program import Orders, Program
from quizgen.kinds.order import partial_order

STEP = ["opt.zero_grad()", "loss = model(x).sum()", "loss.backward()", "opt.step()"]


def test_dependencies_follow_names_bound_in_the_block() -> None:
    before = dependencies(STEP, predefined={"opt", "model", "x"})
    assert before == {0: set(), 1: set(), 2: {1}, 3: set()}


def test_a_block_reading_what_it_bound_itself_depends_on_no_other_block() -> None:
    # Two micro-batches, each `loss = ...` then `loss.backward()`: either may come first.
    first = "loss = f(x1)\nloss.backward()"
    second = "loss = f(x2)\nloss.backward()"
    assert dependencies([first, second], set()) == {0: set(), 1: set()}
    # A read before the block's own binding (or under a condition) still depends on the other block.
    assert dependencies(["loss = f(x1)", "loss.backward()\nloss = f(x2)"], set()) == {0: set(), 1: {0}}
    assert dependencies(["loss = f(x1)", "if c:\n    loss = f(x2)\nloss.backward()"], set()) == {
        0: set(),
        1: {0},
    }


def test_a_distractor_resembles_the_block_holding_the_line_it_imitates() -> None:
    codes = (
        "loss = mse(model(x), y)",
        "with torch.no_grad():\n    val = mse(model(xv), yv)",
        "val = mse(model(xv), yv)",
    )
    assert look_alike(codes, 2, 2) == 1
    assert look_alike(("a = 1", "b = 2", "b = 3"), 2, 2) == 1


def test_names_from_setup_are_no_constraint() -> None:
    before = dependencies(STEP, predefined={"opt", "model", "x", "loss"})
    assert before[2] == set()


def test_lambda_bodies_and_aug_assign() -> None:
    lines = ["f = lambda: total", "total = 0", "total += 1"]
    before = dependencies(lines, predefined=set())
    assert before[0] == set()  # the lambda reads `total` only when called
    assert before[2] == {1}  # `+=` reads before it binds


def test_candidates_respect_dependencies() -> None:
    before = dependencies(STEP, predefined={"opt", "model", "x"})
    orders = list(candidate_orders(4, before))
    assert all(o.index(1) < o.index(2) for o in orders)
    assert len(orders) == math.factorial(4) // 2
    assert [0, 1, 2, 3] in orders and [1, 2, 3, 0] in orders


def test_unconstrained_lines_give_every_permutation() -> None:
    assert len(list(candidate_orders(4, {i: set() for i in range(4)}))) == 24


def test_relax_drops_constraints_the_given_order_breaks() -> None:
    assert relax({0: {1}, 1: set()}, [0, 1]) == {0: set(), 1: set()}
    assert relax({0: set(), 1: {0}}, [0, 1]) == {0: set(), 1: {0}}


def test_distractor_variants_insert_and_substitute() -> None:
    variants = list(distractor_variants([0, 1], 9))
    assert variants == [[9, 0, 1], [0, 9, 1], [0, 1, 9], [9, 1], [0, 9]]


# -- blocks, indentation and the answer as a graph (issue 11) ------------------------------------------


def test_the_accepted_orders_of_a_step_are_a_graph() -> None:
    # zero_grad may go first, after the forward pass, or last: no set of pairs allows exactly that
    assert partial_order([[0, 1, 2, 3], [1, 0, 2, 3], [1, 2, 3, 0]], 4) is None
    # a before c and b before c, a and b in either order: exactly the orders of {a<c, b<c}
    assert partial_order([[0, 1, 2], [1, 0, 2]], 3) == [(0, 2), (1, 2)]
    # one order: a chain, without the pairs the chain implies
    assert partial_order([[2, 0, 1]], 3) == [(0, 1), (2, 0)]
    # every order: no pair at all
    every = [[a, b, c] for a in range(3) for b in range(3) for c in range(3) if len({a, b, c}) == 3]
    assert partial_order(every, 3) == []


def test_a_graph_is_only_claimed_when_it_allows_no_more_orders() -> None:
    # 0<1 and 2<3 hold in both, but their orders are 6, not 2
    assert partial_order([[0, 1, 2, 3], [2, 3, 0, 1]], 4) is None
    assert partial_order([], 3) is None
    assert partial_order([[0, 1]], 3) is None  # not an order of all the lines


def test_indentation_shapes_what_may_follow_a_block() -> None:
    assert shape("for x in xs:").opens and not shape("total += x").opens
    assert shape("else:").continues and shape("@torch.no_grad()").decorates
    assert shape("if a:\n    b = 1").inner == 1  # its last line sits one level in
    program = Program(("total = 0", "for x in xs:", "total += x", "print(total)"), 4, 4, (0, 0, 1, 0))
    assert program.chunks([0, 1, 2, 3]) == ((0,), (1, 2), (3,))  # the loop and its body are one step
    assert program.source((1, 2))[0] == "for x in xs:\n    total += x\n"
    candidates = [[b for chunk in c for b in chunk] for c in Orders(program, range(4), {}).all()]
    # a body only ever follows a line that opens a block; the loop never ends the program bodiless
    assert all(c.index(2) == c.index(1) + 1 for c in candidates)
    assert len(candidates) == 6  # the three statements in any order


def _problems(tmp_path: Path, card: str) -> list[str]:
    """The loader's problems with one card, each without its file name."""
    cards = tmp_path / "cards"
    cards.mkdir()
    (cards / "d.yaml").write_text("deck: D\ncards:\n" + card)
    _, problems = loader.load(cards)
    return [str(p).split("d.yaml:", 1)[1] for p in problems]


def test_a_block_of_several_lines_counts_once(tmp_path: Path) -> None:
    block = "      - |\n        a = 1\n        b = 2\n"
    assert _problems(tmp_path, f"  - id: one\n    kind: order\n    lines:\n{block}    check: assert b\n") == [
        "6:7: card 'one' -> lines: an order puzzle needs at least 2 lines (a block of several counts as one)"
    ]


def test_a_block_scalar_line_is_numbered_from_its_first_line_of_code(tmp_path: Path) -> None:
    lines = "      - a = 1\n      - d = 4\n      - |\n        b = 2\n        c = a +\n"
    [problem] = _problems(tmp_path, f"  - id: b\n    kind: order\n    lines:\n{lines}    check: assert c\n")
    assert problem.startswith("10:") and "syntax error" in problem


def test_an_indented_program_must_compile_as_written(tmp_path: Path) -> None:
    lines = '      - total = 0\n      - "    total += 1"\n      - "   x = 1"\n'
    card = f"  - id: broken\n    kind: order\n    indent: true\n    lines:\n{lines}    check: assert total\n"
    assert [p.split("-> ", 1)[1] for p in _problems(tmp_path, card)] == [
        "lines: indented 3 spaces, not a multiple of this puzzle's 4",
        "lines: the lines as written, with their indentation, do not compile: unexpected indent",
    ]


def test_the_spaces_of_one_program_share_what_they_work_out_and_count_alike() -> None:
    """Every distractor space of an indented program counted and listed after the others (what the
    blocks left allow is worked out once, Orders.key) gives what it gives counted alone."""
    from quizgen.execution.worker.order_search.levels import distractor_spaces, space

    codes = ("for i in range(3):", "total += i", "if i % 2:", "total -= 1", "seen.append(i)")
    codes += ("if i:", "total *= 2")  # (the distractors)

    def program() -> Program:
        return Program(codes, lines=5, unit=4, levels=(0, 1, 1, 2, 1, 1, 2)).at_levels()

    before = {4: {1}}  # (a need that a space without line 1 drops)
    shared = program()
    spaces = [space(shared, list(range(5)), before)]
    spaces += [o for d in (5, 6) for o in distractor_spaces(shared, before, d)]
    together = [(o.count(10**6), sorted(o.all())) for o in spaces]
    alone = []
    for k in range(len(spaces)):
        fresh = program()
        mine = [space(fresh, list(range(5)), before)]
        mine += [o for d in (5, 6) for o in distractor_spaces(fresh, before, d)]
        alone.append((mine[k].count(10**6), sorted(mine[k].all())))
    assert together == alone
    assert all(count == len(every) > 0 for count, every in together)
    assert len(shared.memo.next) < sum(len(o._next) for o in spaces)  # (worked out once for several)


def test_a_count_lists_no_statement_and_one_that_stopped_is_not_kept() -> None:
    """Candidates are counted by what follows each statement's beginning (Orders._within), none listed;
    a count that stopped past its limit leaves the exact count to a later one."""
    from quizgen.execution.worker.order_search.levels import space

    codes = ("for i in range(3):", "total += i", "if i % 2:", "total -= 1", "seen.append(i)")
    orders = space(Program(codes, lines=5, unit=4, levels=(0, 1, 1, 2, 1)).at_levels(), list(range(5)), {})
    stopped = orders.count(3)
    assert stopped > 3
    assert not orders._next and not orders.program.memo.next  # (nothing listed)
    exact = orders.count(10**6)  # (before anything is listed: from what the stopped count kept alone)
    every = list(orders.all())
    assert exact == len(every) >= stopped
    assert [orders.completions(after) for _, after in orders.next_chunks(0)] == [
        sum(c[0] == chunk for c in every) for chunk, _ in orders.next_chunks(0)
    ]
