"""Value cards with variants in the quiz (Chromium from file://): multiple choice by click or keys 1 to n,
each wrong choice with its misconception's feedback; typed, a variant's answer gets that feedback; axe-core
finds nothing in either."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from quizgen import pipeline
from quizgen.execution.pool import Pool
from quizgen.render.view import card_key
from tests.support.projects import write_project
from tests.support.quiz import Tab, axe_source, axe_violations, close_tab, open_tab, overflowing, site_url
from tests.support.variants import CHOICE_PAGE, FEEDBACK, FILES, TYPED_PAGE

CARD = f"#card-{card_key('two-backward')}"
TYPED = "two-backward-typed"


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory, pool: Pool) -> pipeline.Report:
    root = write_project(tmp_path_factory.mktemp("variants-quiz"), FILES)
    built = pipeline.build(pipeline.Options(cards_dir=root / "cards", out_dir=root / "build", pool=pool))
    built.root = root  # type: ignore[attr-defined]
    return built


@pytest.fixture
def tab(browser: Any, report: pipeline.Report) -> Iterator[Tab]:
    t = open_tab(browser, site_url(report, CHOICE_PAGE))
    yield t
    assert t.errors == []
    assert t.outside() == []
    close_tab(t)


def shown(page: Any) -> list[int]:
    """The choices as the options show them, first to last (indexes into the card's choices)."""
    return [int(o.get_attribute("data-choice")) for o in page.locator(f"{CARD} .option").all()]


def result(page: Any, card: str = CARD) -> tuple[str, str]:
    page.wait_for_selector(f"{card} .result", state="visible")
    reason = page.locator(f"{card} .reason")
    return page.inner_text(f"{card} .outcome"), reason.inner_text() if reason.is_visible() else ""


def sentence(feedback: str) -> str:
    return feedback[0].upper() + feedback[1:] + "."


def test_the_choices_are_the_right_answer_and_each_variants_in_a_radio_group(tab: Tab) -> None:
    page = tab.page
    group = page.locator(f"{CARD} [role=radiogroup]")
    assert group.get_attribute("aria-labelledby") == f"choose-{card_key('two-backward')}"
    assert sorted(shown(page)) == [0, 1, 2, 3]
    options = page.locator(f"{CARD} [role=radio]")
    assert [options.nth(i).get_attribute("aria-checked") for i in range(4)] == ["false"] * 4
    assert [options.nth(i).locator(".option-key").inner_text() for i in range(4)] == ["1", "2", "3", "4"]
    assert page.is_hidden(f"{CARD} .answer-input") or not page.locator(f"{CARD} .answer-input").count()


def test_the_key_2_picks_the_second_option(tab: Tab) -> None:
    page = tab.page
    second = shown(page)[1]
    page.keyboard.press("2")
    outcome, reason = result(page)
    assert page.locator(f"{CARD} .option").nth(1).get_attribute("aria-checked") == "true"
    assert (outcome, reason) == (("Right", "") if second == 0 else ("Not right", sentence(FEEDBACK[second])))


@pytest.mark.parametrize("choice", [1, 2, 3])
def test_a_variants_choice_says_which_misconception_gives_it(tab: Tab, choice: int) -> None:
    page = tab.page
    page.click(f"{CARD} .option[data-choice='{choice}']")
    assert result(page) == ("Not right", sentence(FEEDBACK[choice]))
    assert page.inner_text(f"{CARD} .answer") == "The answer is 8.0."
    assert page.locator(f"{CARD} .option.right-option").get_attribute("data-choice") == "0"


def test_the_right_choice_is_right(tab: Tab) -> None:
    page = tab.page
    page.focus(f"{CARD} .option[data-choice='0']")
    page.keyboard.press("Enter")
    assert result(page) == ("Right", "")
    assert page.locator(f"{CARD} .option[data-choice='0']").get_attribute("aria-checked") == "true"


def test_the_arrows_move_between_the_options(tab: Tab) -> None:
    page = tab.page
    page.locator(f"{CARD} .option").first.focus()
    page.keyboard.press("ArrowDown")
    focused = page.evaluate("() => document.activeElement.getAttribute('data-choice')")
    assert int(focused) == shown(page)[1]
    assert page.locator(f"{CARD} .result").is_hidden()  # moving is not answering


def test_a_new_shuffle_each_time_the_card_is_shown(browser: Any, report: pipeline.Report) -> None:
    orders = set()
    for _ in range(4):
        t = open_tab(browser, site_url(report, CHOICE_PAGE))
        orders.add(tuple(shown(t.page)))
        close_tab(t)
    assert len(orders) > 1


@pytest.mark.parametrize(
    ("typed", "expected"),
    [("5", ("Not right", sentence(FEEDBACK[1]))), ("3.0", ("Not right", sentence(FEEDBACK[2]))),
     ("RuntimeError", ("Not right", sentence(FEEDBACK[3]))), ("8", ("Right", "")), ("7", ("Not right", ""))],
)  # fmt: skip
def test_typed_a_variants_answer_gets_its_feedback(
    browser: Any, report: pipeline.Report, typed: str, expected: tuple[str, str]
) -> None:
    t = open_tab(browser, site_url(report, TYPED_PAGE))
    try:
        assert t.page.locator(f"#card-{card_key(TYPED)} .option").count() == 0
        t.page.fill(f"#answer-{card_key(TYPED)}", typed)
        t.page.press(f"#answer-{card_key(TYPED)}", "Enter")
        assert result(t.page, f"#card-{card_key(TYPED)}") == expected
        assert t.errors == []
    finally:
        close_tab(t)


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_axe_finds_nothing_asked_or_answered(browser: Any, report: pipeline.Report, scheme: str) -> None:
    axe = axe_source()
    t = open_tab(browser, "", width=375, dark=scheme == "dark")
    try:
        t.page.goto(site_url(report, CHOICE_PAGE))
        asked = [*axe_violations(t.page, axe), *overflowing(t.page)]
        t.page.click(f"{CARD} .option[data-choice='3']")  # the long exception message
        answered = [*axe_violations(t.page, axe), *overflowing(t.page)]
        t.page.goto(site_url(report, TYPED_PAGE))
        t.page.fill(f"#answer-{card_key(TYPED)}", "5")
        t.page.press(f"#answer-{card_key(TYPED)}", "Enter")
        typed = [*axe_violations(t.page, axe), *overflowing(t.page)]
        assert (asked, answered, typed) == ([], [], [])
    finally:
        close_tab(t)
