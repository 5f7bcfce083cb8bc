"""What learners see in the quiz (issue 22), in Chromium: order puzzles whose code never wraps mid-token
(1280 and 375 px), the deck's setup shown where cards use it, Markdown code spans in variant labels and
order feedback, one "The answer is True." after a wrong typed answer, and a link that opens each card."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest

from quizgen import pipeline
from quizgen.execution.pool import Pool
from quizgen.render.view import card_key
from tests.support.learner_deck import LEARNER_DECK
from tests.support.projects import write_project
from tests.support.quiz import Tab, axe_source, axe_violations, close_tab, open_tab, overflowing

PAGE = "decks/learner-readable.html"
CARDS = ["long-order", "helper-count", "helper-is-param", "swap-order"]


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory, pool: Pool) -> str:
    root = write_project(tmp_path_factory.mktemp("learner"), {"learner.yaml": LEARNER_DECK})
    pipeline.build(pipeline.Options(cards_dir=root / "cards", out_dir=root / "build", pool=pool))
    return str((root / "build" / "quiz" / PAGE).as_uri())


def opened(browser: Any, url: str, width: int = 1280, dark: bool = False) -> Tab:
    return open_tab(browser, url, width=width, dark=dark)


@pytest.fixture
def tabs(browser: Any) -> Iterator[list[Tab]]:
    made: list[Tab] = []
    yield made
    for t in made:
        assert t.errors == []
        assert t.outside() == []
        close_tab(t)


def skip_to(page: Any, card: str) -> None:
    """In quiz mode, get past each card before `card` (however it is answered) until it is shown."""
    for _ in CARDS:
        shown = page.locator("article.card:visible")
        if shown.get_attribute("data-card") == card_key(card):
            return
        cid = shown.get_attribute("data-card")
        if "kind-order" in shown.get_attribute("class"):
            while not page.locator(f"#card-{cid}.answered").count():
                page.click(f"#card-{cid} .check-order")
        elif page.locator(f"#card-{cid} .option").count():
            page.locator(f"#card-{cid} .option").first.click()
        else:
            page.fill(f"#answer-{cid}", "0")
            page.press(f"#answer-{cid}", "Enter")
        page.click("#next")
    raise AssertionError(f"never reached {card}")


# Each line of code as the browser lays it out: its tokens split over two line boxes (none may be: a
# wrapped token reads as two), its rows beyond its source lines (a long line wraps between tokens, its
# continuation marked), and the room it gets in characters.
LINE_BOXES = """(card) => Array.from(document.querySelectorAll(`#card-${card} .line-code`)).map((el) => {
  const tops = new Set(), range = document.createRange();
  let charWidth = 0, split = [];
  const walk = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
  for (let node = walk.nextNode(); node; node = walk.nextNode()) {
    range.selectNodeContents(node);
    const mine = new Set();
    for (const r of range.getClientRects()) {
      if (r.width === 0) continue;
      tops.add(Math.round(r.top));
      mine.add(Math.round(r.top));
      charWidth = Math.max(charWidth, r.width / node.textContent.length);
    }
    if (mine.size > 1 && node.textContent.trim()) split.push(node.textContent);
  }
  const text = el.textContent.replace(/\\n$/, "");
  // The room for code: the line's width less its label and button, in characters of this code.
  const line = el.closest(".line");
  const room = line.clientWidth - line.querySelector(".line-label").offsetWidth
    - line.querySelector(".toggle").offsetWidth;
  return {text, split, boxes: tops.size, lines: text.split("\\n").length, room: room / charWidth,
          fits: line.scrollWidth <= line.clientWidth};
})"""


@pytest.mark.parametrize("width", [1280, 375])
def test_order_code_never_wraps_mid_token(browser: Any, site: str, tabs: list[Tab], width: int) -> None:
    tab = opened(browser, site, width)
    tabs.append(tab)
    page = tab.page
    assert page.is_visible(f"#card-{card_key('long-order')}")
    lines = page.evaluate(LINE_BOXES, card_key("long-order"))
    assert len(lines) == 4
    for line in lines:
        assert line["split"] == [] and line["fits"], f"{line['text']!r} at {width} px: {line}"
    assert any(line["boxes"] > line["lines"] for line in lines)  # the longest wrap, between two tokens
    # The code gets the room: at 1280 px PEP 8's 79 columns nearly fit; at 375 px about 30 characters.
    room = min(line["room"] for line in lines)
    assert room >= (75 if width == 1280 else 28), (width, room)
    # One line in the block, indented a level: no token split, nothing wider than the screen.
    line = page.locator(f"#card-{card_key('long-order')} .line").filter(has_text="loss.backward()")
    line.locator(".toggle").click()
    line = page.locator(f"#card-{card_key('long-order')} .block .line").first
    line.focus()
    page.keyboard.press("ArrowRight")
    assert all(x["split"] == [] and x["fits"] for x in page.evaluate(LINE_BOXES, card_key("long-order")))
    assert overflowing(page) == []
    help_text = page.inner_text(f"#order-help-{card_key('long-order')}")
    assert "Space drops it. Indentation counts" in help_text


@pytest.mark.parametrize("dark", [False, True])
def test_an_order_puzzle_at_375_px_has_no_axe_violations(
    browser: Any, site: str, tabs: list[Tab], dark: bool
) -> None:
    tab = opened(browser, site, 375, dark)
    tabs.append(tab)
    page = tab.page
    page.locator(f"#card-{card_key('long-order')} .pool .toggle").first.click()
    page.click(f"#card-{card_key('long-order')} details.setup summary")
    assert axe_violations(page, axe_source()) == []


def test_the_deck_setup_is_shown_collapsed_and_highlighted(browser: Any, site: str, tabs: list[Tab]) -> None:
    tab = opened(browser, site)
    tabs.append(tab)
    page = tab.page
    # An order puzzle: the deck's setup (the helper its line calls), then the card's own.
    setup = page.locator(f"#card-{card_key('long-order')} details.setup")
    assert not setup.evaluate("d => d.open")
    setup.locator("summary").click()
    text = setup.inner_text()
    assert "def head_params(n):" in text and "head = torch.nn.Linear(4, 2)" in text
    assert text.index("def head_params") < text.index("head = torch.nn.Linear")
    skip_to(page, "helper-count")
    # A value card calls the helper: its setup is there, collapsed, highlighted like the card's code.
    setup = page.locator(f"#card-{card_key('helper-count')} details.setup")
    assert setup.count() == 1 and not setup.evaluate("d => d.open")
    setup.locator("summary").click()
    assert "def head_params(n):" in setup.inner_text()
    assert setup.locator(".highlight span").count() > 3  # tokens coloured as in the code
    assert axe_violations(page, axe_source()) == []


def test_variant_labels_show_their_code_spans(browser: Any, site: str, tabs: list[Tab]) -> None:
    tab = opened(browser, site)
    tabs.append(tab)
    page = tab.page
    skip_to(page, "helper-count")
    page.locator(f"#card-{card_key('helper-count')} .option").filter(has_text="3").click()
    reason = page.locator(f"#card-{card_key('helper-count')} .reason")
    assert reason.is_visible()
    assert "`" not in reason.inner_text()
    assert reason.locator("code").all_inner_texts() == ["head_params", "n"]
    assert reason.locator("strong").all_inner_texts() == ["one"]  # emphasis as Markdown, not asterisks
    assert reason.inner_text() == "That is what you get if head_params gives one tensor per n."


def test_order_feedback_shows_its_code_spans(browser: Any, site: str, tabs: list[Tab]) -> None:
    tab = opened(browser, site)
    tabs.append(tab)
    page = tab.page
    skip_to(page, "swap-order")
    for code in ["w = torch.ones(2, requires_grad=True)", "loss.backward()", "loss = (w * 3).sum()"]:
        exact = re.compile(rf"^\s*{re.escape(code)}\s*$")
        line = page.locator(f"#card-{card_key('swap-order')} .pool .line").filter(
            has=page.locator(".line-code", has_text=exact)
        )
        line.locator(".toggle").click()
    page.click(f"#card-{card_key('swap-order')} .check-order")
    reason = page.locator(f"#card-{card_key('swap-order')} .reason")
    reason.wait_for(state="visible")
    assert "`" not in reason.inner_text()
    assert reason.locator("code").all_inner_texts() == [
        "loss.backward()",
        "loss = (w * 3).sum()",
        "loss.backward()",
    ]
    assert "raises NameError" in reason.inner_text()


def test_a_wrong_typed_answer_says_the_answer_once(browser: Any, site: str, tabs: list[Tab]) -> None:
    tab = opened(browser, site)
    tabs.append(tab)
    page = tab.page
    skip_to(page, "helper-is-param")
    page.fill(f"#answer-{card_key('helper-is-param')}", "False")
    page.press(f"#answer-{card_key('helper-is-param')}", "Enter")
    result = page.locator(f"#card-{card_key('helper-is-param')} .result")
    result.wait_for(state="visible")
    assert page.inner_text(f"#card-{card_key('helper-is-param')} .outcome") == "Not right"
    assert result.inner_text().count("The answer is True") == 1, result.inner_text()


def test_a_link_opens_its_card(browser: Any, site: str, tabs: list[Tab]) -> None:
    tab = opened(browser, site + f"#card-{card_key('swap-order')}")
    tabs.append(tab)
    page = tab.page
    assert page.is_visible(f"#card-{card_key('swap-order')}")
    assert page.inner_text("#status").startswith("Quiz: card 4 of 4")
    # Each card shows its link; following one opens that card, in quiz mode, from review mode too.
    link = page.locator(f"#card-{card_key('swap-order')} a.card-link")
    assert link.get_attribute("href") == f"#card-{card_key('swap-order')}"
    page.click(".modes [data-mode='review']")
    page.evaluate(f"location.hash = '#card-{card_key('helper-is-param')}'")
    page.wait_for_selector(f"#card-{card_key('helper-is-param')}", state="visible")
    assert page.get_attribute(".modes [data-mode='quiz']", "aria-pressed") == "true"
    assert page.url.endswith(f"#card-{card_key('helper-is-param')}")
    page.click(f"#card-{card_key('helper-is-param')} a.card-link")
    assert page.is_visible(f"#card-{card_key('helper-is-param')}")
    # An address naming no card of the deck opens the quiz at its start.
    tab2 = opened(browser, site + f"#card-{card_key('not-a-card')}")
    tabs.append(tab2)
    assert tab2.page.is_visible(f"#card-{card_key('long-order')}")
