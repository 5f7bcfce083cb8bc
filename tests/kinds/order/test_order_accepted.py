"""Order puzzles show and count what they accept (issue 31): the counts in the quiz, in Anki and in
`{{orders}}` are the arrangements the judge accepts, levels included; `quizgen check` warns, at the
card, when an accepted arrangement changes the block structure or when more are accepted than the
card's max_accepted; `quizgen show CARD` lists them, grouped by how they differ from the written order."""

from __future__ import annotations

import json
import sqlite3
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from quizgen import pipeline
from quizgen.cli import cli
from quizgen.kinds.order import accepted as oa
from quizgen.kinds.order.accepted import Puzzle
from tests.support.projects import write_project

# An author's eval loop: five lines, one distractor, a check that says nothing of where model.eval()
# goes, so the judge accepts it inside the loop (and the `with` around the loop, and more).
EVAL_LOOP = """\
deck: Eval
setup: |
  import torch
cards:
  - id: eval-loop
    kind: order
    indent: true
    setup: |
      model = torch.nn.Linear(2, 1)
      xs = [torch.ones(1, 2), torch.zeros(1, 2)]
    lines:
      - model.eval()
      - preds = []
      - "for x in xs:"
      - "    with torch.no_grad():"
      - "        preds.append(model(x))"
    distractors:
      - "        preds.append(model(x).item)"
    check: |
      assert not model.training
      assert len(preds) == 2 and not any(p.requires_grad for p in preds)
    explain: "{{orders}} arrangements work."
"""

LOOP = Puzzle(
    ["model.eval()", "preds = []", "for x in xs:", "with torch.no_grad():", "preds.append(model(x))"],
    [0, 0, 0, 1, 2],
    4,
    [
        "`model.eval()`",
        "`preds = []`",
        "`for x in xs:`",
        "`with torch.no_grad():`",
        "`preds.append(model(x))`",
    ],
)
INSIDE = ((1, 0), (2, 0), (0, 1), (3, 1), (4, 2))  # model.eval() moved into the loop's body


def test_parents_are_the_nearest_line_before_at_a_lower_level() -> None:
    assert oa.parents(LOOP.written()) == {0: None, 1: None, 2: None, 3: 2, 4: 3}
    assert oa.parents(INSIDE) == {1: None, 2: None, 0: 2, 3: 2, 4: 3}


def test_a_line_moved_into_a_body_changes_the_structure_and_a_reorder_does_not() -> None:
    assert oa.regrouped(LOOP, INSIDE) == [0]
    reordered = ((1, 0), (0, 0), (2, 0), (3, 1), (4, 2))
    assert oa.regrouped(LOOP, reordered) == []
    assert oa.difference(LOOP, INSIDE) == oa.Difference(
        "`model.eval()` into the body of `for x in xs:`", True
    )
    assert oa.difference(LOOP, reordered) == oa.Difference(oa.REORDERED, False)
    groups = oa.grouped(LOOP, [INSIDE, reordered, LOOP.written()])
    assert [(d.words, len(g)) for d, g in groups] == [
        (oa.AS_WRITTEN, 1),
        (oa.REORDERED, 1),
        ("`model.eval()` into the body of `for x in xs:`", 1),
    ]


def test_two_arrangements_side_by_side() -> None:
    assert oa.side_by_side("a = 1\nfor x in y:\n    a += x", "for x in y:\n    a = 1\n    a += x") == (
        "    written                                 | accepted\n"
        "    a = 1                                   | for x in y:\n"
        "    for x in y:                             |     a = 1\n"
        "        a += x                              |     a += x"
    )


def test_a_weak_check_is_told_with_the_written_order_beside_an_accepted_one() -> None:
    said = oa.weak(LOOP, [LOOP.written(), INSIDE], most=12)
    assert said == [
        "the check accepts an arrangement that moves `model.eval()` into the body of `for x in xs:` (1 of "
        "the 2 accepted change the block structure): tighten the check, assert what only the written "
        "structure achieves\n" + oa.side_by_side(LOOP.code(LOOP.written()), LOOP.code(INSIDE))
    ]
    assert oa.weak(LOOP, [LOOP.written()], most=1) == []
    over = oa.weak(LOOP, [LOOP.written(), ((1, 0), (0, 0), (2, 0), (3, 1), (4, 2))], most=1)
    assert len(over) == 1 and over[0].startswith(
        "the check accepts 2 arrangements, more than max_accepted (1)"
    )


