"""Every page state through axe-core at 375 px in both colour schemes, nothing wider than the screen,
every control reachable by Tab, and a deck of hostile card text that must run nothing."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from quizgen import pipeline
from quizgen.render.quiz import assets
from quizgen.render.view import card_key
from tests.support.quiz import (
    HOSTILE_PAGE,
    SAMPLE_PAGE,
    axe_source,
    axe_violations,
    close_tab,
    open_tab,
    overflowing,
    site_url,
)


@pytest.fixture(scope="module")
def axe() -> str:
    return axe_source()


def answer_current(page: Any, wrong: bool) -> str:
    """Answer whichever card is showing (wrongly or not quite), so its result is on the page."""
    card = page.locator("article.card:visible")
    cid = card.get_attribute("data-card")
    kind = card.get_attribute("class").split("kind-")[1].split()[0]
    if kind == "value":
        page.fill(f"#answer-{cid}", "definitely wrong" if wrong else "")
        page.press(f"#answer-{cid}", "Enter")
    elif kind == "myth":
        page.click(f"#card-{cid} [data-verdict='true']")
    elif kind == "order":
        pool = page.locator(f"#card-{cid} .pool .toggle")
        while pool.count():
            pool.first.click()
        page.click(f"#card-{cid} .check-order")
    else:
        page.click(f"#card-{cid} .reveal")
    page.wait_for_selector(f"#card-{cid} .result", state="visible")
    return str(cid)


def walk(page: Any, deck_url: str, index_url: str, check: Callable[[str], None]) -> int:
    """Visit every state a learner sees (index, each card asked and answered, score, review) and check it."""
    page.goto(index_url)
    check("index")
    page.goto(deck_url)
    states = 1
    while page.locator("article.card:visible").count():
        cid = page.locator("article.card:visible").get_attribute("data-card")
        check(f"{cid} asked")
        answer_current(page, wrong=True)
        check(f"{cid} answered")
        if page.is_visible("#self-grade"):
            page.click("#self-grade [data-knew='false']")
        page.click("#next")
        states += 2
    check("quiz score")
    page.click(".modes [data-mode='review']")
    answer_current(page, wrong=False)
    check("review rating")
    page.keyboard.press("1")
    check("review next card with its schedule")
    return states + 3


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("deck", [SAMPLE_PAGE, HOSTILE_PAGE])
def test_axe_and_375px_on_every_state(
    browser: Any, built: pipeline.Report, axe: str, scheme: str, deck: str
) -> None:
    tab = open_tab(browser, "", width=375, dark=scheme == "dark")
    problems: list[str] = []

    def check(state: str) -> None:
        problems.extend(f"{state}: {v}" for v in axe_violations(tab.page, axe))
        problems.extend(f"{state}: {o}" for o in overflowing(tab.page))

    try:
        states = walk(tab.page, site_url(built, deck), site_url(built), check)
        assert states >= 10
        assert problems == []
        assert tab.page.evaluate("document.documentElement.classList.contains('dark')") == (scheme == "dark")
        assert tab.errors == []
        assert tab.outside() == []
    finally:
        close_tab(tab)


def test_a_hostile_deck_runs_nothing(browser: Any, built: pipeline.Report) -> None:
    tab = open_tab(browser, site_url(built))
    page = tab.page
    try:
        assert "Hostile <script>window.__pwned = 'deck'</script>" in page.inner_text(".deck-list")
        page.hover(".deck-list")
        page.goto(site_url(built, HOSTILE_PAGE))
        assert page.title().startswith("Hostile <script>")
        for _ in range(4):
            answer_current(page, wrong=False)
            page.locator("article.card:visible").hover()
            if page.is_visible("#self-grade"):
                page.click("#self-grade [data-knew='true']")
            page.click("#next")
        text = page.inner_text("body")
        # Shown as text, every piece of it.
        for piece in [
            "<script>window.__pwned = 'ask'</script> What is s?",
            "[click](javascript:window.__pwned='ask-link')",
            "<svg onload=\"window.__pwned = 'claim'\"></svg>",
            "<img src=x onerror=\"window.__pwned = 'output'\">",
        ]:
            assert piece in text or piece in page.evaluate("document.body.textContent"), piece
        counts = page.evaluate(
            """() => ({
              scripts: document.scripts.length,
              markup: document.querySelectorAll('main svg, main iframe, main style, main b').length,
              images: [...document.querySelectorAll('main img')].map(i => [i.src, i.naturalWidth]),
              jsLinks: [...document.querySelectorAll('a')].filter(a => a.protocol === 'javascript:').length,
              handlers: [...document.querySelectorAll('main *')].filter(
                el => [...el.attributes].some(a => a.name.startsWith('on'))).length,
              pwned: typeof window.__pwned,
            })"""
        )
        assert counts == {
            # the page's data, the cards' HTML held as JSON strings, and ours
            "scripts": 2 + len([name for name in assets() if name.endswith(".js")]),
            "markup": 0,
            "images": [],  # a card's remote image is a link, never loaded
            "jsLinks": 0,
            "handlers": 0,
            "pwned": "undefined",
        }
        assert tab.dialogs == []
        assert tab.errors == []
        assert tab.outside() == []
        assert tab.refused == []
    finally:
        close_tab(tab)


def tab_stops(page: Any) -> list[str]:
    """Press Tab until focus comes round again; the path of every element it stopped on."""
    seen: list[str] = []
    page.evaluate("document.activeElement && document.activeElement.blur()")
    page.mouse.click(1, 1)  # Tab starts again from the top of the page
    for _ in range(200):
        page.keyboard.press("Tab")
        here = page.evaluate(
            "() => { const a = document.activeElement; return a === document.body ? null :"
            " a.id || (a.tagName + '.' + a.className + ' ' + a.textContent.trim().replace(/\\s+/g, ' ')); }"
        )
        if here is None or (seen and here == seen[0]):
            break
        seen.append(here)
    return seen


def focusable(page: Any) -> int:
    count: int = page.evaluate(
        """() => [...document.querySelectorAll('a[href], button, input, [tabindex="0"]')]
              .filter(el => !el.disabled && el.getClientRects().length && !el.closest('[hidden]')
                      && !el.closest('details:not([open]) > :not(summary)')).length"""
    )
    return count


def test_every_control_is_reachable_by_tab(browser: Any, built: pipeline.Report) -> None:
    tab = open_tab(browser, site_url(built, SAMPLE_PAGE))
    page = tab.page
    try:
        stops = tab_stops(page)
        assert len(stops) == focusable(page)
        assert stops[:4] == ["A.skip-link Skip to content", "A. All decks", "BUTTON. Quiz", "BUTTON. Review"]
        answer = f"answer-{card_key('value-two-steps')}"
        assert answer in stops and "export-progress" in stops and "import-progress" in stops
        page.click(f"#card-{card_key('value-two-steps')} button[type=submit]")
        assert "next" in tab_stops(page)
        page.click("#next")
        for _ in range(4):
            answer_current(page, wrong=True)
            page.click("#next")
        stops = tab_stops(page)  # the order puzzle: every line and every Add button
        assert len(stops) == focusable(page)
        assert sum("LI.line" in s for s in stops) == 5 and sum("BUTTON.toggle" in s for s in stops) == 5
    finally:
        close_tab(tab)
