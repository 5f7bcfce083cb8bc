"""Quiz mode in Chromium from file://: every kind answered right and wrong, order puzzles by keyboard
(two different valid orders) and by drag and drop, and the score at the end."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import expect

from quizgen import pipeline
from quizgen.render.view import card_key
from tests.support.quiz import (
    SAMPLE_PAGE,
    Tab,
    arrow_to,
    block_codes,
    close_tab,
    focused_line,
    open_tab,
    site_url,
)

ORDER = "order-train-step"
ZERO, LOSS, BACKWARD, STEP = (
    "opt.zero_grad()",
    "loss = ((model(x) - y) ** 2).mean()",
    "loss.backward()",
    "opt.step()",
)
DISTRACTOR = "x = x * 2"
# Natural spellings the judge accepts, and answers it must refuse.
RIGHT = {
    "value-two-steps": "tensor(8.)",
    "value-grad-none": "none",
    "value-shape": "torch.Size([2, 3])",
    "value-raises": "RuntimeError",
}
WRONG = {
    "value-two-steps": "3.0",
    "value-grad-none": "0",
    "value-shape": "(3, 2)",
    "value-raises": "ValueError",
}


@pytest.fixture
def tab(browser: Any, built: pipeline.Report) -> Iterator[Tab]:
    t = open_tab(browser, site_url(built, SAMPLE_PAGE))
    yield t
    assert t.errors == []
    assert t.outside() == []
    close_tab(t)


def result_of(page: Any, card: str) -> dict[str, str]:
    root = f"#card-{card_key(card)} .result"
    page.wait_for_selector(root, state="visible")
    return {
        "outcome": page.inner_text(f"#card-{card_key(card)} .outcome"),
        "text": page.inner_text(root),
    }


def answer_value(page: Any, card: str, text: str) -> dict[str, str]:
    page.fill(f"#answer-{card_key(card)}", text)
    page.press(f"#answer-{card_key(card)}", "Enter")
    return result_of(page, card)


def next_card(page: Any) -> None:
    page.click("#next")


def add_lines(page: Any, codes: list[str]) -> None:
    """Add lines to the block with their Add buttons, in order."""
    for code in codes:
        page.locator(f"#card-{card_key(ORDER)} .line", has_text=code).locator(".toggle").click()


def check_order(page: Any) -> dict[str, str]:
    page.click(f"#card-{card_key(ORDER)} .check-order")
    return result_of(page, ORDER)


def score_after_the_last_card(page: Any, knew: bool) -> str:
    """Reveal the last card (basic), say whether it was known, and read the quiz's score."""
    page.click(f"#card-{card_key('basic-why-accumulate')} .reveal")
    page.click(f"#self-grade [data-knew='{str(knew).lower()}']")
    next_card(page)
    return str(page.inner_text("#score"))


def skip_to_order_card(page: Any) -> None:
    for card in RIGHT:
        answer_value(page, card, "?")
        next_card(page)
    page.click(f"#card-{card_key('myth-zero-grad-zeros')} [data-verdict='true']")
    next_card(page)
    page.wait_for_selector(f"#card-{card_key(ORDER)}", state="visible")


