"""The cards' own JavaScript in Chromium, on the HTML the real Anki backend renders.

Two ways of showing the back are emulated: Anki desktop swaps the card HTML inside one page (the typed
answer survives in a global), AnkiDroid and AnkiMobile load a new page (it survives in sessionStorage).
"""

from __future__ import annotations

import colorsys
import html
import os
import re
from pathlib import Path
from typing import Any

import pytest

from quizgen import pipeline
from quizgen.execution.pool import Pool
from tests.support import anki_reviewer
from tests.support.anki import build, collection, import_all
from tests.support.anki_reviewer import ORIGIN, REVIEWER, desktop, mobile, render_sides
from tests.support.projects import write_project
from tests.support.quiz import HOSTILE_DECK  # the quiz's hostile deck: the same attacks on Anki cards

context, page = anki_reviewer.context, anki_reviewer.page  # the emulated reviewer's fixtures

# What only hostile card text could have put in a card: handlers, frames, images, styles, script links.
PLANTED = """() => Array.from(document.querySelectorAll("#qa *")).filter((e) =>
  Array.from(e.attributes).some((a) => a.name.startsWith("on") || /^\\s*javascript:/i.test(a.value))
  || ["iframe", "img", "svg", "object", "embed"].includes(e.tagName.toLowerCase())
  || (e.tagName === "STYLE" && !e.textContent.startsWith("/* quizgen note types"))
).map((e) => e.outerHTML.slice(0, 80))"""


