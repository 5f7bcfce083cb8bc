"""Value cards with variants in Anki: the note carries the choices; the front shows them shuffled anew on
each review, picked by click or keys 1 to n; the back shows them in the front's order, says what was
chosen and, for a variant's answer (chosen or typed), that variant's feedback."""

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
from tests.support.projects import write_project
from tests.support.variants import FEEDBACK, FILES, RAISES

# The Anki reviewer's emulation (a pytest fixture takes the name it is bound to here): a tab serving this
# module's `rendered`, and the two ways a back is shown.
context = anki_reviewer.context
reviewer = anki_reviewer.page
desktop, mobile = anki_reviewer.desktop, anki_reviewer.mobile

OPTIONS = """() => Array.from(document.querySelectorAll(".qg-option")).map((o) =>
  [o.querySelector(".qg-option-key").textContent, o.querySelector("code").textContent,
   o.getAttribute("aria-checked")])"""


@pytest.fixture(scope="module")
def rendered(tmp_path_factory: pytest.TempPathFactory, pool: Pool) -> dict[str, Any]:
    """Card id -> (question HTML, answer HTML) as Anki renders them, the Judge fields, the media folder."""
    root = write_project(tmp_path_factory.mktemp("variants-anki"), FILES)
    report = pipeline.build(pipeline.Options(cards_dir=root / "cards", out_dir=root / "build", pool=pool))
    with collection(root / "anki") as col:
        import_all(col, report)
        sides, judges = {}, {}
        for cid in col.find_cards("deck:Variants*"):
            card = col.get_card(cid)
            note = card.note()
            sides[card_id(report, note)] = (card.question(), card.answer())
            judges[card_id(report, note)] = json.loads(html.unescape(note["Judge"]))
        media = Path(col.media.dir())
    return {"sides": sides, "judges": judges, "media": media}


def test_the_note_carries_the_choices_and_how_the_deck_answers(rendered: dict[str, Any]) -> None:
    choice, typed = rendered["judges"]["two-backward"], rendered["judges"]["two-backward-typed"]
    assert choice["mode"] == "choice" and typed["mode"] == "typed"
    assert [c["text"] for c in choice["choices"]] == ["8.0", "5.0", "3.0", RAISES]
    assert [c["feedback"] for c in choice["choices"]] == FEEDBACK
    assert choice["choices"][0]["answer"] == choice["answer"]


def pressing(key: str, seen: list[Any]) -> Any:
    def act(page: Any) -> None:
        page.wait_for_selector(".qg-option")
        seen.append(page.evaluate(OPTIONS))
        page.keyboard.press(key)

    return act


@pytest.mark.parametrize("show", [desktop, mobile], ids=["desktop", "mobile"])
def test_front_and_back_agree_on_the_shuffle_and_the_back_says_why(
    reviewer: Any, rendered: dict[str, Any], show: Any
) -> None:
    fronts = []
    for _ in range(4):  # a new review each time: a new order, which the back keeps
        seen: list[Any] = []
        result = show(reviewer, rendered["sides"]["two-backward"], pressing("2", seen))
        [front] = seen
        back = reviewer.evaluate(OPTIONS)
        assert [(k, text) for k, text, _ in back] == [(k, text) for k, text, _ in front]
        assert [checked for _, _, checked in back] == ["false", "true", "false", "false"]
        chosen = front[1][1]
        k = ["8.0", "5.0", "3.0", RAISES].index(chosen)
        verdict = " \u2014 right." if k == 0 else f" \u2014 not right: {FEEDBACK[k]}."
        assert result.inner_text() == f"You chose {chosen}{verdict}"
        assert reviewer.locator(".qg-option.qg-right-option code").inner_text() == "8.0"
        assert reviewer.locator(".qg-typebox").is_hidden()
        fronts.append(tuple(text for _, text, _ in front))
    assert len(set(fronts)) > 1


def test_a_click_on_the_right_option_is_right(reviewer: Any, rendered: dict[str, Any]) -> None:
    def act(page: Any) -> None:
        page.locator(".qg-option", has_text="8.0").click()

    result = desktop(reviewer, rendered["sides"]["two-backward"], act)
    assert result.inner_text() == "You chose 8.0 \u2014 right."


@pytest.mark.parametrize(
    ("typed", "said"), [("5", f" \u2014 not right: {FEEDBACK[1]}."), ("8", " \u2014 right.")]
)
def test_typed_a_variants_answer_gets_its_feedback(
    reviewer: Any, rendered: dict[str, Any], typed: str, said: str
) -> None:
    def act(page: Any) -> None:
        page.wait_for_function("document.querySelector('.qg-card[data-qg-mounted]')")
        assert page.locator(".qg-option").count() == 0
        page.locator(".qg-input").fill(typed)
        page.locator(".qg-input").press("Enter")

    result = desktop(reviewer, rendered["sides"]["two-backward-typed"], act)
    assert result.inner_text() == f"You typed {typed}{said}"
