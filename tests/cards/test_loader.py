"""The loader: cards with every field's line, and every mistake reported at once with its location."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from quizgen.cards.loader import load_project
from quizgen.errors import CardErrors, UsageError
from quizgen.kinds.myth import MythCard
from quizgen.kinds.order import OrderCard
from quizgen.kinds.value import ValueCard
from tests.support.projects import SAMPLE_DECK


def errors_of(root: Path) -> list[str]:
    with pytest.raises(CardErrors) as info:
        load_project(root / "cards")
    return [str(p) for p in info.value.problems]


def test_sample_deck_loads_with_lines(project: Callable[..., Path]) -> None:
    root = project({"sample.yaml": SAMPLE_DECK})
    [deck] = load_project(root / "cards")
    assert deck.name == "Sample::Gradients"
    assert deck.tags == ["sample"]
    assert deck.setup is not None and deck.setup.line == 5
    assert [c.kind for c in deck.cards] == ["value"] * 4 + ["myth", "order", "basic"]
    value = deck.cards[0]
    assert isinstance(value, ValueCard)
    assert value.code is not None and value.code.line == 12  # the line after `code: |`
    assert value.code.code.startswith("w = torch.tensor(2.0")
    assert value.answer_expr is not None and value.answer_expr.line == 15
    assert value.declared is not None and value.declared.value == 8.0
    assert value.declared.location.line == 16
    shape = deck.cards[2]
    assert isinstance(shape, ValueCard) and shape.declared is not None
    assert shape.declared.value == {"shape": [2, 3]}
    myth = deck.cards[4]
    assert isinstance(myth, MythCard) and myth.verdict is False
    order = deck.cards[5]
    assert isinstance(order, OrderCard)
    assert order.repeat == 2
    assert order.lines[0].code == "opt.zero_grad()"
    assert order.lines[0].line == order.lines[1].line - 1


def test_every_error_is_reported_at_once_with_its_location(project: Callable[..., Path]) -> None:
    root = project(
        {
            "a.yaml": """\
            deck: A
            cards:
              - id: first
                kind: value
                ask: "?"
                code: |
                  x = 1
                  y = (
                answer_expr: x
              - id: second
                kind: myth
                claim: c
                verdict: maybe
                proof: assert True
                holds: "True"
                explian: typo
              - id: Bad_Id
                kind: basic
                front: f
                back: b
              - id: fourth
                kind: puzzle
            """,
        }
    )
    errors = errors_of(root)
    cards_a = str(root / "cards" / "a.yaml")
    assert errors[0].startswith(f"{cards_a}:8:") and "card 'first' -> code: Python syntax error" in errors[0]
    assert f"{cards_a}:13:" in errors[1] and "card 'second' -> verdict: verdict is true or false" in errors[1]
    assert f"{cards_a}:16:" in errors[2] and "unknown key 'explian'; did you mean 'explain'?" in errors[2]
    assert f"{cards_a}:17:" in errors[3] and "card 'Bad_Id' -> id: an id is a slug" in errors[3]
    assert f"{cards_a}:22:" in errors[4] and "unknown kind 'puzzle'" in errors[4]
    assert len(errors) == 5


def test_duplicate_ids_name_both_places(project: Callable[..., Path]) -> None:
    card = """\
    deck: {deck}
    cards:
      - id: same
        kind: basic
        front: f
        back: b
    """
    root = project({"a.yaml": card.format(deck="A"), "b.yaml": card.format(deck="B")})
    [error] = errors_of(root)
    a, b = root / "cards" / "a.yaml", root / "cards" / "b.yaml"
    assert (
        error
        == f"{b}:3:9: card 'same' -> id: duplicate id 'same' (first defined at {a}:3:9: card 'same' -> id)"
    )


def test_duplicate_deck_names_and_keys(project: Callable[..., Path]) -> None:
    card = """\
    deck: Same::Deck
    cards:
      - id: {id}
        kind: basic
        front: f
        front: g
        back: b
    """
    root = project({"a.yaml": card.format(id="one"), "b.yaml": card.format(id="two")})
    errors = errors_of(root)
    assert any("duplicate key 'front' (first on line 5)" in e for e in errors)


def test_invalid_yaml_names_line_and_column(project: Callable[..., Path]) -> None:
    root = project({"bad.yaml": "deck: A\ncards:\n  - id: x\n   kind: [\n"})
    [error] = errors_of(root)
    assert error.startswith(f"{root / 'cards' / 'bad.yaml'}:4:")
    assert "invalid YAML" in error


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (
            "kind: value\n    ask: q\n    code: x = 1\n    answer_expr: x\n    answer: {size: 3}",
            "{shape: [ints]}",
        ),
        (
            "kind: value\n    ask: q\n    code: x = 1\n    answer: 1",
            "without 'answer_expr' the snippet must raise",
        ),
        ("kind: value\n    ask: q\n    code: x = 1\n    answer_expr: x +", "Python syntax error"),
        (
            "kind: value\n    ask: q\n    code: x = 1\n    answer_expr: x\n    tolerance: {rtol: -1}",
            "rtol must be",
        ),
        ("kind: myth\n    claim: c\n    proof: print(1)", "missing required field 'holds'"),
        ("kind: order\n    lines: [a = 1]\n    check: assert a", "at least 2 lines"),
        ("kind: order\n    lines: [a = 1, a = 1]\n    check: assert a", "appears twice"),
        (
            "kind: order\n    lines: [a = 1, b = 2]\n    repeat: 0\n    check: assert a",
            "repeat is a whole number",
        ),
        ("kind: basic\n    front: f", "missing required field 'back'"),
        ("kind: basic\n    front: f\n    back: b\n    tags: [two words]", "a tag is one word"),
    ],
)
def test_field_errors(project: Callable[..., Path], body: str, message: str) -> None:
    root = project({"d.yaml": f"deck: D\ncards:\n  - id: c\n    {body}\n"})
    errors = errors_of(root)
    assert any(message in e and "card 'c'" in e for e in errors), errors


def test_file_level_errors(project: Callable[..., Path]) -> None:
    root = project({"a.yaml": "", "b.yaml": "- just a list", "c.yaml": "deck: C\ncards: []\n"})
    errors = errors_of(root)
    assert "empty card file" in errors[0]
    assert "a card file is a mapping" in errors[1]
    assert "the deck has no cards" in errors[2]


def test_missing_folder_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError):
        load_project(tmp_path / "nope")
    (tmp_path / "empty").mkdir()
    with pytest.raises(UsageError, match="no card files"):
        load_project(tmp_path / "empty")


def test_a_card_without_id_or_kind_is_reported_once_each(project: Callable[..., Path]) -> None:
    root = project({"a.yaml": "deck: A\ncards:\n  - kind: basic\n    front: f\n    back: b\n  - front: f\n"})
    errors = errors_of(root)
    path = root / "cards" / "a.yaml"
    assert errors == [
        f"{path}:3:5: missing required field 'id'",
        f"{path}:6:5: missing required field 'id'",
        f"{path}:6:5 -> kind: card has no 'kind' (one of value, myth, order, basic)",
    ]