@pytest.fixture(scope="module")
def rendered(anki_build: pipeline.Report, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Card id -> (question HTML, answer HTML) as Anki renders them, plus the collection's media folder."""
    return render_sides(anki_build, tmp_path_factory.mktemp("anki-js"), "deck:Sample")


def typing(text: str) -> Any:
    def act(page: Any) -> None:
        page.wait_for_function("document.querySelector('.qg-card[data-qg-mounted]')")
        page.locator(".qg-input").fill(text)
        page.locator(".qg-input").press("Enter")

    return act


def clicking(choice: str) -> Any:
    def act(page: Any) -> None:
        page.wait_for_function("document.querySelector('.qg-card[data-qg-mounted]')")
        page.locator(f".qg-choice[data-choice='{choice}']").click()

    return act


# card id -> [(typed, judged right?)]; each is typed into a fresh review of the card, in one tab
TYPED = {
    "value-two-steps": [
        ("8", True),
        ("8.005", True),  # within rtol=1e-3
        ("tensor(8.)", True),
        ("8.1", False),
        ("7", False),
    ],
    "value-list": [("2 4.02 6", True), ("2 4 7", False)],  # the card's own rtol=0.01
    "value-raises": [("RuntimeError", True), ("ValueError", False)],
    "value-shape": [("(2, 3)", True), ("[3, 2]", False)],
}

ZERO, LOSS = "opt.zero_grad()", "loss = ((model(x) - y) ** 2).mean()"
BACKWARD, STEP = "loss.backward()", "opt.step()"
# An order puzzle's lines are labelled anew on every review: its answers are typed by the labels the
# front shows. [(the lines, how the labels are written, judged right?)]
ORDERS = [
    ([ZERO, LOSS, BACKWARD, STEP], " ".join, True),
    ([LOSS, ZERO, BACKWARD, STEP], lambda labels: " ".join(labels).lower(), True),  # another order
    ([LOSS, BACKWARD, STEP, ZERO], ",".join, True),  # and a third
    ([ZERO, BACKWARD, LOSS, STEP], " ".join, False),
    ([ZERO, LOSS, BACKWARD, "x = x * 2"], " ".join, False),  # the distractor
]

# Each line of an order card as shown: its label and its code.
SHOWN_LINES = """() => Array.from(document.querySelectorAll(".qg-lines > li")).map((li) =>
  [li.querySelector(".qg-line-label").textContent, li.querySelector("pre").textContent.trim()])"""


def typing_lines(lines: list[str], spell: Any, typed: list[str]) -> Any:
    """Type these lines by the labels the front shows them with; `typed` gets what was typed."""

    def act(page: Any) -> None:
        page.wait_for_function("document.querySelector('.qg-card[data-qg-mounted]')")
        label = {code: label for label, code in page.evaluate(SHOWN_LINES)}
        typed.append(spell([label[code] for code in lines]))
        typing(typed[-1])(page)

    return act


@pytest.mark.parametrize("show", [desktop, mobile], ids=["desktop", "mobile"])
@pytest.mark.parametrize("card", sorted(TYPED))
def test_a_typed_answer_is_judged_on_the_back(
    page: Any, rendered: dict[str, Any], show: Any, card: str
) -> None:
    for typed, ok in TYPED[card]:
        result = show(page, rendered["sides"][card], typing(typed))
        assert result.get_attribute("data-ok") == str(ok).lower(), (typed, result.text_content())
        assert typed in result.text_content()
        assert page.locator(".qg-typebox").is_hidden()


@pytest.mark.parametrize("show", [desktop, mobile], ids=["desktop", "mobile"])
def test_a_typed_order_is_judged_on_the_back(page: Any, rendered: dict[str, Any], show: Any) -> None:
    for lines, spell, ok in ORDERS:
        typed: list[str] = []
        result = show(page, rendered["sides"]["order-train-step"], typing_lines(lines, spell, typed))
        assert result.get_attribute("data-ok") == str(ok).lower(), (typed, result.text_content())
        assert typed[0] in result.text_content()
        assert page.locator(".qg-typebox").is_hidden()


@pytest.mark.parametrize("show", [desktop, mobile], ids=["desktop", "mobile"])
@pytest.mark.parametrize(("choice", "ok"), [("false", True), ("true", False)])
def test_myth_buttons_are_judged_on_the_back(
    page: Any, rendered: dict[str, Any], show: Any, choice: str, ok: bool
) -> None:
    result = show(page, rendered["sides"]["myth-zero-grad-zeros"], clicking(choice))
    assert result.get_attribute("data-ok") == str(ok).lower()
    assert result.text_content().startswith(f"You said {choice.title()}")
    assert page.locator(f".qg-choice[data-choice='{choice}']").get_attribute("aria-pressed") == "true"
    assert page.locator(".qg-choice").first.is_disabled()


def test_enter_asks_anki_desktop_for_the_back(page: Any, rendered: dict[str, Any]) -> None:
    page.pages["reviewer.html"] = REVIEWER % ""
    page.goto(f"{ORIGIN}/reviewer.html")
    page.evaluate("() => { window.sent = []; window.pycmd = (cmd) => window.sent.push(cmd); }")
    page.evaluate("html => showSide(html)", rendered["sides"]["value-two-steps"][0])
    page.wait_for_function("document.querySelector('.qg-card[data-qg-mounted]')")
    assert page.evaluate("document.activeElement.className") == "qg-input"
    page.keyboard.type("8")
    page.keyboard.press("Enter")
    assert page.evaluate("window.sent") == ["ans"]


def test_nothing_typed_and_a_new_review_starts_blank(page: Any, rendered: dict[str, Any]) -> None:
    sides = rendered["sides"]["value-two-steps"]
    assert desktop(page, sides, typing("8")).get_attribute("data-ok") == "true"
    # the same card again, later: nothing typed this time, so last time's answer must not come back
    page.evaluate("html => showSide(html)", sides[0])
    page.evaluate("html => showSide(html)", sides[1])
    result = page.locator(".qg-result")
    assert result.get_attribute("data-ok") == "none"
    assert result.text_content() == "You did not type an answer."


def _luminance(css_color: str) -> float:
    r, g, b = (int(x) / 255 for x in re.findall(r"\d+", css_color)[:3])
    return colorsys.rgb_to_hls(r, g, b)[1]


@pytest.mark.parametrize("night", [False, True], ids=["light", "night"])
def test_code_is_readable_in_light_and_night_mode(page: Any, rendered: dict[str, Any], night: bool) -> None:
    desktop(page, rendered["sides"]["value-two-steps"], typing("8"), night=night)
    code = page.locator(".qg-code pre.highlight").first
    background = _luminance(code.evaluate("e => getComputedStyle(e).backgroundColor"))
    name = _luminance(code.locator(".n").first.evaluate("e => getComputedStyle(e).color"))
    text = _luminance(page.locator(".qg-prompt").evaluate("e => getComputedStyle(e).color"))
    page_bg = _luminance(page.locator("body").evaluate("e => getComputedStyle(e).backgroundColor"))
    if night:
        assert background < 0.2 and name > 0.6 and text > 0.6 and page_bg < 0.2
    else:
        assert background > 0.8 and name < 0.4 and text < 0.4 and page_bg > 0.8


def test_the_answer_shown_on_the_back_is_accepted_when_typed(page: Any, rendered: dict[str, Any]) -> None:
    """The computed answer as the back displays it, and an order's answer as code, pass the card's own
    judge (the order typed by the labels its front showed)."""
    page.pages["reviewer.html"] = REVIEWER % ""
    page.goto(f"{ORIGIN}/reviewer.html")
    tried = 0
    for card_id, (question, answer) in sorted(rendered["sides"].items()):
        if 'class="qg-input"' not in question:
            continue
        code = re.findall(r'<ol class="order-answer[^"]*">(.*?)</ol>', answer, re.S)
        pres = re.findall(r"<pre[^>]*>(.*?)</pre>", "".join(code), re.S)
        lines = [re.sub(r"<[^>]+>", "", pre) for pre in pres]
        shown = re.findall(r'<div class="qg-answer[^"]*">(.*?)</div>', answer)
        for typed in shown if not lines else [None]:
            page.evaluate("html => showSide(html)", question)
            if typed is None:
                label = {c: lab for lab, c in page.evaluate(SHOWN_LINES)}
                typed = " ".join(label[html.unescape(line).strip()] for line in lines)
            page.locator(".qg-input").fill(html.unescape(typed))
            page.evaluate("html => showSide(html)", answer)
            assert page.locator(".qg-result").get_attribute("data-ok") == "true", (card_id, typed)
            tried += 1
    assert tried >= 7


def test_text_and_output_from_cards_never_run_as_script(
    page: Any, tmp_path: Path, pool: Pool, rendered: dict[str, Any]
) -> None:
    report = build(write_project(tmp_path, {"hostile.yaml": HOSTILE_DECK}), pool=pool)
    page.pages["reviewer.html"] = REVIEWER % ""
    page.goto(f"{ORIGIN}/reviewer.html")
    with collection(tmp_path / "anki") as col:
        import_all(col, report)
        assert os.listdir(col.media.dir()) == os.listdir(rendered["media"]), "the media the page serves"
        for cid in col.find_cards("deck:Hostile*"):
            card = col.get_card(cid)
            page.evaluate("html => showSide(html)", card.question())
            if page.locator(".qg-input").count():
                page.locator(".qg-input").fill("</script><img src=x onerror=\"window.__pwned = 'typed'\">")
            if page.locator(".qg-choice").count():
                page.locator(".qg-choice").first.click()
            page.evaluate("html => showSide(html)", card.answer())
            planted = page.evaluate(PLANTED)
            assert planted == [], (card.note()["Id"], planted)
            assert page.evaluate("window.__pwned") is None, card.note()["Id"]
            assert page.locator("#qa script:not([src])").count() == 0
