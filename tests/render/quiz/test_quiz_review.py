"""Review mode and progress in Chromium from file://: FSRS schedules (checked against the fsrs package),
due dates shown, progress kept across reloads, export and import, corrupt storage reset with a message."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from quizgen import pipeline
from quizgen.render.view import card_key
from tests.support.quiz import SAMPLE_IDS, SAMPLE_PAGE, Tab, close_tab, open_tab, site_url
from tests.support.tools import require

fsrs = require("fsrs")

T0 = datetime(2026, 3, 2, 9, 30, tzinfo=UTC)
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
KEY = "quizgen.progress"


def ms(when: datetime) -> int:
    return (when - EPOCH) // timedelta(milliseconds=1)


@pytest.fixture
def tab(browser: Any) -> Iterator[Tab]:
    t = open_tab(browser, "")
    t.page.clock.set_fixed_time(T0)
    yield t
    assert t.errors == []
    assert t.outside() == []
    close_tab(t)


def stored(page: Any) -> dict[str, Any]:
    text = page.evaluate(f"localStorage.getItem('{KEY}')")
    data: dict[str, Any] = json.loads(text)
    return data


def reference(reviews: list[tuple[int, datetime]]) -> Any:
    """The fsrs package's card after these (rating, time) reviews of a new card, fuzzing off."""
    scheduler = fsrs.Scheduler(enable_fuzzing=False)
    card = fsrs.Card(card_id=1, due=reviews[0][1])
    for rating, when in reviews:
        card, _ = scheduler.review_card(card, fsrs.Rating(rating), when)
    return card


def assert_same(js: dict[str, Any], py: Any) -> None:
    assert js["state"] == int(py.state)
    assert js["step"] == py.step
    assert js["due"] == ms(py.due)
    assert js["last_review"] == ms(py.last_review)
    assert js["stability"] == pytest.approx(py.stability, rel=1e-12)
    assert js["difficulty"] == pytest.approx(py.difficulty, rel=1e-12)


def answer(page: Any, card: str, text: str) -> None:
    page.fill(f"#answer-{card_key(card)}", text)
    page.press(f"#answer-{card_key(card)}", "Enter")
    page.wait_for_selector("#rating", state="visible")


def progress_file(path: Path, cards: dict[str, Any]) -> Path:
    path.write_text(json.dumps({"format": "quizgen-progress", "version": 1, "cards": cards, "quizzes": {}}))
    return path


def review_entry(due: datetime) -> dict[str, Any]:
    last = ms(due - timedelta(days=5))
    return {
        "state": 2,
        "step": None,
        "stability": 5.0,
        "difficulty": 5.0,
        "due": ms(due),
        "last_review": last,
    }


def test_review_schedules_with_fsrs_shows_due_dates_and_survives_reloads(
    tab: Tab, built: pipeline.Report
) -> None:
    page = tab.page
    page.goto(site_url(built, SAMPLE_PAGE) + "#review")
    assert page.inner_text("#status").startswith("Review: 0 due, 7 new.")

    answer(page, "value-two-steps", "8")
    easy_days = reference([(4, T0)]).due - T0
    intervals = page.eval_on_selector_all("#rating .interval", "els => els.map(e => e.textContent)")
    assert intervals == ["1 min", "6 min", "10 min", f"{easy_days.days} d"]
    assert page.evaluate("document.activeElement.dataset.rating") == "3"  # right: Good is suggested
    page.keyboard.press("4")
    assert_same(stored(page)["cards"][card_key("value-two-steps")], reference([(4, T0)]))
    assert f"next due in {easy_days.days} days" in page.inner_text("#scheduled")

    # The next new card, answered wrong: Again has focus, Enter takes it.
    answer(page, "value-grad-none", "0")
    assert page.evaluate("document.activeElement.dataset.rating") == "1"
    page.keyboard.press("Enter")
    assert_same(stored(page)["cards"][card_key("value-grad-none")], reference([(1, T0)]))
    assert "next due in 1 minute" in page.inner_text("#scheduled")
    # A learning step a minute away is not called due: the new cards come first.
    assert not page.is_visible(f"#card-{card_key('value-grad-none')}")
    assert page.inner_text("#status") == "Review: 0 due, 5 new. This card is new."

    page.reload()
    assert page.inner_text("#status").startswith("Review: 0 due, 5 new.")
    assert sorted(stored(page)["cards"]) == sorted(
        card_key(i) for i in ["value-grad-none", "value-two-steps"]
    )

    later = T0 + timedelta(days=9)
    page.clock.set_fixed_time(later)
    page.reload()
    assert page.inner_text("#status").startswith("Review: 2 due, 5 new.")
    assert page.is_visible(f"#card-{card_key('value-grad-none')}")  # the one due first
    answer(page, "value-grad-none", "None")
    page.keyboard.press("3")
    assert page.is_visible(f"#card-{card_key('value-two-steps')}")
    answer(page, "value-two-steps", "8.0")
    page.keyboard.press("3")
    cards = stored(page)["cards"]
    assert_same(cards[card_key("value-grad-none")], reference([(1, T0), (3, later)]))
    assert_same(cards[card_key("value-two-steps")], reference([(4, T0), (3, later)]))
    assert cards[card_key("value-two-steps")]["reps"] == 2
    assert page.inner_text("#status").startswith("Review: 0 due, 5 new.")  # grad-none's next step waits

    page.goto(site_url(built))
    assert page.inner_text("[data-due-for='sample-gradients']") == "0 due, 5 new"