@pytest.fixture(scope="module")
def eval_loop(tmp_path_factory: pytest.TempPathFactory, pool: object) -> tuple[Path, pipeline.Report]:
    root = write_project(tmp_path_factory.mktemp("eval-loop"), {"eval.yaml": EVAL_LOOP})
    options = pipeline.Options(cards_dir=root / "cards", out_dir=root / "build", pool=pool)  # type: ignore[arg-type]
    return root, pipeline.build(options)


def _accepted(root: Path) -> int:
    outcome = json.loads((root / "build" / "cards.json").read_text())["decks"][0]["cards"][0]["outcome"]
    return len(outcome.get("orders", [])) + len(outcome.get("placements", []))


def test_the_counts_are_the_arrangements_the_judge_accepts(eval_loop: tuple[Path, pipeline.Report]) -> None:
    root, _ = eval_loop
    accepted = _accepted(root)
    assert accepted > 12  # the puzzle said "1 accepted order in all"
    page = next((root / "build" / "quiz" / "decks").glob("*.html")).read_text()
    counted = f"{accepted} accepted arrangements in all"
    assert counted in page
    assert f"{accepted} arrangements work." in page  # {{orders}}
    with zipfile.ZipFile(root / "build" / "anki" / "Eval.apkg") as apkg:
        (root / "collection.anki2").write_bytes(apkg.read("collection.anki2"))
    with sqlite3.connect(root / "collection.anki2") as db:
        (fields,) = db.execute("select flds from notes").fetchone()
    assert counted in fields and f"{accepted} arrangements work." in fields


def test_check_warns_at_the_card_with_two_arrangements_side_by_side(
    eval_loop: tuple[Path, pipeline.Report],
) -> None:
    root, report = eval_loop
    accepted = _accepted(root)
    said = [str(w).removeprefix(f"{root}/") for w in report.warnings]
    assert said[0].startswith(
        "cards/eval.yaml:5:5: card 'eval-loop': the check accepts an arrangement that moves `model.eval()` "
        "into the body of `for x in xs:` ("
    )
    assert said[0].endswith(
        "    written                                 | accepted\n"
        "    model.eval()                            | preds = []\n"
        "    preds = []                              | for x in xs:\n"
        "    for x in xs:                            |     model.eval()\n"
        "        with torch.no_grad():               |     with torch.no_grad():\n"
        "            preds.append(model(x))          |         preds.append(model(x))"
    )
    assert said[1].startswith(
        f"cards/eval.yaml:5:5: card 'eval-loop': the check accepts {accepted} arrangements, more than "
        "max_accepted (12): a learner who tries orders at random gets it right; tighten the check"
    )


def test_max_accepted_on_the_card_raises_the_bound(
    project: Callable[[dict[str, str]], Path], options: Callable[..., pipeline.Options]
) -> None:
    raised = EVAL_LOOP.replace("    indent: true\n", "    indent: true\n    max_accepted: 500\n")
    report = pipeline.check(options(project({"eval.yaml": raised})))
    assert [w.message[:42] for w in report.warnings] == ["the check accepts an arrangement that move"]


def test_show_prints_the_accepted_arrangements_grouped(
    eval_loop: tuple[Path, pipeline.Report], runner: CliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, _ = eval_loop
    monkeypatch.chdir(root)
    result = runner.invoke(cli, ["show", "eval-loop", "--sandbox", "off"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[:6] == [
        "cards/eval.yaml:5:5: card 'eval-loop':",
        f"{_accepted(root)} accepted arrangements (max_accepted: 12), each line numbered as written",
        "",
        "the order as written (1):",
        "  #1",
        "    1  model.eval()",
    ]
    assert any(line.startswith("`model.eval()` into the body of `for x in xs:` (") for line in lines)
    wrong = runner.invoke(cli, ["show", "eval-lop", "--sandbox", "off"])
    assert wrong.exit_code == 2
    assert "no card has the id 'eval-lop' (did you mean 'eval-loop'?)" in wrong.output
