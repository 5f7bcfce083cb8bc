"""The order searches' bench (bench/orders.py --shipped): each search timed in a fork of the warm process."""

from __future__ import annotations

import gc

import pytest

from tests.support.order_puzzles import job, warm
from tests.support.paths import bench_module


def test_a_search_is_timed_and_counted_in_a_fork_that_leaves_this_process_as_it_was(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from quizgen.execution.worker.order_search import search as order_runs
    from quizgen.execution.worker.order_search.tree import Tree

    orders = bench_module("orders")
    warm()
    monkeypatch.setattr(order_runs, "SMALL", 0.0)  # a tree even for two lines: its steps are counted
    monkeypatch.setattr(order_runs, "_unmerged", lambda runs, orders: False)
    puzzle = job("x = []\n", ["x.append(1)", "x.append(2)"], "assert sorted(x) == [1, 2]\n")
    frozen, explore, callbacks = gc.get_freeze_count(), Tree.explore, list(gc.callbacks)
    counted = orders.forked_search(puzzle)
    assert counted.seconds > 0  # the child's own CPU time, told through the pipe
    assert counted.steps >= 3  # both lines and the check, at least, run in its tree
    assert counted.collected >= 0
    assert gc.get_freeze_count() == frozen  # frozen for the fork only, as a zygote's warm state is
    assert Tree.explore is explore and gc.callbacks == callbacks  # counted in the fork only
