"""How many checks an order puzzle allows (issue 11): 3, quizgen.toml's `[quiz] attempts`, a deck's own
`attempts:`; the quiz page and the Anki note carry it, and a wrong value is an error at its line."""

from __future__ import annotations

import html
import json
import re
import sqlite3
import tempfile
import zipfile
from collections.abc import Callable
from contextlib import closing
from pathlib import Path

import pytest

from quizgen import pipeline
from quizgen.errors import CardErrors
from quizgen.project import settings
from quizgen.render.view import card_key
from tests.support.order_decks import deck
from tests.support.quiz import as_shown


def judges(root: Path) -> dict[str, dict[str, object]]:
    """Card key -> its judge data, as the quiz pages embed it (they hold no card id)."""
    found: dict[str, dict[str, object]] = {}
    for page in (root / "build" / "quiz" / "decks").glob("*.html"):
        text = as_shown(page.read_text())
        data = re.search(r'<script type="application/json" id="quiz-data">(.*?)</script>', text, re.S)
        assert data is not None
        for card in json.loads(data.group(1))["cards"]:
            found[card["id"]] = card["judge"]
            attempts = re.search(rf'id="card-{card["id"]}".*?data-attempts="(\d+)"', text, re.S)
            assert attempts is not None and int(attempts.group(1)) == card["judge"]["attempts"]
    return found


def test_three_then_the_projects_then_the_decks(
    project: Callable[[dict[str, str]], Path], options: Callable[..., pipeline.Options]
) -> None:
    files = {"plain.yaml": deck("Plain", "plain"), "once.yaml": deck("Once", "once", "attempts: 1\n")}
    root = project(files)
    pipeline.build(options(root))
    assert {k: v["attempts"] for k, v in judges(root).items()} == {card_key("plain"): 3, card_key("once"): 1}
    (root / "quizgen.toml").write_text("[quiz]\nattempts = 5\n")
    pipeline.build(options(root))
    assert {k: v["attempts"] for k, v in judges(root).items()} == {card_key("plain"): 5, card_key("once"): 1}
    # The Anki note's Judge field says it too: the card's script allows as many typed tries.
    assert anki_judge(next((root / "build" / "anki").glob("Once*.apkg")))["attempts"] == 1


def anki_judge(apkg: Path) -> dict[str, object]:
    """The Judge field of the one note in a package (fields are joined by 0x1f; Judge is the 4th)."""
    with zipfile.ZipFile(apkg) as package, tempfile.TemporaryDirectory() as folder:
        package.extract("collection.anki2", folder)
        with closing(sqlite3.connect(Path(folder) / "collection.anki2")) as db:
            (fields,) = db.execute("select flds from notes").fetchone()
    judge: dict[str, object] = json.loads(html.unescape(fields.split("\x1f")[3]))
    return judge


@pytest.mark.parametrize(
    ("toml", "message"),
    [
        ("[quiz]\nattempts = 0\n", "quizgen.toml:2 -> quiz.attempts: expected a whole number from 1 to 10"),
        ("[quiz]\nattempts = 2.5\n", "quizgen.toml:2 -> quiz.attempts: expected a number"),
    ],
)
def test_a_wrong_project_setting_is_an_error_at_its_line(tmp_path: Path, toml: str, message: str) -> None:
    (tmp_path / "cards").mkdir()
    (tmp_path / "quizgen.toml").write_text(toml)
    with pytest.raises(CardErrors) as caught:
        settings.load(tmp_path / "cards")
    assert message in str(caught.value)


def test_a_wrong_deck_setting_is_an_error_at_its_line(
    project: Callable[[dict[str, str]], Path], options: Callable[..., pipeline.Options]
) -> None:
    root = project({"d.yaml": deck("D", "d", "attempts: 11\n")})
    with pytest.raises(CardErrors) as caught:
        pipeline.build(options(root))
    assert "d.yaml:2:11 -> attempts: attempts is a whole number 1..10, not '11'" in str(caught.value)