def test_every_kind_answered_right(tab: Tab, built: pipeline.Report) -> None:
    page = tab.page
    torch = built.decks[0].cards[0].torch_version
    assert page.inner_text("#status") == "Quiz: card 1 of 7, 0 right so far."
    for card, text in RIGHT.items():
        result = answer_value(page, card, text)
        assert result["outcome"] == "Right", (card, result)
        assert f"Verified with torch {torch}." in result["text"]
        assert page.evaluate("document.activeElement.id") == "next"
        next_card(page)
    assert (
        page.inner_text(f"#card-{card_key('value-two-steps')} .result").count(
            "Gradients add up: 3.0 + 5.0 = 8.0."
        )
        == 1
    )

    page.click(f"#card-{card_key('myth-zero-grad-zeros')} [data-verdict='false']")
    result = result_of(page, "myth-zero-grad-zeros")
    assert result["outcome"] == "Right"
    assert "The claim is false." in result["text"]
    assert "Since torch 2.0 it sets them to None." in result["text"]  # the explanation
    assert "assert w.grad is None" in result["text"]  # the proof's code...
    assert (
        page.inner_text(f"#card-{card_key('myth-zero-grad-zeros')} pre.output") == "None"
    )  # ...and its real output
    next_card(page)

    add_lines(page, [ZERO, LOSS, BACKWARD, STEP])
    page.click(f"#card-{card_key(ORDER)} .check-order")
    result = result_of(page, ORDER)
    assert result["outcome"] == "Right"
    assert "The answer, as code" in result["text"]
    next_card(page)

    page.click(f"#card-{card_key('basic-why-accumulate')} .reveal")
    result = result_of(page, "basic-why-accumulate")
    assert "So that several backward passes can add into one update" in result["text"]
    assert page.inner_text(f"#card-{card_key('basic-why-accumulate')} pre.output") == "accumulate"
    page.click("#self-grade [data-knew='true']")
    assert page.inner_text("#next") == "See your score"
    next_card(page)
    assert page.inner_text("#score") == "You got 7 of 7 right."
    assert page.locator("#missed li").count() == 0
    page.click("text=All decks")
    expect(page.locator("[data-due-for='sample-gradients']")).to_contain_text("last quiz 7 of 7 right")


def test_every_kind_answered_wrong(tab: Tab) -> None:
    page = tab.page
    for card, text in WRONG.items():
        result = answer_value(page, card, text)
        assert result["outcome"] == "Not right", (card, result)
        assert "The answer is" in result["text"]
        next_card(page)
    assert "The answer is torch.Size([2, 3])." in page.inner_text(f"#card-{card_key('value-shape')} .result")

    page.click(f"#card-{card_key('myth-zero-grad-zeros')} [data-verdict='true']")
    result = result_of(page, "myth-zero-grad-zeros")
    assert result["outcome"] == "Not right"
    assert "You said true." in result["text"]
    next_card(page)

    add_lines(page, [ZERO, DISTRACTOR, LOSS, BACKWARD, STEP])
    page.click(f"#card-{card_key(ORDER)} .check-order")
    result = result_of(page, ORDER)
    assert result["outcome"] == "Not right"
    # What the build saw the distractor do, and two more tries before the answer.
    # The build's Markdown code spans are code, not backticks (issue 22).
    assert f"With {DISTRACTOR} instead of {LOSS}: {BACKWARD} raises NameError" in result["text"]
    assert "The answer, as code" not in result["text"]
    assert page.inner_text(f"#card-{card_key(ORDER)} .attempts") == "2 attempts left"
    for left in ["1 attempt left", "no attempts left"]:
        page.click(f"#card-{card_key(ORDER)} .check-order")
        expect(page.locator(f"#card-{card_key(ORDER)} .attempts")).to_have_text(left)
    result = result_of(page, ORDER)
    assert result["outcome"] == "Not right"
    assert "The answer, as code" in result["text"]
    # Answered: the lines are locked.
    assert page.locator(f"#card-{card_key(ORDER)} .toggle:disabled").count() == 5
    next_card(page)

    assert score_after_the_last_card(page, knew=False) == "You got 0 of 7 right."
    assert page.locator("#missed li").count() == 7
    page.click("#restart")
    assert page.inner_text("#status") == "Quiz: card 1 of 7, 0 right so far."
    assert page.input_value(f"#answer-{card_key('value-two-steps')}") == ""