def test_space_reveals_and_digits_rate(tab: Tab, built: pipeline.Report, tmp_path: Path) -> None:
    page = tab.page
    page.goto(site_url(built, SAMPLE_PAGE) + "#review")
    later = {
        cid: review_entry(T0 + timedelta(days=30)) for cid in SAMPLE_IDS if cid != "basic-why-accumulate"
    }
    page.set_input_files("#import-progress", progress_file(tmp_path / "p.json", later))
    page.wait_for_selector(f"#card-{card_key('basic-why-accumulate')}", state="visible")
    page.focus(f"#title-{card_key('basic-why-accumulate')}")
    page.keyboard.press("Space")
    page.wait_for_selector(f"#card-{card_key('basic-why-accumulate')} .result", state="visible")
    focused = page.evaluate(
        "() => { const s = getComputedStyle(document.activeElement);"
        " return [document.activeElement.dataset.rating, s.outlineStyle, parseFloat(s.outlineWidth)]; }"
    )
    assert focused[0] == "3" and focused[1] != "none" and focused[2] >= 2  # visible focus on Good
    page.keyboard.press("2")
    assert_same(stored(page)["cards"][card_key("basic-why-accumulate")], reference([(2, T0)]))


def test_import_export_and_caught_up(tab: Tab, built: pipeline.Report, tmp_path: Path) -> None:
    page = tab.page
    page.goto(site_url(built, SAMPLE_PAGE) + "#review")
    cards = {cid: review_entry(T0 + timedelta(days=3)) for cid in SAMPLE_IDS}
    cards["a-removed-card"] = review_entry(T0 + timedelta(days=1))
    cards["a-broken-card"] = {"state": 9}
    page.set_input_files("#import-progress", progress_file(tmp_path / "progress.json", cards))
    notice = page.locator("#notices .notice").last
    notice.wait_for()
    assert notice.inner_text().startswith(
        "Imported progress for 8 cards (7 in this deck). 1 entry in the file could not be read."
    )
    page.wait_for_selector("#caught-up", state="visible")
    assert page.inner_text("#next-due").startswith(
        "The next card is due in 3 days, on "
    )  # not the removed one

    with page.expect_download() as download:
        page.click("#export-progress")
    exported = json.loads(Path(download.value.path()).read_text())
    assert (
        exported["format"] == "quizgen-progress" and exported["version"] == 2
    )  # version 1 (ids) read, written as 2 (keys)
    assert sorted(exported["cards"]) == sorted(card_key(i) for i in [*SAMPLE_IDS, "a-removed-card"])  # kept
    assert exported["cards"][card_key("value-shape")]["due"] == ms(T0 + timedelta(days=3))

    # A fresh browser takes the exported file and has the same schedule.
    other = open_tab(page.context.browser, site_url(built))
    try:
        other.page.clock.set_fixed_time(T0)
        other.page.reload()
        assert other.page.inner_text("[data-due-for='sample-gradients']") == "0 due, 7 new"
        other.page.set_input_files("#import-progress", download.value.path())
        other.page.locator("#notices .notice").wait_for()
        assert other.page.inner_text("[data-due-for='sample-gradients']") == "0 due, 0 new"
        assert stored(other.page)["cards"] == exported["cards"]
    finally:
        close_tab(other)

    (tmp_path / "bad.json").write_text("this is not json")
    page.set_input_files("#import-progress", tmp_path / "bad.json")
    expect(page.locator("#notices")).to_contain_text("could not be used because it is not valid JSON")
    assert sorted(stored(page)["cards"]) == sorted(card_key(i) for i in [*SAMPLE_IDS, "a-removed-card"])


@pytest.mark.parametrize(
    ("value", "says"),
    [
        ("{broken", "it is not valid JSON"),
        ('{"format": "someone-else", "cards": []}', "it is not quizgen progress"),
        ('{"format": "quizgen-progress", "version": 99, "cards": {}}', "schema version 99"),
        ('"just a string"', "it is not quizgen progress"),
    ],
)
def test_corrupt_or_foreign_progress_resets_with_a_message(
    tab: Tab, built: pipeline.Report, value: str, says: str
) -> None:
    page = tab.page
    page.goto(site_url(built, SAMPLE_PAGE))
    page.evaluate("([key, value]) => localStorage.setItem(key, value)", [KEY, value])
    page.reload()
    notice = page.inner_text("#notices")
    assert "Saved progress could not be read" in notice and says in notice
    assert page.evaluate("localStorage.getItem('quizgen.progress.unreadable')") == value
    assert page.inner_text("#status") == "Quiz: card 1 of 7, 0 right so far."
    page.click("[data-mode='review']")
    answer(page, "value-two-steps", "8")
    page.keyboard.press("3")
    assert list(stored(page)["cards"]) == [card_key("value-two-steps")]
    page.reload()
    assert page.inner_text("#notices") == ""


