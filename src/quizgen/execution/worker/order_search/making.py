"""The fast order search's tree for a job's runs: its namespace from setup, which variables each step
may read, what states may be compared or shared, and what a step's run tells of its siblings. Raises
Plain where the fast search cannot vouch for its answer (the plain search runs instead).
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from quizgen.execution.worker.order_search import torch_state as order_settings
from quizgen.execution.worker.order_search.costs import clock
from quizgen.execution.worker.order_search.levels import Onward
from quizgen.execution.worker.order_search.names import (
    Liveness,
    ReachesOut,
    always_read,
    check_only,
    freed_graphs_shareable,
    graphs_comparable,
    identifiers_of,
    views_only,
)
from quizgen.execution.worker.order_search.program import Orders, Share
from quizgen.execution.worker.order_search.steps import Runs
from quizgen.execution.worker.order_search.threads import Space
from quizgen.execution.worker.order_search.torch_state import Settings
from quizgen.execution.worker.order_search.tree import Tree
from quizgen.execution.worker.snippets import fresh_namespace


class Plain(Exception):
    """The fast search cannot vouch for this puzzle: run the plain search."""


def read_always(runs: Runs) -> frozenset[str] | None:
    """Variables every step may read (order.names.always_read); Plain where code reaches out."""
    fixed = [s["code"] for s in [*runs.job["setup"], runs.job["check"]]]
    try:
        return always_read(fixed, runs.program)
    except ReachesOut:
        raise Plain from None


def make_tree(
    runs: Runs, start: Settings, spaces: Sequence[Orders], share: Share | None = None, freeze: bool = False
) -> Tree:
    """A fast search from a fresh namespace, of one space of candidates or several at once; with
    `freeze`, tensors only read are shared rather than copied, where no code can change them unseen."""
    began = time.process_time()
    tree = _new_tree(runs, start, spaces, share)
    tree.freeze = freeze and tree.spans  # (views_only: nothing reaches a tensor's bytes but its views)
    tree.shared.kept.on &= freeze  # (shared until a step changes what states share: then neither)
    runs.start_cost = time.process_time() - began
    return tree


def _new_tree(runs: Runs, start: Settings, spaces: Sequence[Orders], share: Share | None) -> Tree:
    always = read_always(runs)
    order_settings.restore_settings(start)
    began = clock()
    ns = fresh_namespace(runs.setups, runs.paths)
    setup_cost = clock() - began
    repeat = runs.job["repeat"]
    orders, *more = spaces
    check = runs.job["check"]["code"]
    liveness = Liveness(runs.program, orders, repeat, check, always)
    job = runs.job
    sources = [s["code"] for s in [*job["setup"], job["check"], *job["lines"], *job["distractors"]]]
    generators = bool(identifiers_of("\n".join(sources)) & {"numpy", "np", "random"})
    run_step = lambda step, traced: runs.step(ns, step, False, traced, walked=True)  # noqa: E731
    tree = Tree(ns, run_step, orders, repeat, liveness, generators, share)
    tree.spaces += [Space(space, Liveness(runs.program, space, repeat, check, always)) for space in more]
    tree.graphs = graphs_comparable(sources)
    tree.shared.kept.on = tree.graphs and freed_graphs_shareable(sources)  # (order.kept)
    tree.spans = views_only(sources)
    tree.aside = check_only(runs.job["check"]["code"], runs.program, always)

    def rebuild() -> None:
        # In the search's own namespace: a function setup defines (a hook, a loss) reads its globals
        # there, as in every other branch (made in another dict, it read that dict's stale variables).
        order_settings.restore_settings(start)
        fresh_namespace(runs.setups, runs.paths, into=ns)

    tree.rebuild = rebuild
    tree.costs.rebuilt(setup_cost)
    tree.budget = runs.budget
    tree.same = runs.same
    if runs.program.indented:
        for space in tree.spaces:
            space.onward = Onward(space.orders, runs.broken)
            space.same = runs.same  # (a thread for the steps that are the same code)
    traces = identifiers_of("\n".join(sources)) & {"sys", "settrace", "gettrace", "threading"}
    if not traces and not runs.annotated:  # (no code of the card's traces lines; lines not run bind nothing)
        tree.runs = runs  # what a step's run tells of its siblings (order.reach, order.routes)
    return tree