def test_a_wrong_order_says_why_and_may_be_tried_again(tab: Tab) -> None:
    page = tab.page
    skip_to_order_card(page)
    card = page.locator(f"#card-{card_key(ORDER)}")
    # The setup, collapsed, and the lines highlighted as on the Anki card.
    assert not card.locator("details.setup").evaluate("d => d.open")
    card.locator("details.setup summary").click()
    expect(card.locator("details.setup")).to_contain_text("ref_opt = torch.optim.SGD(ref.parameters(), lr=")
    assert card.locator(".line-code .highlight .n", has_text="opt").count() >= 1
    assert page.inner_text(f"#card-{card_key(ORDER)} .attempts") == "3 attempts"

    add_lines(page, [ZERO, LOSS, STEP, BACKWARD])
    result = check_order(page)
    assert result["outcome"] == "Not right"
    assert f"With {STEP} before {BACKWARD}, the check fails: assert torch.allclose(" in result["text"]
    assert "model.weight = tensor(" in result["text"]
    assert "The answer, as code" not in result["text"]  # the answer waits for the last attempt
    assert page.inner_text(f"#card-{card_key(ORDER)} .attempts") == "2 attempts left"
    expect(page.locator("#announcer")).to_contain_text("2 attempts left.")
    assert not card.get_attribute("class").count("answered")

    # An order the build has no message for: the line to move is marked.
    add_lines(page, [ZERO, LOSS, STEP, BACKWARD])  # every line out again
    add_lines(page, [STEP, ZERO, LOSS, BACKWARD])
    page.click(f"#card-{card_key(ORDER)} .check-order")
    label = page.inner_text(f"#card-{card_key(ORDER)} .line:has-text('{STEP}') .line-label")
    expect(card.locator(".reason")).to_have_text(
        f"Line {label} is out of place: move it and your block is an accepted order."
    )
    assert page.inner_text(f"#card-{card_key(ORDER)} .attempts") == "1 attempt left"
    misplaced = card.locator(".line.misplaced")
    assert misplaced.count() == 1 and STEP in misplaced.inner_text()
    expect(misplaced.locator(".mark")).to_be_visible()

    # Moving a line clears the marks; the right order on the last attempt is right.
    add_lines(page, [STEP])
    assert card.locator(".line.misplaced").count() == 0
    add_lines(page, [STEP])
    result = check_order(page)
    assert (result["outcome"], "The answer, as code" in result["text"]) == ("Right", True)
    next_card(page)
    assert score_after_the_last_card(page, knew=True) == "You got 2 of 7 right."  # right on a later try


def test_leaving_an_order_while_trying_again_counts_as_missed(tab: Tab) -> None:
    page = tab.page
    skip_to_order_card(page)
    add_lines(page, [BACKWARD, LOSS, ZERO, STEP])
    assert check_order(page)["outcome"] == "Not right"
    assert "2 attempts left" in page.inner_text(f"#card-{card_key(ORDER)} .attempts")
    assert page.inner_text("#next") == "Next card"
    next_card(page)
    assert score_after_the_last_card(page, knew=True) == "You got 1 of 7 right."
    assert page.locator("#missed li").count() == 6


def test_an_order_missing_a_line_says_so(tab: Tab) -> None:
    page = tab.page
    skip_to_order_card(page)
    add_lines(page, [LOSS, BACKWARD, STEP])
    page.click(f"#card-{card_key(ORDER)} .check-order")
    assert "The block has 3 lines; it needs 4." in result_of(page, ORDER)["text"]


def tab_to_first_line(page: Any) -> None:
    # The card's heading has focus after "Next card"; the puzzle's first Tab stops are the card's link, its
    # setup and a line.
    assert page.evaluate("document.activeElement.id") == f"title-{card_key(ORDER)}"
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.className") == "card-link"
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.tagName") == "SUMMARY"
    page.keyboard.press("Tab")
    assert focused_line(page) is not None


def add_by_keyboard(page: Any, codes: list[str]) -> None:
    for code in codes:
        arrow_to(page, ORDER, code)
        page.keyboard.press("Enter")


def check_by_keyboard(page: Any) -> dict[str, str]:
    for _ in range(30):
        if page.evaluate("document.activeElement.classList.contains('check-order')"):
            break
        page.keyboard.press("Tab")
    page.keyboard.press("Enter")
    return result_of(page, ORDER)


