"""Issue 21.3: an indented puzzle's accepted set is complete with respect to levels. Every arrangement a
learner can make (each block at any level from 0 to one past the deepest written, in any order) that
compiles and passes the check is accepted, two lines moved together included; a distractor that passes
only with another line at another level is usable; a level space too big to search ends with a verdict;
and the quiz shows a computed message only for the arrangement that was run (order.levels)."""

from __future__ import annotations

import json
import random
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from types import CodeType

import pytest

from quizgen import pipeline
from quizgen.errors import CardErrors
from quizgen.execution.worker.order_search.budget import OverBudget
from quizgen.kinds.order.answer import judge_typed
from tests.support.order_puzzles import PATH, job, random_loop_puzzle, search
from tests.support.paths import REPO
from tests.support.tools import missing

HEADER = "deck: T\ncards:\n"
JUDGE_JS = REPO / "src" / "quizgen" / "static" / "judge.js"


pytestmark = pytest.mark.usefixtures("warm_search")


# Both body lines two levels deep make the same loop (a suite may be indented by any amount); either
# alone is indented deeper than the line before it, which opens nothing: it does not compile.
TOGETHER = """\
  - id: together
    kind: order
    indent: true
    setup: |
      xs = [1, 2, 3]
    lines:
      - s = 0
      - "for x in xs:"
      - "    t = x * x"
      - "    s += t"
    check: |
      assert s == 14
"""


def test_two_lines_that_pass_only_moved_together_are_accepted() -> None:
    """On main each line was tried at another level alone, and neither compiles so: the pair was never
    run, and a learner who indented the whole body one level deeper was told it is wrong."""
    puzzle = job(
        "xs = [1, 2, 3]\n",
        ["s = 0", "for x in xs:", "t = x * x", "s += t"],
        "assert s == 14\n",
        levels=[0, 0, 1, 1],
    )
    fast, _ = search(puzzle, fast=True)
    assert fast == search(puzzle, fast=False)[0]
    assert fast["orders"] == [[0, 1, 2, 3]]
    assert [[0, 0], [1, 0], [2, 2], [3, 2]] in fast["placements"]
    alone = ([[0, 0], [1, 0], [2, 2], [3, 1]], [[0, 0], [1, 0], [2, 1], [3, 2]])
    assert not any(a in fast["placements"] for a in alone)


def test_the_judge_accepts_two_lines_moved_together(
    project: Callable[..., Path], options: Callable[..., pipeline.Options]
) -> None:
    from quizgen.render.present import card_view

    report = pipeline.check(options(project({"o.yaml": HEADER + TOGETHER})))
    [vc] = report.decks[0].cards
    judge = card_view(vc, []).judge
    labels, items = judge["labels"], judge["items"]
    label = {line: labels[k] for k, line in enumerate(items)}  # type: ignore[arg-type]
    written = f"{label[0]} {label[1]} >{label[2]} >{label[3]}"
    both = f"{label[0]} {label[1]} >>{label[2]} >>{label[3]}"
    assert judge_typed(judge, written) and judge_typed(judge, both)
    assert not judge_typed(judge, f"{label[0]} {label[1]} >>{label[2]} >{label[3]}")


# The distractor is an `if` that changes nothing for these xs: usable with `total += x` one level deeper.
GUARDED = """\
  - id: guarded
    kind: order
    indent: true
    setup: |
      xs = [3, 4]
    lines:
      - total = 0
      - "for x in xs:"
      - "    total += x"
    distractors:
      - "    if x > 0:"
    check: |
      assert total == 7
"""


def test_a_distractor_usable_only_with_another_line_at_another_level_is_reported(
    project: Callable[..., Path], options: Callable[..., pipeline.Options]
) -> None:
    """On main the distractor was tried at each level in an accepted order whose lines kept theirs: an
    `if` with nothing indented under it never compiles, so the card built."""
    with pytest.raises(CardErrors) as info:
        pipeline.check(options(project({"o.yaml": HEADER + GUARDED})))
    [problem] = [str(p) for p in info.value.problems]
    assert "/o.yaml:13: " in problem and "card 'guarded' -> distractors: distractor 'if x > 0:'" in problem
    assert problem.endswith(
        "can be used: this order passes the check: total = 0 (at level 0); for x in xs: (at level 0); "
        "if x > 0: (at level 1); total += x (at level 2)"
    )


