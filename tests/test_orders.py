"""Data-dependency pruning of order puzzles (pure: no torch)."""

from __future__ import annotations

import math

from quizgen.execution.order_search import candidate_orders, dependencies, distractor_variants, relax

STEP = ["opt.zero_grad()", "loss = model(x).sum()", "loss.backward()", "opt.step()"]


def test_dependencies_follow_names_bound_in_the_block() -> None:
    before = dependencies(STEP, predefined={"opt", "model", "x"})
    assert before == {0: set(), 1: set(), 2: {1}, 3: set()}


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
