"""Parsed card files kept as plain JSON (cards/stored.py): read back equal, never trusted blindly, and a
file with a problem is always parsed, so its located errors stay exact."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from quizgen.cards import loader, stored
from quizgen.execution.cache import Cache
from quizgen.project.store import Memo
from tests.support.paths import REPO

REPO_CARDS = REPO / "cards"

DECK = """\
deck: Memo
setup: |
  import torch
cards:
  - id: one
    kind: value
    ask: What is it?
    code: |
      x = torch.tensor([1.0, 2.0])
    answer_expr: x.sum().item()
    answer: 3.0
  - id: two
    kind: myth
    claim: Ones are ones.
    proof: |
      y = 1
    holds: y == 1
"""


def test_every_repository_deck_reads_back_equal() -> None:
    decks, problems = loader.load(REPO_CARDS)
    assert not problems and decks
    for deck in decks:
        text = stored.dumps(deck)
        assert text is not None, deck.path
        assert stored.alike(stored.loads(text), deck)


@pytest.mark.parametrize(
    "text",
    [
        "{not json",
        "[]",
        json.dumps({"@": "os:system", "f": ["echo"]}),  # only quizgen's dataclasses are ever made
        json.dumps({"@": "quizgen.cards.model:Deck", "f": ["too few"]}),
        json.dumps({"@": "quizgen.cards.model:Snippet", "f": ["x", "a.yaml", 1]}),  # not a deck
        json.dumps({"@x": 1}),
    ],
)
def test_foreign_or_damaged_text_reads_as_nothing(text: str) -> None:
    assert stored.loads(text) is None


def _memo(tmp_path: Path) -> Memo:
    return Memo(Cache(tmp_path / "cache"))


def _project(tmp_path: Path, text: str) -> tuple[Path, Memo]:
    """A cards folder holding memo.yaml, and an empty memo."""
    cards = tmp_path / "cards"
    cards.mkdir()
    (cards / "memo.yaml").write_text(text)
    memo = _memo(tmp_path)
    return cards, memo


def test_unchanged_file_is_not_parsed_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "cards").mkdir()
    (tmp_path / "cards" / "memo.yaml").write_text(DECK)
    memo = _memo(tmp_path)
    first, problems = loader.load(tmp_path / "cards", memo=memo)
    assert not problems and [c.id for c in first[0].cards] == ["one", "two"]

    def never(*args: object) -> None:
        raise AssertionError("parsed again")

    monkeypatch.setattr(loader, "load_file", never)
    again, problems = loader.load(tmp_path / "cards", memo=memo)
    assert not problems and again == first


def test_a_deck_declaring_a_nan_is_kept_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A NaN read back is never equal to the one written: a deck that declared `answer: [.nan, 0.0]`
    was never kept, and was parsed again on every build (the shipped deck had one in session 9)."""
    (tmp_path / "cards").mkdir()
    (tmp_path / "cards" / "memo.yaml").write_text(DECK.replace("answer: 3.0", "answer: [.nan, 0.0]"))
    memo = _memo(tmp_path)
    first, problems = loader.load(tmp_path / "cards", memo=memo)
    assert not problems

    def never(*args: object) -> None:
        raise AssertionError("parsed again")

    monkeypatch.setattr(loader, "load_file", never)
    again, problems = loader.load(tmp_path / "cards", memo=memo)
    assert not problems and stored.alike(again, first) and again != first  # (NaN != NaN)


def test_alike_is_equality_but_for_nans() -> None:
    nan = float("nan")
    assert stored.alike([1.0, (nan, {"a": nan})], [1.0, (float("nan"), {"a": float("nan")})])
    assert not stored.alike([1.0, nan], [1.0, 2.0])
    assert not stored.alike((1.0,), [1.0])  # (a tuple read back as a list is not the same deck)
    assert not stored.alike({"a": 1}, {"b": 1})
    assert not stored.alike(1, 1.0)


def test_an_edit_or_other_settings_parse_again(tmp_path: Path) -> None:
    cards, memo = _project(tmp_path, DECK)
    loader.load(cards, memo=memo)
    (cards / "memo.yaml").write_text(DECK.replace("    answer: 3.0\n", "    answer: [3.0\n"))
    _, problems = loader.load(cards, memo=memo)
    assert [str(p) for p in problems] == [str(p) for p in loader.load(cards)[1]]
    assert problems and str(problems[0]).startswith(f"{cards / 'memo.yaml'}:")
    (cards / "memo.yaml").write_text(DECK)
    decks, _ = loader.load(cards, memo=memo)
    strict, _ = loader.load(cards, value_answers="typed", memo=memo)
    assert decks[0].cards[0].answers == "choice" and strict[0].cards[0].answers == "typed"


def test_a_file_with_a_problem_is_never_kept(tmp_path: Path) -> None:
    cards, memo = _project(tmp_path, DECK.replace("    claim: Ones are ones.\n", ""))
    kept: list[str] = []
    memo.keep = lambda key, text: kept.append(key)
    _, problems = loader.load(cards, memo=memo)
    assert [p.message for p in problems] == [p.message for p in loader.load(cards)[1]]
    assert problems and kept == []


def test_problems_between_files_are_found_for_recalled_ones(tmp_path: Path) -> None:
    cards, memo = _project(tmp_path, DECK)
    loader.load(cards, memo=memo)
    (cards / "b.yaml").write_text(DECK.replace("deck: Memo", "deck: Other"))  # the same card ids
    _, problems = loader.load(cards, memo=memo)
    assert [str(p) for p in problems] == [str(p) for p in loader.load(cards)[1]]
    assert len(problems) == 2 and "duplicate" in problems[0].message
