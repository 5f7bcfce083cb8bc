"""Issue 21 (items 2 and 3): the fast order search on cards nobody here wrote. A setup that leaves an
autograd graph in a name the lines use is searched fast (its start rebuilt by running setup again);
a puzzle whose accepted set is huge ends at once with a verdict; an indented puzzle tries every block at
every level; and the fast search accepts exactly what the plain one does on a corpus of realistic
puzzles (tests/support/order_corpus.py, seeded apart from the benchmark)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from quizgen import pipeline
from quizgen.errors import CardErrors
from quizgen.execution.worker.order_search import search as order_runs
from quizgen.execution.worker.snippets import SnippetFailed
from quizgen.kinds.order.answer import judge_typed
from tests.support.order_corpus import CORPUS_SEED, corpus
from tests.support.order_puzzles import job, search

HEADER = "deck: T\nsetup: |\n  import torch\ncards:\n"


pytestmark = pytest.mark.usefixtures("warm_search")


@pytest.fixture
def plain_runs(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Records each time the fast search runs ("fast") and gives up for the plain one ("plain"); every
    search is run fast, however small or unmerged (else run plain by choice: order.runs._small, _unmerged)."""
    fallbacks: list[str] = []
    explore = order_runs._explore
    monkeypatch.setattr(order_runs, "SMALL", 0.0, raising=False)  # (none on main)
    monkeypatch.setattr(order_runs, "_unmerged", lambda runs, orders: False, raising=False)

    def recording(tree: order_runs.Tree, threads: list[order_runs.Thread]) -> list[order_runs.Thread]:
        fallbacks.append("fast")
        try:
            return explore(tree, threads)
        except order_runs._Plain:
            fallbacks.append("plain")
            raise

    monkeypatch.setattr(order_runs, "_explore", recording)
    return fallbacks


# A reference trained with the lines' own names: `out` and `loss` are left holding an autograd graph.
REUSING_SETUP = """\
model = torch.nn.Linear(3, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
criterion = torch.nn.MSELoss()
x, y = torch.randn(4, 3), torch.randn(4, 1)
ref = torch.nn.Linear(3, 1)
ref.load_state_dict(model.state_dict())
ref_opt = torch.optim.SGD(ref.parameters(), lr=0.1, momentum=0.9)
for _ in range(2):
    ref_opt.zero_grad()
    out = ref(x)
    loss = criterion(out, y)
    loss.backward()
    ref_opt.step()
"""
STEP = ["opt.zero_grad()", "out = model(x)", "loss = criterion(out, y)", "loss.backward()", "opt.step()"]
CHECK = "assert torch.allclose(model.weight, ref.weight)\n"


def test_a_setup_that_leaves_a_graph_in_the_lines_names_is_searched_fast(plain_runs: list[str]) -> None:
    """The start cannot be copied (`out` holds a graph): it is rebuilt by running setup again, and the
    fast search answers, as the plain one does (on main it fell back to the plain search)."""
    puzzle = job(REUSING_SETUP, STEP, CHECK, repeat=2, distractors=("out = model(x).detach()",))
    fast, _ = search(puzzle, fast=True)
    assert "fast" in plain_runs and "plain" not in plain_runs
    plain, _ = search(puzzle, fast=False)
    assert fast == plain and fast["orders"]


def test_a_puzzle_whose_accepted_set_is_huge_ends_with_a_verdict() -> None:
    """8 free lines and an unusable distractor: 40,320 accepted orders (on main: every way to use the
    distractor in each of them held at once, 6 GB, then out of memory). Now: a verdict on the puzzle."""
    lines = [f"t{k}.add_({k})" for k in range(8)]
    setup = "".join(f"t{k} = torch.zeros(3)\n" for k in range(8))
    puzzle = job(setup, lines, "assert t1.sum() == 3\n", distractors=("t0 = None",))
    for fast in (True, False):
        with pytest.raises(SnippetFailed, match="pass the check: the lines hardly constrain each other"):
            search(puzzle, fast=fast)


