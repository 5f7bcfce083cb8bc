"""A card kind is one module behind the registry: a fifth kind, defined here in the test, loads, runs,
verifies, and builds to every output (cards.json, the schema, a real Anki collection, the quiz page)
without a change anywhere else in quizgen."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar, cast

import pytest

from quizgen import kinds, pipeline
from quizgen.cards.fields import Field
from quizgen.cards.model import Card, Deck, Snippet, VerifiedCard
from quizgen.cards.reader import Reader
from quizgen.errors import CardErrors, Problem
from quizgen.execution.protocol import Job, Outcome
from quizgen.kinds.base import CardKind, setup_jobs
from quizgen.render.markup import markdown
from quizgen.render.view import CardView
from tests.support.projects import SAMPLE_DECK
from tests.support.quiz import as_shown


@dataclass
class CountCard(Card):
    ask: str = ""
    code: Snippet | None = None
    lines: int = 0


class CountKind(CardKind[CountCard]):
    """How many lines does the snippet print? (Checked against `lines:`.)"""

    name = "count"
    title = "Count the lines"
    anki_model_id = 1999999999
    anki_fields = ("Id", "Ask", "Code", "Output", "Explain", "Torch", "Setup", "Source", "Extra1")
    fields: ClassVar[dict[str, Field]] = {
        "ask": Field("markdown", True, "The question."),
        "code": Field("code", True, "Prints some lines."),
        "lines": Field("repeat", True, "How many lines it prints."),
    }

    def parse(self, reader: Reader, common: Card) -> CountCard:
        card = CountCard(**vars(common))
        card.ask = reader.text("ask")
        card.code = reader.code("code")
        card.lines = reader.integer("lines", 1, 100, default=1)
        return card

    def job(self, deck: Deck, card: Card) -> Job | None:
        code = cast(CountCard, card).code
        return {"type": "run", "setup": setup_jobs(deck), "code": code.to_job()} if code else None

    def verify(self, card: Card, outcome: Outcome) -> list[Problem]:
        card = cast(CountCard, card)
        printed = len(outcome.output.splitlines())
        if printed != card.lines:
            return [Problem(card.at("lines"), f"declared {card.lines} lines but the code prints {printed}")]
        return []

    def view(self, vc: VerifiedCard, view: CardView) -> None:
        card = cast(CountCard, vc.card)
        view.prompt_html = markdown(card.ask)
        view.code = card.code.code if card.code else ""
        view.answer_text = str(card.lines)

    def note_fields(self, vc: VerifiedCard, view: CardView) -> dict[str, str]:
        return {"Ask": view.prompt_html, "Code": view.code_html}

    def anki_templates(self) -> tuple[str, str]:
        return ('<div class="count">{{Ask}}</div>{{Code}}', "{{FrontSide}}<hr id=answer>{{Output}}")


QUIZ_TEMPLATE = """\
{% macro ask(card) %}<button type="button" class="reveal">Show answer</button>{% endmacro %}
{% macro answer(card) %}<p class="count-answer">{{ card.answer_text }} lines</p>{% endmacro %}
{% macro proof(card) %}{% endmacro %}
"""

COUNT_DECK = """\
deck: Counting
setup: |
  import torch
cards:
  - id: count-prints
    kind: count
    ask: "How many lines does this print?"
    code: |
      for k in range(3):
          print(torch.tensor(k))
    lines: 3
    explain: "It printed {{output}}."
"""


@pytest.fixture
def count_kind() -> Iterator[CardKind[CountCard]]:
    kind = kinds.register(CountKind())
    try:
        yield kind
    finally:
        kinds.unregister(kind.name)


def test_a_registered_kind_builds_to_every_output(
    count_kind: CardKind[CountCard],
    project: Callable[..., Path],
    options: Callable[..., pipeline.Options],
    tmp_path: Path,
) -> None:
    root = project({"count.yaml": COUNT_DECK, "sample.yaml": SAMPLE_DECK})
    (root / "templates" / "quiz" / "kinds").mkdir(parents=True)
    (root / "templates" / "quiz" / "kinds" / "count.html").write_text(QUIZ_TEMPLATE)
    report = pipeline.build(options(root))

    data = json.loads((root / "build" / "cards.json").read_text())
    [card] = [c for d in data["decks"] for c in d["cards"] if c["kind"] == "count"]
    assert card["outcome"]["output"] == "tensor(0)\ntensor(1)\ntensor(2)\n"
    assert card["explain"] == "It printed tensor(0)\ntensor(1)\ntensor(2)."

    schema = json.loads((root / "build" / "quizgen.schema.json").read_text())
    kinds_in_schema = [
        c["properties"]["kind"]["const"] for c in schema["properties"]["cards"]["items"]["oneOf"]
    ]
    assert "count" in kinds_in_schema

    page = as_shown(next((root / "build" / "quiz" / "decks").glob("*ounting*.html")).read_text())
    assert "How many lines does this print?" in page and "3 lines" in page

    from quizgen.render.view import card_key
    from tests.support.anki import collection, import_all

    with collection(tmp_path / "anki") as col:
        import_all(col, report)
        [nid] = col.find_notes(f"Id:{card_key('count-prints')}")
        note = col.get_note(nid)
        assert note.note_type()["name"] == "quizgen count"  # type: ignore[index]
        assert "How many lines does this print?" in note["Ask"]
        assert "tensor(2)" in note["Output"]


def test_a_registered_kind_is_verified_like_the_others(
    count_kind: CardKind[CountCard], project: Callable[..., Path], options: Callable[..., pipeline.Options]
) -> None:
    root = project({"count.yaml": COUNT_DECK.replace("lines: 3", "lines: 2")})
    with pytest.raises(CardErrors) as info:
        pipeline.check(options(root))
    assert [str(p) for p in info.value.problems] == [
        f"{root / 'cards' / 'count.yaml'}:11:12: card 'count-prints' -> lines: "
        "declared 2 lines but the code prints 3"
    ]


def test_an_unregistered_kind_is_an_unknown_kind(
    project: Callable[..., Path], options: Callable[..., pipeline.Options]
) -> None:
    root = project({"count.yaml": COUNT_DECK})
    with pytest.raises(CardErrors) as info:
        pipeline.check(options(root))
    [error] = [str(p) for p in info.value.problems]
    assert error.endswith(
        "card 'count-prints' -> kind: unknown kind 'count'; allowed: value, myth, order, basic"
    )