def test_a_level_space_too_big_to_search_ends_with_a_located_verdict(
    project: Callable[..., Path], options: Callable[..., pipeline.Options]
) -> None:
    """Two loops and seven appends: 5,040 orders as written (main searched those and built the card),
    more than 362,880 programs with each block at any level a learner may give it: a verdict, at once."""
    body = "".join(f'      - "        log.append({k})"\n' for k in range(7))
    card = (
        "  - id: nested\n    kind: order\n    indent: true\n    setup: |\n      log = []\n    lines:\n"
        '      - "for a in range(2):"\n      - "    for b in range(1):"\n'
        + body
        + "    check: |\n      assert log == [0, 1, 2, 3, 4, 5, 6] * 2\n"
    )
    with pytest.raises(CardErrors) as info:
        pipeline.check(options(project({"o.yaml": HEADER + card})))
    [problem] = [str(p) for p in info.value.problems]
    assert "o.yaml:" in problem and "card 'nested' -> check:" in problem
    assert problem.endswith(
        "more than 362,880 programs can be made of the lines with each block at any level a learner may "
        "give it (0 to 3), too many to search them all: split the puzzle (fewer blocks in one loop), or "
        "make the lines depend on each other"
    )


def test_a_distractor_space_too_big_to_search_is_a_verdict_too(monkeypatch: pytest.MonkeyPatch) -> None:
    from quizgen.execution.worker.order_search import levels

    monkeypatch.setattr(levels, "MAX_CANDIDATES", 20)
    puzzle = job(
        "xs = [3, 4]\n",
        ["total = 0", "for x in xs:", "total += x"],
        "assert total == 7\n",
        distractors=("total -= x",),
        levels=[0, 0, 1, 1],
    )
    with pytest.raises(OverBudget, match="of the lines with the distractor 'total -= x' with each block"):
        search(puzzle, fast=True)


# `total = x` is no use at any level; the build ran it in place of `total += x` at each level.
TOLD = """\
  - id: told
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
      - "        total = x"
    check: |
      assert total == 7 and done
"""


def _verdict(judge: dict[str, object], lines: list[int], levels: list[int]) -> dict[str, object]:
    """judge.js's verdict (what the quiz and Anki show) on an arrangement of the items' lines."""
    node = shutil.which("node")
    if node is None:
        missing("node")
    items: list[int] = judge["items"]  # type: ignore[assignment]
    positions = [items.index(line) for line in lines]
    script = (
        f"const J = require({json.dumps(str(JUDGE_JS))});"
        f"console.log(JSON.stringify(J.verdict({json.dumps(positions)}, {json.dumps(judge)}, "
        f"{json.dumps(levels)})));"
    )
    out = subprocess.run([str(node), "-e", script], capture_output=True, text=True, check=True, timeout=60)
    return json.loads(out.stdout)  # type: ignore[no-any-return]


def test_feedback_is_shown_only_for_the_arrangement_that_was_run(
    project: Callable[..., Path], options: Callable[..., pipeline.Options]
) -> None:
    """On main a message was keyed by the distractor and its level alone ("-1@2"): a learner who put it
    at that level anywhere else was told what another arrangement did. Now only the arrangement run
    gets its message; any other is honestly not accepted (the distractor does not belong)."""
    from quizgen.render.present import card_view

    report = pipeline.check(options(project({"o.yaml": HEADER + TOLD})))
    [vc] = report.decks[0].cards
    judge = card_view(vc, []).judge
    [distractor] = [judge["labels"][k] for k, line in enumerate(judge["items"]) if line == -1]  # type: ignore[index, arg-type]
    elsewhere = _verdict(judge, [0, 1, 2, 3, -1, 4], [0, 0, 1, 2, 2, 0])  # inserted, not in place of a line
    assert elsewhere["ok"] is False
    assert elsewhere["reason"] == f"line {distractor} does not belong in the block"
    feedback: dict[str, str] = judge["feedback"]  # type: ignore[assignment]
    ran = "0@0 1@0 2@1 -1@2 4@0"  # in place of `total += x`, at its level
    assert (
        feedback[ran]
        == "With `total = x` instead of `total += x`, the check fails: `assert total == 7 and done` "
        "(total = 4, done = True)"
    )
    assert all("@" in key for key in feedback)
    assert _verdict(judge, [0, 1, 2, -1, 4], [0, 0, 1, 2, 0])["reason"] == feedback[ran]


