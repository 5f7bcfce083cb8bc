"""Order puzzles read on a phone (issue 31), in Chromium at 375 and 1280 px: every line stays inside its
row, between its label and its button (a long one wraps, its continuation marked), the controls fit,
two lines that begin alike are both shown whole, and axe-core finds nothing."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest

from quizgen import pipeline
from quizgen.execution.pool import Pool
from quizgen.render.view import card_key
from tests.support.order_decks import PHONE, PHONE_LINES
from tests.support.projects import write_project
from tests.support.quiz import Tab, axe_source, axe_violations, close_tab, open_tab, overflowing

CARD = card_key("eval-preds")  # (the page names a card by its key)

# Each line of the puzzle: how its parts lie in its row, and whether its code hides any of itself.
ROWS = """(els) => els.map((li) => {
  const box = (e) => e.getBoundingClientRect();
  const row = box(li), label = box(li.querySelector('.line-label'));
  const pre = li.querySelector('.line-code pre'), code = box(pre), button = box(li.querySelector('.toggle'));
  return {
    text: pre.textContent.trim(), scrolls: li.scrollWidth - li.clientWidth,
    hidden: Math.max(pre.scrollWidth - pre.clientWidth, pre.scrollHeight - pre.clientHeight),
    afterLabel: code.left - label.right, beforeButton: button.left - code.right,
    inRow: Math.min(button.left - row.left, row.right - button.right, label.left - row.left),
    rightEdge: row.right, rows: Math.round(code.height / parseFloat(getComputedStyle(pre).lineHeight)),
    marker: li.querySelector('.cl') ? getComputedStyle(li.querySelector('.cl')).backgroundImage : 'none',
  };
})"""


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory, pool: Pool) -> str:
    root = write_project(tmp_path_factory.mktemp("phone"), {"phone.yaml": PHONE})
    pipeline.build(pipeline.Options(cards_dir=root / "cards", out_dir=root / "build", pool=pool))
    (page,) = (root / "build" / "quiz" / "decks").glob("*.html")
    return page.as_uri()


@pytest.fixture(params=[375, 1280], ids=["375px", "1280px"])
def tab(request: pytest.FixtureRequest, browser: Any, site: str) -> Iterator[Tab]:
    t = open_tab(browser, site, width=request.param)
    yield t
    assert t.errors == []
    close_tab(t)


def line(page: Any, code: str) -> Any:
    exact = re.compile(rf"^\s*{re.escape(code)}\s*$")
    return page.locator(f"#card-{CARD} .line").filter(has=page.locator(".line-code", has_text=exact))


def test_every_line_stays_in_its_row_and_reads_whole(tab: Tab) -> None:
    page = tab.page
    page.wait_for_selector(f"#card-{CARD}", state="visible")
    for code, level in PHONE_LINES:  # the block built by keyboard, each line at its level
        line(page, code).focus()
        page.keyboard.press("Enter")
        line(page, code).focus()
        for _ in range(level):
            page.keyboard.press("ArrowRight")
    width = page.evaluate("document.documentElement.clientWidth")
    rows = page.eval_on_selector_all(f"#card-{CARD} .line", ROWS)
    assert {row["text"] for row in rows} == {
        *(code for code, _ in PHONE_LINES),
        "preds.append(model(batch_of_inputs).squeeze(-1))",
    }
    for row in rows:
        assert row["scrolls"] <= 0, row  # nothing runs out of the row
        assert row["hidden"] <= 0, row  # the code shows all of itself: two lines alike read whole
        assert row["afterLabel"] >= 0 and row["beforeButton"] >= 0, row  # nothing under the label, button
        assert row["inRow"] >= 0 and row["rightEdge"] <= width, row  # the controls fit
    for row in rows:
        assert row["marker"].startswith("linear-gradient"), row  # a wrapped row's continuation is marked
    long = next(row for row in rows if row["text"] == PHONE_LINES[-1][0])
    assert (long["rows"] > 1) == (width < 500), long  # it wraps on the phone, not on the desktop
    assert overflowing(page) == []
    assert axe_violations(page, axe_source()) == []
