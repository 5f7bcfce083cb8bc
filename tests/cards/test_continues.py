"""A deck in several card files: `continues: <deck>` files add cards to a deck begun in another, read with
the deck's settings, located in their own file, remembered correctly, and built as one deck."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import jsonschema
import pytest
import yaml

from quizgen import pipeline
from quizgen.cards import loader, schema
from quizgen.cards.loader import load_project
from quizgen.errors import CardErrors
from quizgen.execution.cache import Cache
from quizgen.kinds.value import ValueCard
from quizgen.project.store import Memo
from tests.support.projects import write_project
from tests.support.quiz import as_shown

HEAD = """\
deck: Big::Deck
tags: [big]
setup: |
  import torch
cards:
  - id: one
    kind: value
    ask: "What is x?"
    code: |
      x = torch.tensor(2.0)
    answer_expr: x.item()
    answer: 2.0
"""


def more(card_id: str, number: float = 3.0, top: str = "continues: big::deck\n") -> str:
    """A continuation file whose one value card uses the deck's setup (`torch`)."""
    return f"""\
{top}cards:
  - id: {card_id}
    kind: value
    ask: "What is y?"
    code: |
      y = torch.tensor({number})
    answer_expr: y.item()
    answer: 3.0
"""


def write(root: Path, files: dict[str, str]) -> Path:
    return write_project(root, files) / "cards"


def errors_of(cards: Path) -> list[str]:
    with pytest.raises(CardErrors) as info:
        load_project(cards)
    return [str(p) for p in info.value.problems]


def test_continuations_join_the_deck_in_path_order_keeping_their_own_lines(tmp_path: Path) -> None:
    # `a-more.yaml` sorts before the deck's own file: its cards still come after the deck's.
    cards = write(tmp_path, {"main.yaml": HEAD, "z-more.yaml": more("three"), "a-more.yaml": more("two")})
    [deck] = load_project(cards)
    assert deck.name == "Big::Deck" and deck.path == str(cards / "main.yaml")
    assert [c.id for c in deck.cards] == ["one", "two", "three"]
    assert [c.deck for c in deck.cards] == ["Big::Deck"] * 3  # as the deck writes it, not `big::deck`
    two = deck.cards[1]
    assert isinstance(two, ValueCard) and two.code is not None
    assert str(two.location) == f"{cards / 'a-more.yaml'}:3:5: card 'two'"
    assert (two.code.path, two.code.line) == (str(cards / "a-more.yaml"), 7)
    assert deck.tags == ["big"] and deck.setup is not None and deck.setup.path == str(cards / "main.yaml")


def test_a_continuation_holds_only_cards(tmp_path: Path) -> None:
    top = "description: More.\ncontinues: Big::Deck\nsetup: import os\n"
    cards = write(tmp_path, {"a.yaml": HEAD, "b.yaml": more("two", top=top)})
    b, a = cards / "b.yaml", cards / "a.yaml"
    assert errors_of(cards) == [
        f"{b}:1:1 -> description: a file that continues a deck holds only cards; "
        f"the deck's description belongs in {a}",
        f"{b}:3:1 -> setup: a file that continues a deck holds only cards; the deck's setup belongs in {a}",
    ]


def test_deck_and_continues_together_or_neither(tmp_path: Path) -> None:
    cards = write(
        tmp_path,
        {
            "a.yaml": HEAD,
            "b.yaml": more("two", top="deck: Other\ncontinues: Big::Deck\n"),
            "c.yaml": more("three", top="tags: [x]\n"),
        },
    )
    b, c = cards / "b.yaml", cards / "c.yaml"
    assert errors_of(cards) == [
        f"{b}:2:1 -> continues: a card file has 'deck' (it begins a deck) or 'continues' (it adds to one), "
        "not both",
        f"{c}:1:1: missing required field 'deck' (or 'continues' in a file that adds cards to a deck begun "
        "in another)",
    ]


def test_continues_naming_no_deck(tmp_path: Path) -> None:
    files = {
        "a.yaml": HEAD,
        "b.yaml": HEAD.replace("Big::Deck", "Big::Decks").replace("id: one", "id: uno"),
        "c.yaml": more("two", top="continues: Big::Dek\n"),
        "d.yaml": more("three", top="continues: Elsewhere\n"),
    }
    cards = write(tmp_path, files)
    c, d = cards / "c.yaml", cards / "d.yaml"
    assert errors_of(cards) == [
        f"{c}:1:12 -> continues: no deck named 'Big::Dek'; did you mean 'Big::Deck' or 'Big::Decks'?",
        f"{d}:1:12 -> continues: no deck named 'Elsewhere'",
    ]


