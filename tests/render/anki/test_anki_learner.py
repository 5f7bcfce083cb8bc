"""What learners see in Anki (issue 22), on notes imported into a real collection: the deck's setup on the
front of a card that calls its helper, collapsed and highlighted; Markdown code spans in a variant's
feedback and an order's feedback written as code, not backticks."""

from __future__ import annotations

import html
import json
from pathlib import Path
from typing import Any

import pytest

from quizgen import pipeline
from quizgen.execution.pool import Pool
from tests.support import anki_reviewer
from tests.support.anki import card_id, collection, import_all
from tests.support.learner_deck import LEARNER_DECK
from tests.support.projects import write_project

context = anki_reviewer.context
reviewer = anki_reviewer.page
desktop = anki_reviewer.desktop


@pytest.fixture(scope="module")
def rendered(tmp_path_factory: pytest.TempPathFactory, pool: Pool) -> dict[str, Any]:
    """Card id -> (question HTML, answer HTML) as Anki renders them, the Judge fields, the media folder."""
    root = write_project(tmp_path_factory.mktemp("learner-anki"), {"learner.yaml": LEARNER_DECK})
    report = pipeline.build(pipeline.Options(cards_dir=root / "cards", out_dir=root / "build", pool=pool))
    with collection(root / "anki") as col:
        import_all(col, report)
        sides, judges = {}, {}
        for cid in col.find_cards("deck:Learner*"):
            card = col.get_card(cid)
            note = card.note()
            sides[card_id(report, note)] = (card.question(), card.answer())
            judges[card_id(report, note)] = json.loads(html.unescape(note["Judge"]))
        media = Path(col.media.dir())
    return {"sides": sides, "judges": judges, "media": media}


def test_the_deck_setup_is_on_the_front_of_a_card_that_calls_its_helper(
    reviewer: Any, rendered: dict[str, Any]
) -> None:
    front, back = rendered["sides"]["helper-count"]
    assert "head_params" in front and "def" in front
    reviewer.pages["front.html"] = anki_reviewer.PAGE % ("", front)
    reviewer.goto(f"{anki_reviewer.ORIGIN}/front.html")
    setup = reviewer.locator(".qg-setup")
    assert setup.count() == 1 and not setup.evaluate("d => d.open")  # collapsed
    assert setup.locator(".highlight span").count() > 3  # highlighted like the card's code
    setup.locator("summary").click()
    assert "def head_params(n):" in setup.inner_text()
    # Above the code it explains, and once on the back (which repeats the front).
    assert front.index("qg-setup") < front.index('class="qg-code')
    assert back.count('class="qg-setup"') == 1
    # An order puzzle shows the deck's setup, then its own.
    order_front, _ = rendered["sides"]["long-order"]
    assert order_front.index("head_params") < order_front.index("Linear")


def test_a_variants_feedback_shows_code_not_backticks(reviewer: Any, rendered: dict[str, Any]) -> None:
    def act(page: Any) -> None:
        page.locator(".qg-option", has_text="3").click()

    result = desktop(reviewer, rendered["sides"]["helper-count"], act)
    assert "`" not in result.inner_text()
    assert result.locator("code").all_inner_texts() == ["head_params", "n"]
    assert result.locator("strong").all_inner_texts() == ["one"]  # emphasis as Markdown, not asterisks
    said = "not right: that is what you get if head_params gives one tensor per n."
    assert result.inner_text().endswith(said)


def test_an_orders_feedback_shows_code_not_backticks(reviewer: Any, rendered: dict[str, Any]) -> None:
    judge = rendered["judges"]["swap-order"]
    wrong = judge["feedback"]["0 2 1"]  # loss.backward() before loss = ...
    assert wrong.startswith("With `loss.backward()` before `loss = (w * 3).sum()`")

    def act(page: Any) -> None:
        page.wait_for_function("document.querySelector('.qg-card[data-qg-mounted]')")
        labels = page.evaluate(
            """() => Array.from(document.querySelectorAll('li[data-item]')).map((li) =>
              [li.querySelector('.qg-line-label').textContent.trim(), li.textContent])"""
        )
        by_code = {}
        for label, text in labels:
            for code in ["w = torch.ones", "loss = (w", "loss.backward()"]:
                if code in text:
                    by_code[code] = label
        typed = " ".join(by_code[c] for c in ["w = torch.ones", "loss.backward()", "loss = (w"])
        page.locator(".qg-input").fill(typed)
        page.locator(".qg-input").press("Enter")
        said = page.locator(".qg-try")  # on the front: a wrong order, attempts left
        seen.append((said.inner_text(), said.locator("code").all_inner_texts()))

    seen: list[tuple[str, list[str]]] = []
    result = desktop(reviewer, rendered["sides"]["swap-order"], act)
    [(text, codes)] = seen
    assert "`" not in text and text.startswith("Not right: With loss.backward() before")
    assert codes[:3] == ["loss.backward()", "loss = (w * 3).sum()", "loss.backward()"]
    assert "`" not in result.inner_text()  # the back says why too
    assert result.locator("code").count() >= 2
