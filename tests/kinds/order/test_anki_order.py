"""Order puzzles on Anki cards (issue 11), rendered by the real Anki backend and run in Chromium: a new
shuffle per review that the back shows and judges as the front showed it (Anki desktop's one page and
AnkiDroid/AnkiMobile's two), indentation typed with '>', the build's message and marks for a wrong
order, and the attempts before the back."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest

from quizgen.execution.pool import Pool
from tests.support import anki_reviewer
from tests.support.anki import build
from tests.support.order_decks import DECK, LOOP, PHONE, PHONE_LINES, deck
from tests.support.projects import write_project

# The tab serving the collection's media and our pages, and the two ways a client shows the back.
context, page = anki_reviewer.context, anki_reviewer.page
desktop, mobile = anki_reviewer.desktop, anki_reviewer.mobile

# A deck that allows one check: a wrong order shows the back at once.
ONCE = deck("Orders::Once", "graph-once", "attempts: 1\n")
SUM = ["a = 1", "b = 2", "c = a + b", "d = c * 2"]

# Each line of the list as shown: its label and its code.
SHOWN = """() => Array.from(document.querySelectorAll(".qg-lines > li")).map((li) =>
  [li.querySelector(".qg-line-label").textContent, li.querySelector("pre").textContent.trim()])"""


@pytest.fixture(scope="module")
def rendered(tmp_path_factory: pytest.TempPathFactory, pool: Pool) -> dict[str, Any]:
    """Card id -> (question HTML, answer HTML) as Anki renders them, plus the collection's media folder."""
    files = {"orders.yaml": DECK, "once.yaml": ONCE, "phone.yaml": PHONE}
    root = write_project(tmp_path_factory.mktemp("anki-orders"), files)
    return anki_reviewer.render_sides(build(root, pool=pool), root / "anki", "deck:Order*")


def labels(page: Any) -> dict[str, str]:
    """Code -> the label the card shows it with."""
    return {code: label for label, code in page.evaluate(SHOWN)}


def typing_order(codes: list[tuple[str, int]] | list[str], typed: list[str]) -> Callable[[Any], None]:
    """Type these lines in order by the labels the front shows, each level as '>'; `typed` gets the text."""

    def act(page: Any) -> None:
        page.wait_for_function("document.querySelector('.qg-card[data-qg-mounted]')")
        shown = labels(page)
        pairs = [(c, 0) if isinstance(c, str) else c for c in codes]
        text = " ".join(">" * level + shown[code] for code, level in pairs)
        typed.append(text)
        page.locator(".qg-input").fill(text)
        page.locator(".qg-input").press("Enter")

    return act


@pytest.mark.parametrize("show", [desktop, mobile], ids=["desktop", "mobile"])
def test_the_back_shows_and_judges_the_shuffle_the_front_showed(
    page: Any, rendered: dict[str, Any], show: Any
) -> None:
    sides, fronts, typed = rendered["sides"]["graph-sum"], [], []

    def act(page: Any) -> None:
        typing_order(["b = 2", "a = 1", "c = a + b", "d = c * 2"], typed)(page)
        fronts.append(page.evaluate(SHOWN))

    for _ in range(2):  # two reviews
        result = show(page, sides, act)
        assert result.get_attribute("data-ok") == "true", result.text_content()
        assert page.evaluate(SHOWN) == fronts[-1]  # the back's lines, as the front showed them
        assert [label for label, _ in fronts[-1]] == list("ABCD")
    assert fronts[0] != fronts[1]  # a new review, a new shuffle (never the last one again)


@pytest.mark.parametrize("show", [desktop, mobile], ids=["desktop", "mobile"])
def test_indentation_is_typed_with_one_gt_per_level(page: Any, rendered: dict[str, Any], show: Any) -> None:
    sides, typed = rendered["sides"]["sum-positives"], []
    result = show(page, sides, typing_order(LOOP, typed))
    assert result.get_attribute("data-ok") == "true", result.text_content()
    assert re.fullmatch(r"[A-F] [A-F] >[A-F] >>[A-F] [A-F]", typed[-1])
    # A wrong level on the last attempt: the back says which line and marks it.
    flat = [(code, 0) for code, _ in LOOP]
    wrong = [*LOOP[:3], ("total += x", 1), LOOP[4]]

    def three_tries(page: Any) -> None:
        for codes in (flat, flat, wrong):
            typing_order(codes, typed)(page)

    result = show(page, sides, three_tries)
    shown = labels(page)
    assert result.text_content() == (
        f"You typed {typed[-1]} \u2014 not right: line {shown['total += x']} is indented wrong: the order is"
        " right, change its level."
    )
    marked = page.locator(".qg-misplaced")
    assert marked.locator("pre").all_inner_texts() == ["total += x\n"]
    assert marked.locator(".qg-mark").inner_text() == "indented wrong"


