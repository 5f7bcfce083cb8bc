"""The course order (cards/course.py): a deck's `position:` puts the decks in the order a learner should take
them, in the quiz's index (numbered) and in Anki's deck list (whose names carry the number); a bad or
taken place is an error at its line."""

from __future__ import annotations

import json
import re
import sqlite3
import zipfile
from pathlib import Path

import pytest

from quizgen import pipeline
from quizgen.cards import course
from quizgen.cards.loader import load_project
from quizgen.cards.model import Deck
from quizgen.errors import CardErrors
from tests.support.projects import write_project


def deck(name: str, position: str | None = None) -> str:
    """A deck of one basic card (nothing to run), with a `position:` line when given."""
    slug = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")
    place = f"position: {position}\n" if position is not None else ""
    return f"deck: {name}\n{place}cards:\n  - id: card-{slug}\n    kind: basic\n    front: Q?\n    back: A.\n"


def errors_of(cards: Path) -> list[str]:
    with pytest.raises(CardErrors) as info:
        load_project(cards)
    return [str(p) for p in info.value.problems]


def test_decks_come_in_course_order_then_the_unordered_by_file(tmp_path: Path) -> None:
    files = {
        "a.yaml": deck("Course::Checkpoints", "3"),
        "b.yaml": deck("Course::Extra"),
        "c.yaml": deck("Course::ZeroGrad", "1"),
        "d.yaml": deck("Course::Accumulation", "2"),
        "e.yaml": deck("Course::Appendix"),
    }
    decks = load_project(write_project(tmp_path, files) / "cards")
    assert [d.name.split("::")[1] for d in decks] == [
        "ZeroGrad",
        "Accumulation",
        "Checkpoints",
        "Extra",
        "Appendix",
    ]
    assert [d.position for d in decks] == [1, 2, 3, None, None]


@pytest.mark.parametrize("written", ["0", "100", "first", "1.5", "true"])
def test_a_place_that_is_not_a_whole_number_1_to_99_is_located(tmp_path: Path, written: str) -> None:
    cards = write_project(tmp_path, {"a.yaml": deck("Course::A", written)}) / "cards"
    assert errors_of(cards) == [
        f"{cards / 'a.yaml'}:2:11 -> position: position is a whole number 1..99, not '{written}'"
    ]


def test_two_decks_in_one_place_is_an_error_at_the_second(tmp_path: Path) -> None:
    files = {
        "a.yaml": deck("Course::A", "2"),
        "b.yaml": deck("Course::B", "2"),
        "c.yaml": deck("Course::C", "1"),
    }
    cards = write_project(tmp_path, files) / "cards"
    assert errors_of(cards) == [
        f"{cards / 'b.yaml'}:2:11 -> position: position 2 is taken by deck 'Course::A' ({cards / 'a.yaml'}): "
        "give each deck its own place in the course"
    ]


def test_a_continuation_cannot_set_the_place(tmp_path: Path) -> None:
    more = "continues: Course::A\nposition: 2\n" + deck("Two").split("\n", 1)[1]
    cards = write_project(tmp_path, {"a.yaml": deck("Course::A", "1"), "b.yaml": more}) / "cards"
    assert errors_of(cards) == [
        f"{cards / 'b.yaml'}:2:1 -> position: a file that continues a deck holds only cards; "
        f"the deck's position belongs in {cards / 'a.yaml'}"
    ]


def test_anki_names_carry_the_place_before_their_last_part() -> None:
    assert (
        course.numbered(Deck("PyTorch::Gradients::ZeroGrad", "x", position=1))
        == "PyTorch::Gradients::01 ZeroGrad"
    )
    assert course.numbered(Deck("Checkpoints", "x", position=12)) == "12 Checkpoints"
    assert course.numbered(Deck("PyTorch::Extra", "x")) == "PyTorch::Extra"


def _anki_deck_names(apkg: Path) -> list[str]:
    with zipfile.ZipFile(apkg) as z:
        data = z.read("collection.anki2")
    db = apkg.with_suffix(".anki2")
    db.write_bytes(data)
    with sqlite3.connect(db) as conn:
        (decks_json,) = conn.execute("select decks from col").fetchone()
    return [d["name"] for d in json.loads(decks_json).values() if d["name"] != "Default"]


def test_the_built_quiz_index_and_anki_decks_follow_the_course(tmp_path: Path) -> None:
    files = {
        "a.yaml": deck("Course::Later", "2"),
        "b.yaml": deck("Course::First", "1"),
        "c.yaml": deck("Course::Aside"),
    }
    root = write_project(tmp_path, files)
    report = pipeline.build(pipeline.Options(cards_dir=root / "cards", out_dir=root / "build"))
    index = (root / "build" / "quiz" / "index.html").read_text(encoding="utf-8")
    listed = re.findall(r'<h2>(?:<span class="deck-order">(\d+)\.</span> )?<a href="([^"]+)"', index)
    assert listed == [
        ("1", "decks/course-first.html"),
        ("2", "decks/course-later.html"),
        ("", "decks/course-aside.html"),
    ]
    assert "3 decks, in the order to take them." in index
    apkgs = {p.name: p for p in report.written if p.suffix == ".apkg"}
    assert _anki_deck_names(apkgs["Course__First.apkg"]) == ["Course::01 First"]
    assert _anki_deck_names(apkgs["Course__Later.apkg"]) == ["Course::02 Later"]
    assert _anki_deck_names(apkgs["Course__Aside.apkg"]) == ["Course::Aside"]
    # Anki lists decks by name: the numbered ones first, in course order
    assert sorted(["Course::02 Later", "Course::01 First", "Course::Aside"]) == [
        "Course::01 First",
        "Course::02 Later",
        "Course::Aside",
    ]


def test_a_new_place_is_a_move_to_another_anki_deck(tmp_path: Path) -> None:
    """Anki files a card under the numbered name, and importing never moves a card it has: the build
    says so, naming the decks as Anki shows them."""
    root = write_project(tmp_path, {"a.yaml": deck("Course::A", "1")})
    options = pipeline.Options(cards_dir=root / "cards", out_dir=root / "build")
    pipeline.build(options)
    (root / "cards" / "a.yaml").write_text(deck("Course::A", "2"), encoding="utf-8")
    notes = pipeline.build(options).notes
    assert any(
        n.startswith("card 'card-course-a' moved from deck 'Course::01 A' to 'Course::02 A'") for n in notes
    ), notes