def test_unreadable_cards_are_reset_and_the_rest_kept(tab: Tab, built: pipeline.Report) -> None:
    page = tab.page
    page.goto(site_url(built, SAMPLE_PAGE))
    good = review_entry(T0 + timedelta(days=2))
    value = {
        "format": "quizgen-progress",
        "version": 1,
        "cards": {"value-shape": good, "value-raises": {"state": 2, "due": "soon"}},
        "quizzes": {},
    }
    page.evaluate("([key, value]) => localStorage.setItem(key, value)", [KEY, json.dumps(value)])
    # Only the hash changes: no new document, but the page switches to Review mode and reads the store.
    page.goto(site_url(built, SAMPLE_PAGE) + "#review")
    assert "Saved progress for 1 card could not be read and was reset." in page.inner_text("#notices")
    assert stored(page)["cards"] == {card_key("value-shape"): {**good, "reps": 0, "lapses": 0}}
    assert page.inner_text("#status").startswith("Review: 0 due, 6 new.")


def test_without_storage_the_quiz_still_works_and_says_so(tab: Tab, built: pipeline.Report) -> None:
    page = tab.page
    page.add_init_script(
        "Object.defineProperty(window, 'localStorage',"
        " {get() { throw new DOMException('no', 'SecurityError'); }})"
    )
    page.goto(site_url(built, SAMPLE_PAGE) + "#review")
    assert "does not let the quiz save progress" in page.inner_text("#notices")
    answer(page, "value-two-steps", "8")
    page.keyboard.press("4")
    assert "next due in" in page.inner_text("#scheduled")  # scheduled in memory for this visit
    assert page.inner_text("#status").startswith("Review: 0 due, 6 new.")


def test_a_card_rated_good_is_not_shown_as_due_before_its_step(tab: Tab, built: pipeline.Report) -> None:
    """Issue 22 item 9: "next due in 10 minutes" was followed at once by the same card "This card is due"."""
    page = tab.page
    others = {cid: review_entry(T0 + timedelta(days=30)) for cid in SAMPLE_IDS if cid != "value-two-steps"}
    page.goto(site_url(built, SAMPLE_PAGE))
    page.evaluate(
        "cards => localStorage.setItem('quizgen.progress', JSON.stringify("
        "{format: 'quizgen-progress', version: 1, cards: cards, quizzes: {}}))",
        others,
    )
    page.goto(site_url(built, SAMPLE_PAGE) + "#review")
    page.reload()
    assert page.inner_text("#status") == "Review: 0 due, 1 new. This card is new."
    answer(page, "value-two-steps", "8")
    page.keyboard.press("3")
    assert "next due in 10 minutes" in page.inner_text("#scheduled")
    # Nothing else is left, so the step is shown early, and the status says so rather than "due".
    status = page.inner_text("#status")
    assert "This card is due." not in status
    assert status == (
        "Review: 0 due, 0 new. This card is due in 10 minutes; it is shown early because nothing else is due."
    )
    page.clock.set_fixed_time(T0 + timedelta(minutes=10))
    page.reload()
    assert page.inner_text("#status") == "Review: 1 due, 0 new. This card is due."


def test_caught_up_the_page_shows_the_next_card_when_it_falls_due(
    browser: Any, built: pipeline.Report
) -> None:
    t = open_tab(browser, "")
    page = t.page
    try:
        page.clock.install(time=T0)
        page.goto(site_url(built, SAMPLE_PAGE))
        cards = {cid: review_entry(T0 + timedelta(days=30)) for cid in SAMPLE_IDS}
        cards["value-shape"] = review_entry(T0 + timedelta(hours=2))
        page.evaluate(
            "cards => localStorage.setItem('quizgen.progress', JSON.stringify("
            "{format: 'quizgen-progress', version: 1, cards: cards, quizzes: {}}))",
            cards,
        )
        page.goto(site_url(built, SAMPLE_PAGE) + "#review")
        page.reload()
        assert page.is_visible("#caught-up")
        assert page.inner_text("#next-due").startswith("The next card is due in 2 hours")
        page.clock.run_for("02:00:01")
        page.wait_for_selector(f"#card-{card_key('value-shape')}", state="visible")
        assert page.inner_text("#status") == "Review: 1 due, 0 new. This card is due."
        assert t.errors == []
    finally:
        close_tab(t)
