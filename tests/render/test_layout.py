"""What learners see at 375 px and in both outputs alike: headings wrap between words, code scrolls
sideways instead of wrapping, a value card asks its question before its code in the quiz and in Anki,
warnings carry no path of the author's machine, and only cards whose code used torch claim it."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from quizgen import pipeline
from quizgen.execution.pool import Pool
from quizgen.render.quiz import assets
from quizgen.render.view import card_key
from tests.support.paths import REPO
from tests.support.projects import write_project
from tests.support.quiz import Tab, as_shown, axe_source, axe_violations, close_tab, open_tab, overflowing

LONG_DECK = """\
deck: PyTorch::Gradients::ZeroingGradients
description: |
  ## Why optimizer.zero_grad() matters

  Text.
setup: |
  import torch
cards:
  - id: non-leaf-grad
    kind: value
    ask: "What is `y.grad` for a tensor that is not a leaf?"
    code: |
      x = torch.ones(2, requires_grad=True)
      y = x * 2
      y.sum().backward()
      total_of_a_long_name = torch.ones(3) + torch.ones(3) + torch.ones(3) + torch.ones(3) + torch.ones(3)
    answer_expr: y.grad
    answer: null
  - id: plain-python
    kind: value
    ask: "What is `sum(xs)`?"
    code: |
      xs = [1, 2, 3]
    answer_expr: sum(xs)
    answer: 6
  - id: plain-basic
    kind: basic
    front: "What does this print?"
    back: "hello"
    code: |
      print("hello")
