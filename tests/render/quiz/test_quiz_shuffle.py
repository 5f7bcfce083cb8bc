"""Quiz mode's card order (issue 12's `shuffle` setting): the deck's order unless quizgen.toml's
`[quiz] shuffle` or a deck's own `shuffle:` says to go through the cards in a new random order each run."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from quizgen import pipeline
from quizgen.errors import CardErrors
from quizgen.project import settings
from tests.support.quiz import close_tab, open_tab

CARDS = "".join(
    f"  - id: c{k}\n    kind: basic\n    front: Card number {k}\n    back: Back {k}\n" for k in range(8)
)


def deck(name: str, header: str = "") -> str:
    return f"deck: {name}\n{header}cards:\n" + CARDS.replace("id: c", f"id: {name.lower()}-c")


def shuffles(root: Path) -> dict[str, bool]:
    """Deck name -> the shuffle flag its quiz page carries."""
    found = {}
    for page in (root / "build" / "quiz" / "decks").glob("*.html"):
        data = re.search(
            r'<script type="application/json" id="quiz-data">(.*?)</script>', page.read_text(), re.S
        )
        assert data is not None
        deck_data = json.loads(data.group(1))["deck"]
        found[deck_data["name"]] = deck_data["shuffle"]
    return found


def test_off_then_the_projects_then_the_decks(
    project: Callable[[dict[str, str]], Path], options: Callable[..., pipeline.Options]
) -> None:
    root = project({"a.yaml": deck("Plain"), "b.yaml": deck("Kept", "shuffle: false\n")})
    pipeline.build(options(root))
    assert shuffles(root) == {"Plain": False, "Kept": False}
    (root / "quizgen.toml").write_text("[quiz]\nshuffle = true\n")
    pipeline.build(options(root))
    assert shuffles(root) == {"Plain": True, "Kept": False}


def test_a_wrong_project_shuffle_is_an_error_at_its_line(tmp_path: Path) -> None:
    (tmp_path / "cards").mkdir()
    (tmp_path / "quizgen.toml").write_text('[quiz]\nshuffle = "yes"\n')
    with pytest.raises(CardErrors) as caught:
        settings.load(tmp_path / "cards")
    assert "quizgen.toml:2 -> quiz.shuffle: expected true or false" in str(caught.value)


def test_a_wrong_deck_shuffle_is_an_error_at_its_line(
    project: Callable[[dict[str, str]], Path], options: Callable[..., pipeline.Options]
) -> None:
    root = project({"d.yaml": deck("D", "shuffle: 3\n")})
    with pytest.raises(CardErrors) as caught:
        pipeline.build(options(root))
    assert "d.yaml:2:10 -> shuffle: shuffle is true or false, not '3'" in str(caught.value)


@pytest.mark.browser
def test_a_shuffled_deck_starts_each_run_somewhere_new(
    browser: Any, project: Callable[[dict[str, str]], Path], options: Callable[..., pipeline.Options]
) -> None:
    root = project({"a.yaml": deck("Mixed", "shuffle: true\n"), "b.yaml": deck("Plain")})
    pipeline.build(options(root))
    pages = root / "build" / "quiz" / "decks"

    def first_cards(page_name: str, runs: int) -> list[str]:
        tab = open_tab(browser, (pages / page_name).as_uri())
        page, seen = tab.page, []
        for _ in range(runs):
            seen.append(page.locator("article.card:not([hidden]) .prompt").first.inner_text().strip())
            # Through the run to its end, then again from the start.
            for _ in range(8):
                page.locator("article.card:not([hidden]) button.reveal").first.click()
                page.locator("#self-grade button[data-knew='true']").click()
                page.click("#next")
            page.click("#restart")
        assert tab.errors == []
        close_tab(tab)
        return seen

    plain = first_cards("plain.html", 2)
    assert plain == ["Card number 0", "Card number 0"]
    mixed = first_cards("mixed.html", 6)
    # Six runs that all start with the same card of eight: (1/8)^5 if the order were random.
    assert len(set(mixed)) > 1, mixed