def test_a_search_past_its_memory_budget_ends_with_a_verdict(monkeypatch: pytest.MonkeyPatch) -> None:
    """Memory is read between steps; past the budget the search stops with what is wrong."""
    from quizgen.execution.worker.order_search import budget as order_budget

    reads = iter([1 << 30] * 2)  # at the start; then the search has grown by a terabyte
    monkeypatch.setattr(order_budget, "_vsize", lambda: next(reads, 1 << 40))
    monkeypatch.setattr(order_budget, "_EVERY", 1)
    puzzle = job("log = []\n", [f"log.append({k})" for k in range(5)], "assert log[:2] == [0, 1]\n")
    with pytest.raises(SnippetFailed, match="needs more memory than a worker has"):
        search(puzzle, fast=True)


def test_a_fast_search_collects_only_its_young_garbage_unless_its_memory_runs_out(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A full collection walks every object the search holds: none is due while the search runs, from
    counting its candidates to exploring the tree (the collector's settings come back after), but one
    runs before a verdict on memory."""
    import gc

    from quizgen.execution.worker.order_search import budget as order_budget
    from quizgen.execution.worker.order_search.program import Orders
    from quizgen.execution.worker.order_search.tree import Tree

    monkeypatch.setattr(order_runs, "SMALL", 0.0)
    monkeypatch.setattr(order_runs, "_unmerged", lambda runs, orders: False)
    seen: list[object] = []
    explore = Tree.explore

    def exploring(tree: Tree, threads: list[object]) -> object:
        seen.append(gc.get_threshold())
        return explore(tree, threads)

    def collect(generation: int = 2) -> int:
        seen.append(("collect", generation))
        return 0

    count = Orders.count

    def counting(orders: Orders, limit: int) -> int:
        seen.append(gc.get_threshold())
        return count(orders, limit)

    monkeypatch.setattr(Tree, "explore", exploring)
    monkeypatch.setattr(Orders, "count", counting)
    thresholds = gc.get_threshold()
    puzzle = job("log = []\n", [f"log.append({k})" for k in range(5)], "assert log[:2] == [0, 1]\n")
    search(puzzle, fast=True)
    assert seen and all(t[:2] == thresholds[:2] and t[2] >= 1 << 30 for t in seen)  # type: ignore[index]
    assert gc.get_threshold() == thresholds
    reads = iter([1 << 30] * 2)
    monkeypatch.setattr(order_budget, "_vsize", lambda: next(reads, 1 << 40))
    monkeypatch.setattr(order_budget, "_EVERY", 1)
    monkeypatch.setattr(gc, "collect", collect)
    with pytest.raises(SnippetFailed, match="needs more memory"):
        search(puzzle, fast=True)
    assert ("collect", 2) in seen


# The distractor written two levels deep; one level out, in place of `total += x`, it does the same job.
INDENTED_CARD = """\
  - id: positives
    kind: order
    indent: true
    setup: |
      xs = [3, -1, 4]
    lines:
      - total = 0
      - "for x in xs:"
      - "    if x > 0:"
      - "        total += x"
      - done = True
    distractors:
      - "            total = total + x"
    check: |
      assert total == 7 and done
"""


def test_a_distractor_usable_at_another_level_is_reported(
    project: Callable[..., Path], options: Callable[..., pipeline.Options]
) -> None:
    """On main only the distractor's written level was tried: the card built, and a learner who put it
    one level out (where it passes) was told it does not compile."""
    with pytest.raises(CardErrors) as info:
        pipeline.check(options(project({"o.yaml": HEADER + INDENTED_CARD})))
    [problem] = [str(p) for p in info.value.problems]
    assert "o.yaml:17:" in problem and "card 'positives' -> distractors: distractor" in problem
    assert "'total = total + x' can be used" in problem and "total = total + x (at level " in problem


def test_each_level_of_a_distractor_gets_the_feedback_of_what_it_does_there() -> None:
    puzzle = job(
        "xs = [3, -1, 4]\n",
        ["total = 0", "for x in xs:", "if x > 0:", "total += x", "done = True"],
        "assert total == 7 and done\n",
        distractors=("total = x",),
        levels=[0, 0, 1, 2, 0, 2],
    )
    fast, _ = search(puzzle, fast=True)
    assert fast == search(puzzle, fast=False)[0]
    by_level = {f["level"]: f["exception"] for f in fast["feedback"] if "distractor" in f}
    assert set(by_level) == {0, 1, 2, 3}  # in place of `total += x`, at each level a learner may give it
    assert by_level[2] == "AssertionError"  # where it was written: it runs, and the check fails
    assert by_level[0] == "IndentationError: expected an indented block after 'if' statement"


def test_a_line_at_another_level_that_works_is_accepted_by_the_judge(
    project: Callable[..., Path], options: Callable[..., pipeline.Options]
) -> None:
    """`done = True` inside the loop does the same job: that placement is accepted, in the search's result
    and by the judge (quiz and Anki: judge.js, held to its Python twin by tests/cases/judge_cases.json)."""
    from quizgen.render.present import card_view

    card = INDENTED_CARD.replace('      - "            total = total + x"\n', '      - "        total = x"\n')
    report = pipeline.check(options(project({"o.yaml": HEADER + card})))
    [vc] = report.decks[0].cards
    judge = card_view(vc, []).judge
    assert [[0, 0], [1, 0], [2, 1], [3, 2], [4, 1]] in judge["placements"]  # type: ignore[operator]
    labels, items = judge["labels"], judge["items"]
    label = {line: labels[k] for k, line in enumerate(items)}  # type: ignore[arg-type]
    inside = f"{label[0]} {label[1]} >{label[2]} >>{label[3]} >{label[4]}"
    assert judge_typed(judge, inside)
    assert judge_typed(judge, inside.replace(f">{label[4]}", label[4]))  # as written
    assert not judge_typed(judge, inside.replace(f">{label[2]}", label[2]))


# -- a corpus nobody tuned on -----------------------------------------------------------------------------


def test_fast_and_plain_searches_agree_on_a_corpus_of_realistic_puzzles(plain_runs: list[str]) -> None:
    """Training steps with every optimizer, schedulers, GradScaler, accumulation, indented loops with
    distractors, setups reusing the lines' names (seed CORPUS_SEED, not the benchmark's)."""
    puzzles = corpus(24, CORPUS_SEED)
    differ = []
    for name, puzzle in puzzles:
        try:
            fast: object = search(puzzle, fast=True)[0]
        except SnippetFailed as exc:
            fast = exc.message
        try:
            plain: object = search(puzzle, fast=False)[0]
        except SnippetFailed as exc:
            plain = exc.message
        if fast != plain:
            differ.append((name, fast, plain))
    assert differ == []
    assert plain_runs.count("plain") <= len(puzzles) // 20  # the fast search handles 95% alone


def test_fast_and_plain_searches_agree_on_shapes_the_corpus_does_not_draw(plain_runs: list[str]) -> None:
    """One puzzle of each shape of tests/support/order_unseen.py (its own seed): a scheduler over `repeat: 3`,
    accumulation under `if (i + 1) % k == 0:`, loops two deep, `no_grad` and `autocast` blocks,
    try/except, an LBFGS closure, Adam with state, a hook made in setup, torch.func.grad, dropout and
    noise, a class in blocks, prints and warnings, a distractor right at another level. (Drawn with
    another seed, a hook's puzzle found the fast search naming another usable order: a start rebuilt
    from setup ran in a dict of its own; test_order_search_fast's rebuilt-start test holds that.)"""
    from tests.support.order_unseen import SHAPES, unseen

    differ = []
    for name, puzzle in unseen(len(SHAPES)):
        answers = []
        for fast in (True, False):
            try:
                answers.append(search(puzzle, fast=fast)[0])
            except SnippetFailed as exc:
                answers.append(exc.message)
        if answers[0] != answers[1]:
            differ.append((name, *answers))
    assert differ == []
    assert plain_runs.count("fast") >= len(SHAPES) and "plain" not in plain_runs