def test_the_hint_says_how_to_type_indentation(page: Any, rendered: dict[str, Any]) -> None:
    page.pages["front.html"] = "<!doctype html><body class='card'>" + rendered["sides"]["sum-positives"][0]
    page.goto("http://anki.test/front.html")
    page.wait_for_function("document.querySelector('.qg-card[data-qg-mounted]')")
    hint = page.locator(".qg-hint")
    assert hint.inner_text() == (
        "Indentation counts: before a label, type one > for each level it is indented, e.g. A >B >>C D."
    )
    assert page.locator(".qg-input").get_attribute("aria-describedby") == hint.get_attribute("id")
    assert "one > per level" in (page.locator(".qg-input").get_attribute("placeholder") or "")


@pytest.mark.parametrize("show", [desktop, mobile], ids=["desktop", "mobile"])
def test_a_wrong_order_gets_the_builds_message_and_more_attempts(
    page: Any, rendered: dict[str, Any], show: Any
) -> None:
    sides, typed, tries = rendered["sides"]["graph-sum"], [], []
    # The build's message has Markdown code spans; the card writes them as code (issue 22).
    message = "With c = a + b before b = 2: c = a + b raises NameError: name 'b' is not defined"

    def act(page: Any) -> None:
        page.evaluate("() => { window.sent = []; window.pycmd = (cmd) => window.sent.push(cmd); }")
        typing_order(["a = 1", "c = a + b", "b = 2", "d = c * 2"], typed)(page)
        tries.append(page.locator(".qg-try").inner_text())
        assert page.evaluate("window.sent") == []  # not shown the back: attempts are left
        typing_order(["d = c * 2", "a = 1", "b = 2", "c = a + b"], typed)(page)  # no message: marked
        tries.append(page.locator(".qg-try").inner_text())
        tries.append(page.locator(".qg-misplaced pre").inner_text())
        page.locator(".qg-input").press("Backspace")
        assert page.locator(".qg-misplaced").count() == 0  # retyping clears the marks
        typing_order(["a = 1", "c = a + b", "b = 2", "d = c * 2"], typed)(page)
        assert page.evaluate("window.sent") == ["ans"]  # the last attempt shows the back

    result = show(page, sides, act)
    shown = labels(page)
    assert tries == [
        f"Not right: {message}. 2 attempts left.",
        f"Not right: line {shown['d = c * 2']} is out of place: move it and your block is an accepted order."
        " 1 attempt left.",
        "d = c * 2\n",
    ]
    assert result.get_attribute("data-ok") == "false"
    assert result.text_content() == f"You typed {typed[-1]} \u2014 not right: {message}."
    assert result.locator("code").all_inner_texts() == ["c = a + b", "b = 2", "c = a + b"]
    # The back shows the answer as code, the lines that may move marked.
    notes = page.locator(".qg-accepted li.moves .moves-note").all_inner_texts()
    assert notes == ["\u2195 may go anywhere before line 3"] * 2


def test_a_deck_that_allows_one_check_shows_the_back_at_once(page: Any, rendered: dict[str, Any]) -> None:
    typed: list[str] = []

    def act(page: Any) -> None:
        page.evaluate("() => { window.sent = []; window.pycmd = (cmd) => window.sent.push(cmd); }")
        typing_order(["b = a + 1", "a = 1"], typed)(page)
        assert page.evaluate("window.sent") == ["ans"]
        assert page.locator(".qg-try").count() == 0

    result = desktop(page, rendered["sides"]["graph-once"], act)
    assert result.get_attribute("data-ok") == "false"


# Each line of the list: how far it runs past its row, and how much of its code it hides.
ROWS = """() => Array.from(document.querySelectorAll(".qg-lines > li")).map((li) => {
  const pre = li.querySelector("pre"), row = li.getBoundingClientRect(), code = pre.getBoundingClientRect();
  return {text: pre.textContent.trim(), hidden: pre.scrollWidth - pre.clientWidth, right: row.right,
          out: Math.max(li.scrollWidth - li.clientWidth, code.right - row.right),
          lines: pre.querySelectorAll(".cl").length};
})"""


@pytest.mark.parametrize("width", [375, 1280])
def test_a_puzzle_reads_whole_on_a_phone(page: Any, rendered: dict[str, Any], width: int) -> None:
    """Issue 31: at 375 px each line wraps inside its row; a distractor that begins as a line does is
    shown whole beside it."""
    page.set_viewport_size({"width": width, "height": 800})
    page.pages["front.html"] = "<!doctype html><body class='card'>" + rendered["sides"]["eval-preds"][0]
    page.goto("http://anki.test/front.html")
    page.wait_for_function("document.querySelector('.qg-card[data-qg-mounted]')")
    rows = page.evaluate(ROWS)
    assert len(rows) == len(PHONE_LINES) + 1
    for row in rows:
        assert row["out"] <= 0 and row["hidden"] <= 0 and row["right"] <= width, row
    assert [row["lines"] for row in rows] == [1] * len(rows)  # each source line wraps under itself
