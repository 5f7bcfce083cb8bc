"""The order searches' bench (bench/orders.py --shipped): each search timed in a fork of the warm process."""

from __future__ import annotations

import gc

from tests.support.order_puzzles import job, warm
from tests.support.paths import bench_module


def test_a_search_is_timed_in_a_fork_that_leaves_this_process_as_it_was() -> None:
    orders = bench_module("orders")
    warm()
    puzzle = job("x = []\n", ["x.append(1)", "x.append(2)"], "assert sorted(x) == [1, 2]\n")
    frozen = gc.get_freeze_count()
    seconds = orders.forked_search(puzzle)
    assert seconds > 0  # the child's own CPU time, told through the pipe
    assert gc.get_freeze_count() == frozen  # frozen for the fork only, as a zygote's warm state is
