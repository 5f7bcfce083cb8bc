"""Statistics in the quiz (issue 22 item 13), in Chromium from file:// with a seeded review history: reviews
per day, retention and the due forecast per deck and overall, as SVG charts whose numbers match the
history, readable in light and dark, with axe-core finding nothing; a review redraws them."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from quizgen import pipeline
from quizgen.render.view import card_key
from tests.support.quiz import (
    SAMPLE_IDS,
    SAMPLE_PAGE,
    axe_source,
    axe_violations,
    close_tab,
    open_tab,
    site_url,
)

T0 = datetime(2026, 3, 2, 9, 30, tzinfo=UTC)
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
DAY_MS = 24 * 3600 * 1000


def ms(when: datetime) -> int:
    return (when - EPOCH) // timedelta(milliseconds=1)


def history() -> list[list[Any]]:
    """[time, card id, rating, state before] for the 40 days before T0: a few reviews a day, mixed."""
    log: list[list[Any]] = []
    for ago in range(40):
        day = T0.replace(hour=8) - timedelta(days=ago)
        for k in range(ago % 4):
            cid = SAMPLE_IDS[(ago + k) % len(SAMPLE_IDS)]
            rating = 1 if (ago + k) % 5 == 0 else 3
            state = 2 if k else (0 if ago > 35 else 2)
            log.append([ms(day + timedelta(minutes=k)), cid, rating, state])
    log.append([ms(T0 - timedelta(hours=1)), "hostile-value", 3, 2])  # another deck's: counted overall only
    return sorted(log)


def schedule(due: datetime) -> dict[str, Any]:
    return {
        "state": 2,
        "step": None,
        "stability": 5.0,
        "difficulty": 5.0,
        "due": ms(due),
        "last_review": ms(due - timedelta(days=5)),
        "reps": 3,
        "lapses": 0,
    }


DUE = {  # card id -> days from T0 (negative: overdue)
    "value-two-steps": -2,
    "value-grad-none": 0,
    "value-shape": 1,
    "value-raises": 1,
    "myth-zero-grad-zeros": 3,
    "order-train-step": 10,
    "basic-why-accumulate": 45,
}


def seeded() -> dict[str, Any]:
    cards = {cid: schedule(T0 + timedelta(days=d)) for cid, d in DUE.items()}
    return {"format": "quizgen-progress", "version": 1, "cards": cards, "quizzes": {}, "log": history()}


def per_day(ids: set[str]) -> list[int]:
    counts = [0] * 30
    for t, cid, _, _ in history():
        ago = (T0.date() - (EPOCH + timedelta(milliseconds=t)).date()).days
        if cid in ids and 0 <= ago < 30:
            counts[29 - ago] += 1
    return counts


def retention(ids: set[str]) -> tuple[int, int]:
    since = ms(datetime.combine(T0.date() - timedelta(days=29), datetime.min.time(), UTC))
    mine = [r for r in history() if r[1] in ids and r[3] == 2 and r[0] >= since]
    return sum(r[2] > 1 for r in mine), len(mine)


def table(page: Any, chart: str) -> list[str]:
    cells: list[str] = page.eval_on_selector_all(f"#{chart} tbody td", "els => els.map(e => e.textContent)")
    return cells


def opened(browser: Any, url: str, width: int = 1280, dark: bool = False) -> Any:
    tab = open_tab(browser, "", width=width, dark=dark, timezone_id="UTC")
    tab.page.clock.set_fixed_time(T0)
    tab.page.goto(url)
    tab.page.evaluate("p => localStorage.setItem('quizgen.progress', JSON.stringify(p))", seeded())
    tab.page.reload()
    return tab


@pytest.fixture
def tabs() -> Any:
    made: list[Any] = []
    yield made
    for t in made:
        assert t.errors == []
        assert t.outside() == []
        close_tab(t)


def test_a_decks_charts_show_its_history_and_forecast(
    browser: Any, built: pipeline.Report, tabs: list[Any]
) -> None:
    tab = opened(browser, site_url(built, SAMPLE_PAGE))
    tabs.append(tab)
    page = tab.page
    sample = set(SAMPLE_IDS)
    counts = per_day(sample)
    assert table(page, "chart-reviews") == [str(n) for n in counts]
    assert page.inner_text("#chart-reviews .chart-text") == (
        f"{sum(counts)} reviews in the last 30 days, {counts[-1]} today."
    )
    # The bars are the numbers: 30 of them, the tallest the most reviews, an empty day none.
    heights = page.eval_on_selector_all(
        "#chart-reviews rect", "els => els.map(e => +e.getAttribute('height'))"
    )
    assert len(heights) == 30
    assert heights.index(max(heights)) == counts.index(max(counts))
    assert all((h == 0) == (n == 0) for h, n in zip(heights, counts, strict=True))
    passed, total = retention(sample)
    assert page.inner_text("#chart-retention .chart-text") == (
        f"Remembered {round(100 * passed / total)}% of learned cards in the last 30 days "
        f"({passed} of {total} reviews)."
    )
    assert len(table(page, "chart-retention")) == 12
    forecast = table(page, "chart-forecast")
    assert forecast[:4] == ["2", "2", "0", "1"]  # today holds the overdue card
    assert sum(int(n) for n in forecast) == 6  # the one due in 45 days is beyond the chart
    assert page.inner_text("#chart-forecast .chart-text") == "2 due today (1 overdue), 5 in the next 7 days."
    # Each chart is an image named by its heading and sentence.
    names = page.eval_on_selector_all(
        ".chart-svg", "els => els.map(e => [e.getAttribute('role'), e.getAttribute('aria-labelledby')])"
    )
    assert names == [["img", f"chart-{c}-title chart-{c}-text"] for c in ("reviews", "retention", "forecast")]

    # A review in Review mode is counted at once.
    page.click(".modes [data-mode='review']")
    page.wait_for_selector(f"#card-{card_key('value-two-steps')}", state="visible")
    page.fill(f"#answer-{card_key('value-two-steps')}", "8")
    page.press(f"#answer-{card_key('value-two-steps')}", "Enter")
    page.keyboard.press("3")
    assert table(page, "chart-reviews")[-1] == str(counts[-1] + 1)


def test_the_index_shows_every_decks_history(browser: Any, built: pipeline.Report, tabs: list[Any]) -> None:
    tab = opened(browser, site_url(built))
    tabs.append(tab)
    page = tab.page
    counts = per_day(set(SAMPLE_IDS) | {"hostile-value"})
    assert counts[-1] == per_day(set(SAMPLE_IDS))[-1] + 1
    assert table(page, "chart-reviews") == [str(n) for n in counts]
    assert "All decks'" in page.inner_text(".stats-panel .hint")


def luminance(rgb: str) -> float:
    r, g, b = (int(x) / 255 for x in re.findall(r"\d+", rgb)[:3])

    def channel(c: float) -> float:
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4

    return 0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b)


def contrast(a: str, b: str) -> float:
    la, lb = sorted((luminance(a), luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


@pytest.mark.parametrize("dark", [False, True], ids=["light", "dark"])
@pytest.mark.parametrize("width", [1280, 375])
def test_the_charts_are_readable_and_accessible(
    browser: Any, built: pipeline.Report, tabs: list[Any], dark: bool, width: int
) -> None:
    tab = opened(browser, site_url(built, SAMPLE_PAGE), width=width, dark=dark)
    tabs.append(tab)
    page = tab.page
    colours = page.evaluate(
        """() => ({
          bg: getComputedStyle(document.body).backgroundColor,
          bar: getComputedStyle(document.querySelector('#chart-reviews .chart-bar')).fill,
          label: getComputedStyle(document.querySelector('#chart-reviews .chart-label')).fill,
          svg: document.querySelector('#chart-reviews svg').getBoundingClientRect().width,
          panel: document.querySelector('#stats').clientWidth,
        })"""
    )
    assert contrast(colours["bar"], colours["bg"]) >= 3, colours  # WCAG's non-text contrast
    assert contrast(colours["label"], colours["bg"]) >= 4.5, colours
    assert colours["svg"] <= colours["panel"] + 0.5  # fits the screen: labels stay their size
    for summary in page.locator(".chart-table summary").all():
        summary.click()
    assert axe_violations(page, axe_source()) == []
    overflow = page.evaluate("document.documentElement.scrollWidth > document.documentElement.clientWidth")
    assert not overflow
