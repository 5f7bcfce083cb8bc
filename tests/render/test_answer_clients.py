"""A float32 answer and an exception answer in the real clients (issue 12): the quiz in Chromium shows
`0.9` and judges a typed 0.9 right; the exception shows its type and message; Anki's note and card
show the same."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from quizgen import pipeline
from quizgen.execution.pool import Pool
from quizgen.render.view import card_key
from tests.support.float_answers import DECK, MESSAGE
from tests.support.projects import write_project
from tests.support.quiz import Tab, close_tab, open_tab


@pytest.fixture(scope="module")
def quiz_page(tmp_path_factory: pytest.TempPathFactory, pool: Pool) -> str:
    """The deck's quiz page, built once for the module."""
    root = write_project(tmp_path_factory.mktemp("shown"), {"shown.yaml": DECK})
    pipeline.build(pipeline.Options(cards_dir=root / "cards", out_dir=root / "build", pool=pool))
    return (root / "build" / "quiz" / "decks" / "answers-shown.html").as_uri()


@pytest.fixture
def tab(browser: Any, quiz_page: str) -> Iterator[Tab]:
    t = open_tab(browser, quiz_page)
    yield t
    assert t.errors == [] and t.outside() == []
    close_tab(t)


def typed(page: Any, card: str, text: str) -> dict[str, str]:
    page.fill(f"#answer-{card_key(card)}", text)
    page.press(f"#answer-{card_key(card)}", "Enter")
    page.wait_for_selector(f"#card-{card_key(card)} .result", state="visible")
    return {
        "outcome": page.inner_text(f"#card-{card_key(card)} .outcome"),
        "answer": page.inner_text(f"#card-{card_key(card)} .answer"),
        "text": page.inner_text(f"#card-{card_key(card)} .result"),
    }


def test_the_quiz_shows_a_float32_answer_as_0_9_and_an_exception_with_its_message(tab: Tab) -> None:
    page = tab.page
    result = typed(page, "float32-answer", "0.9")
    assert result["outcome"] == "Right"
    assert result["answer"] == "The answer is 0.9."
    assert "A float32 0.9 is 0.9." in result["text"]
    assert "0.8999999" not in result["text"]
    page.click("#next")
    result = typed(page, "exception-answer", "RuntimeError")
    assert result["outcome"] == "Right"
    assert result["answer"] == f"The answer is {MESSAGE}."


def test_a_wrong_answer_still_shows_the_exception_s_message(tab: Tab) -> None:
    page = tab.page
    typed(page, "float32-answer", "0.91")
    page.click("#next")
    result = typed(page, "exception-answer", "ValueError")
    assert result["outcome"] != "Right"
    assert MESSAGE in result["answer"]