def test_order_by_keyboard_in_the_given_order(tab: Tab) -> None:
    page = tab.page
    skip_to_order_card(page)
    tab_to_first_line(page)
    add_by_keyboard(page, [ZERO, LOSS, BACKWARD, STEP])
    assert block_codes(page, ORDER) == [ZERO, LOSS, BACKWARD, STEP]
    assert page.inner_text(f"#block-label-{card_key(ORDER)}") == "Your block (4 lines)"
    assert check_by_keyboard(page)["outcome"] == "Right"


def test_order_by_keyboard_in_another_valid_order(tab: Tab) -> None:
    """zero_grad last is also right (grads start as None): picked up and moved down with the arrows."""
    page = tab.page
    skip_to_order_card(page)
    tab_to_first_line(page)
    add_by_keyboard(page, [ZERO, LOSS, BACKWARD, STEP])
    arrow_to(page, ORDER, ZERO)
    page.keyboard.press("Space")
    assert page.locator(f"#card-{card_key(ORDER)} .line.picked").count() == 1
    expect(page.locator("#announcer")).to_contain_text("Picked up")
    for _ in range(3):
        page.keyboard.press("ArrowDown")
    page.keyboard.press("Space")
    expect(page.locator("#announcer")).to_contain_text("position 4 of 4")
    assert block_codes(page, ORDER) == [LOSS, BACKWARD, STEP, ZERO]
    # Escape puts a picked-up line back where it was.
    page.keyboard.press("Space")
    page.keyboard.press("ArrowUp")
    page.keyboard.press("Escape")
    assert block_codes(page, ORDER) == [LOSS, BACKWARD, STEP, ZERO]
    assert check_by_keyboard(page)["outcome"] == "Right"


def test_order_by_keyboard_leaves_the_block_through_its_end(tab: Tab) -> None:
    """Enter takes a line back out; a picked line moved past the block's end lands among the unused lines."""
    page = tab.page
    skip_to_order_card(page)
    tab_to_first_line(page)
    add_by_keyboard(page, [DISTRACTOR, ZERO])
    arrow_to(page, ORDER, DISTRACTOR)
    page.keyboard.press("Space")
    page.keyboard.press("ArrowDown")
    page.keyboard.press("ArrowDown")
    page.keyboard.press("Space")
    assert block_codes(page, ORDER) == [ZERO]
    arrow_to(page, ORDER, ZERO)
    page.keyboard.press("Enter")
    assert block_codes(page, ORDER) == []
    assert page.inner_text(f"#block-label-{card_key(ORDER)}") == "Your block (empty)"


def test_order_by_drag_and_drop(tab: Tab) -> None:
    page = tab.page
    skip_to_order_card(page)
    block = page.locator(f"#card-{card_key(ORDER)} .block")
    for code in [LOSS, BACKWARD, STEP, ZERO]:
        box = block.bounding_box()
        assert box is not None
        line = page.locator(f"#card-{card_key(ORDER)} .pool .line", has_text=code)
        line.drag_to(block, target_position={"x": box["width"] / 2, "y": box["height"] - 4})
    assert block_codes(page, ORDER) == [LOSS, BACKWARD, STEP, ZERO]
    # Drag the first line back out, then onto the top of the block.
    page.locator(f"#card-{card_key(ORDER)} .block .line", has_text=LOSS).drag_to(
        page.locator(f"#card-{card_key(ORDER)} .pool")
    )
    assert block_codes(page, ORDER) == [BACKWARD, STEP, ZERO]
    page.locator(f"#card-{card_key(ORDER)} .pool .line", has_text=LOSS).drag_to(
        block, target_position={"x": 40, "y": 6}
    )
    assert block_codes(page, ORDER) == [LOSS, BACKWARD, STEP, ZERO]
    page.click(f"#card-{card_key(ORDER)} .check-order")
    assert result_of(page, ORDER)["outcome"] == "Right"