"""
PAGE = "decks/pytorch-gradients-zeroinggradients.html"


@pytest.fixture(scope="module")
def layout_build(tmp_path_factory: pytest.TempPathFactory, pool: Pool) -> pipeline.Report:
    root = write_project(tmp_path_factory.mktemp("layout"), {"long.yaml": LONG_DECK})
    report = pipeline.build(pipeline.Options(cards_dir=root / "cards", out_dir=root / "build", pool=pool))
    report.root = root  # type: ignore[attr-defined]
    return report


@pytest.fixture
def phone(browser: Any, layout_build: pipeline.Report) -> Iterator[Tab]:
    url = (layout_build.root / "build" / "quiz" / PAGE).as_uri()  # type: ignore[attr-defined]
    tab = open_tab(browser, url, width=375)
    yield tab
    close_tab(tab)


def views(report: pipeline.Report) -> dict[str, Any]:
    from quizgen.render.present import deck_views

    return {view.id: view for deck in report.decks for view in deck_views(deck)}


def test_warnings_shown_to_learners_carry_no_path(layout_build: pipeline.Report) -> None:
    output = views(layout_build)["non-leaf-grad"].output
    assert output.startswith("UserWarning: The .grad attribute of a Tensor that is not a leaf Tensor")
    assert (
        "/" not in output.split("UserWarning:")[0] and ".py:" not in output and "site-packages" not in output
    )


def test_only_cards_whose_code_used_torch_claim_it(layout_build: pipeline.Report) -> None:
    found = {
        card_id: (view.executed, bool(view.torch_version)) for card_id, view in views(layout_build).items()
    }
    assert found == {
        "non-leaf-grad": (True, True),
        "plain-python": (True, False),
        "plain-basic": (True, False),
    }
    page = as_shown((layout_build.root / "build" / "quiz" / PAGE).read_text())  # type: ignore[attr-defined]
    provenance = [line for line in page.splitlines() if 'class="provenance"' in line]
    assert provenance == [
        '<p class="provenance">Verified with torch <span class="torch-version">'
        f"{layout_build.decks[0].cards[0].torch_version}</span>.</p>",
        '<p class="provenance">Executed at build time.</p>',
        '<p class="provenance">Executed at build time.</p>',
    ]


def test_a_value_card_asks_before_its_code_in_the_quiz(layout_build: pipeline.Report) -> None:
    page = as_shown((layout_build.root / "build" / "quiz" / PAGE).read_text())  # type: ignore[attr-defined]
    card = page[page.index(f'id="card-{card_key("non-leaf-grad")}"') :]
    assert card.index('class="prompt"') < card.index('class="snippet"')


# A word of a heading broken over two lines has client rects on two lines (text split at <wbr> is
# one word per text node, so `Zeroing<wbr>Gradients` may wrap between its parts).
BROKEN_WORDS = """() => {
  const broken = [];
  for (const h of document.querySelectorAll('h1, h2, h3, h4')) {
    if (!h.offsetParent) continue;
    if (h.scrollWidth > h.clientWidth) broken.push(`${h.tagName} overflows`);
    const walker = document.createTreeWalker(h, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const re = /\\S+/g;
      for (let m = re.exec(node.data); m; m = re.exec(node.data)) {
        const range = document.createRange();
        range.setStart(node, m.index);
        range.setEnd(node, m.index + m[0].length);
        const tops = new Set([...range.getClientRects()].map(r => Math.round(r.top)));
        if (tops.size > 1) broken.push(m[0]);
      }
    }
  }
  return broken;
}"""


def test_at_375px_headings_break_between_words_and_code_scrolls(phone: Tab) -> None:
    page = phone.page
    h1 = page.locator("header h1")
    assert h1.inner_text() == "PyTorch::Gradients::ZeroingGradients"
    assert h1.evaluate("h => h.getClientRects().length && h.getBoundingClientRect().height > 40"), "it wraps"
    assert page.evaluate(BROKEN_WORDS) == []
    pre = page.locator(f"#card-{card_key('non-leaf-grad')} .snippet pre")
    style = pre.evaluate("p => [getComputedStyle(p).overflowX, getComputedStyle(p).whiteSpace]")
    assert style == ["auto", "pre"]
    assert pre.evaluate("p => p.scrollWidth > p.clientWidth"), "the long line scrolls inside its block"
    lines = pre.evaluate("p => p.getClientRects()[0].height / parseFloat(getComputedStyle(p).lineHeight)")
    assert lines < 6, "four lines of code stay four lines (plus padding), none wraps"
    assert overflowing(page) == []


def test_at_375px_axe_finds_nothing(phone: Tab) -> None:
    assert axe_violations(phone.page, axe_source()) == []
    assert "quiz.css" in assets()


def test_anki_card_style_scrolls_code(layout_build: pipeline.Report) -> None:
    css = (REPO / "src" / "quizgen" / "templates" / "anki" / "card.css").read_text()
    block = css[css.index(".qg pre.highlight, .qg-back pre.highlight, pre.qg-output {") :]
    block = block[: block.index("}")]
    assert "overflow-x: auto;" in block and "white-space: pre;" in block
    assert json.dumps(views(layout_build)["plain-python"].judge)  # the card still carries what judge.js needs


def _run_job(setup: list[str], code: str, expr: str | None = None) -> Any:
    snippet = lambda text, line: {"code": text, "path": "deck.yaml", "line": line}  # noqa: E731
    return {
        "type": "run",
        "setup": [snippet(s, 1) for s in setup],
        "code": snippet(code, 10),
        "expr": snippet(expr, 20) if expr else None,
    }


@pytest.mark.parametrize(
    ("setup", "code", "expr", "uses"),
    [
        (["import torch"], "xs = [1, 2]\nprint(sum(xs))", None, False),  # the deck's import alone
        (["import torch"], "w = torch.ones(1)", None, True),
        (["import torch\nmodel = torch.nn.Linear(2, 1)\nxs = [1]"], "print(model)", None, True),
        (["import torch\nmodel = torch.nn.Linear(2, 1)\nxs = [1]"], "print(xs)", None, False),
        ([], "import torch as t\nx = t.ones(1)", None, True),
        ([], "from torch import nn\nlayer = nn.Linear(1, 1)", None, True),
        (["import torch"], "x = 1", "torch.tensor(x)", True),
        (["import torch"], "for x in [1]:", None, False),  # does not parse alone: its names count
        (["import torch"], "for x in torch.ones(2):", None, True),
    ],
)
def test_which_code_uses_torch(setup: list[str], code: str, expr: str | None, uses: bool) -> None:
    from quizgen.render.torch_use import uses_torch

    assert uses_torch(_run_job(setup, code, expr)) is uses