# -- the same statement at other levels is run once (order.program.Program.same_code) ------------------


def _without_columns(code: CodeType) -> tuple[object, ...]:
    """What a code object runs, line numbers included, but not the columns it records."""
    consts = tuple(_without_columns(c) if isinstance(c, CodeType) else (type(c), c) for c in code.co_consts)
    return (
        code.co_code,
        consts,
        code.co_names,
        code.co_varnames,
        code.co_freevars,
        code.co_cellvars,
        code.co_flags,
        tuple(code.co_lines()),
        getattr(code, "co_exceptiontable", None),
    )


MULTILINE = [
    "total = 0",
    "for x in xs:",
    "if x > 0:\n    total += (x +\n        0)",
    "else:\n    total -= 0",
    "total = total * 1",
]


@pytest.mark.parametrize("seed", range(6))
def test_steps_with_one_key_compile_to_the_same_code_but_for_columns(seed: int) -> None:
    """Every statement a puzzle's blocks make at any levels, grouped by same_code: within a group the
    numbered code (as the search runs it) is the same, line for line; and the groups do join steps
    (a suite indented by more levels)."""
    from quizgen.execution.worker.order_search.levels import space
    from quizgen.execution.worker.order_search.steps import Runs

    rng = random.Random(seed)
    if seed == 0:
        puzzle = job("xs = [1, -2, 3]\n", MULTILINE, "assert total == 4\n", levels=[0, 0, 1, 1, 0])
    else:
        puzzle = random_loop_puzzle(rng)
    puzzle["distractors"] = [{**puzzle["lines"][-1], "code": "i0 = 5"}]
    puzzle["levels"] = [*puzzle["levels"], 1]
    runs = Runs(puzzle, [], {PATH})
    program = runs.program
    orders = space(program, list(range(program.blocks)), {})
    groups: dict[object, set[tuple[object, ...]]] = {}
    steps = {step for chunks in orders.all() for step in chunks}
    for step in steps:
        code = runs.code(step)
        if not isinstance(code, SyntaxError):
            groups.setdefault(runs.same(step), set()).add(_without_columns(code))
    assert groups and all(len(codes) == 1 for codes in groups.values())
    assert len(groups) < len(steps)


@pytest.mark.parametrize("seed", range(4))
def test_running_same_statements_once_changes_no_answer(monkeypatch: pytest.MonkeyPatch, seed: int) -> None:
    """The search joining steps that are the same code (and the plain search running such candidates
    once) answers as the plain search running every arrangement, distractor spaces included."""
    from quizgen.execution.worker.order_search import search as order_runs
    from quizgen.execution.worker.order_search.steps import Runs

    monkeypatch.setattr(order_runs, "SMALL", 0.0)  # the fast search, however small
    rng = random.Random(100 + seed)
    puzzle = random_loop_puzzle(rng)
    while len(puzzle["lines"]) > 4:  # (every arrangement run from the start: a small puzzle)
        puzzle = random_loop_puzzle(rng)
    puzzle["distractors"] = [
        {**puzzle["lines"][-1], "code": rng.choice(["i0 = 5", "xs.append(9)", "i1 += 5"])}
    ]
    puzzle["levels"] = [*puzzle["levels"], 1]
    joined = search(puzzle, fast=True)[0]
    monkeypatch.setattr(Runs, "same", lambda self, step: step)
    every = search(puzzle, fast=False)[0]
    assert joined == every