def test_a_deck_file_that_does_not_load_hides_no_deck_errors(tmp_path: Path) -> None:
    """Its deck may be the one named: its own error is the one to fix first."""
    cards = write(tmp_path, {"a.yaml": HEAD.replace("tags: [big]", "tags: big"), "b.yaml": more("two")})
    assert errors_of(cards) == [f"{cards / 'a.yaml'}:2:7 -> tags: 'tags' must be a list of words"]


def test_duplicate_ids_across_files(tmp_path: Path) -> None:
    cards = write(tmp_path, {"a.yaml": HEAD, "b.yaml": more("one")})
    assert errors_of(cards) == [
        f"{cards / 'b.yaml'}:3:9: card 'one' -> id: duplicate id 'one' (first defined at "
        f"{cards / 'a.yaml'}:6:9: card 'one' -> id)"
    ]


def _answers(cards: Path, memo: Memo | None = None, project: str = "choice") -> list[str]:
    decks, problems = loader.load(cards, value_answers=project, memo=memo)
    assert not problems
    return [c.answers for c in decks[0].cards if isinstance(c, ValueCard)]


def test_cards_are_read_with_the_decks_value_answers_remembered_or_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cards = write(
        tmp_path, {"a.yaml": HEAD.replace("tags:", "value_answers: typed\ntags:"), "b.yaml": more("two")}
    )
    memo = Memo(Cache(tmp_path / "cache"))
    assert _answers(cards) == _answers(cards, memo) == ["typed", "typed"]
    assert _answers(cards, project="typed") == ["typed", "typed"]

    def never(*args: object) -> None:
        raise AssertionError("parsed again")

    with monkeypatch.context() as patched:
        patched.setattr(loader, "load_file", never)
        assert _answers(cards, memo) == ["typed", "typed"]  # both reads of b.yaml remembered
    (cards / "a.yaml").write_text(HEAD)  # the deck's own value_answers is gone: the project's holds
    assert _answers(cards, memo) == ["choice", "choice"]
    assert _answers(cards, memo, project="typed") == ["typed", "typed"]
    (cards / "a.yaml").write_text(HEAD.replace("tags:", "value_answers: choice\ntags:"))
    assert _answers(cards, memo, project="typed") == ["choice", "choice"]


def test_the_schema_accepts_either_shape_and_rejects_mixes() -> None:
    published = schema.json_schema()
    jsonschema.Draft202012Validator.check_schema(published)
    jsonschema.validate(yaml.safe_load(HEAD), published)
    jsonschema.validate(yaml.safe_load(more("two")), published)
    for top in ["deck: A\ncontinues: B\n", "continues: B\nsetup: x = 1\n", "continues: B\ntags: [a]\n", ""]:
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(yaml.safe_load(more("two", top=top)), published)


def test_a_deck_in_two_files_builds_as_one(tmp_path: Path, options: Callable[..., pipeline.Options]) -> None:
    write(tmp_path, {"main.yaml": HEAD, "more.yaml": more("two")})
    report = pipeline.build(options(tmp_path))
    [verified] = report.decks
    assert [vc.card.id for vc in verified.cards] == ["one", "two"]
    assert [vc.answer["value"] for vc in verified.cards if vc.answer] == [2.0, 3.0]  # setup ran for both
    data = json.loads((tmp_path / "build" / "cards.json").read_text())
    assert [(d["name"], [c["id"] for c in d["cards"]]) for d in data["decks"]] == [
        ("Big::Deck", ["one", "two"])
    ]
    assert sorted(p.name for p in (tmp_path / "build" / "anki").glob("*.apkg")) == ["Big__Deck.apkg"]
    assert sorted(p.name for p in (tmp_path / "build" / "quiz" / "decks").iterdir()) == ["big-deck.html"]
    page = as_shown((tmp_path / "build" / "quiz" / "decks" / "big-deck.html").read_text())
    assert "What is x?" in page and "What is y?" in page

    (tmp_path / "cards" / "more.yaml").write_text(more("two", number=4.0))
    with pytest.raises(CardErrors) as info:
        pipeline.build(options(tmp_path))
    [problem] = info.value.problems
    assert str(problem.location) == f"{tmp_path / 'cards' / 'more.yaml'}:9:13: card 'two' -> answer"
    assert problem.message.startswith("declared answer 3.0 but execution gives 4.0")
