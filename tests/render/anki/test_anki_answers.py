"""A float32 answer and an exception answer in a real Anki collection (issue 12): the note's Answer field
and the card's back show `0.9` and the exception's type and message."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from quizgen import pipeline
from quizgen.execution.pool import Pool
from tests.support.anki import build, card_id, collection, import_all, note_of
from tests.support.float_answers import DECK, MESSAGE
from tests.support.projects import write_project


@pytest.fixture(scope="module")
def shown(tmp_path_factory: pytest.TempPathFactory, pool: Pool) -> pipeline.Report:
    return build(write_project(tmp_path_factory.mktemp("anki-shown"), {"shown.yaml": DECK}), pool=pool)


def test_anki_shows_the_float32_answer_as_0_9_and_the_exception_s_message(
    shown: pipeline.Report, tmp_path: Path
) -> None:
    with collection(tmp_path) as col:
        import_all(col, shown)
        assert col.get_note(note_of(col, "float32-answer"))["Answer"] == "0.9"
        assert col.get_note(note_of(col, "exception-answer"))["Answer"] == MESSAGE
        backs = {}
        for cid in col.find_cards('"deck:Answers Shown"'):
            card = col.get_card(cid)
            body = re.sub(r"<style>.*?</style>|<script.*?</script>", "", card.answer(), flags=re.S)
            backs[card_id(shown, card.note())] = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", body))
    assert "Answer 0.9 " in backs["float32-answer"] and "A float32 0.9 is 0.9." in backs["float32-answer"]
    assert f"Answer {MESSAGE}" in backs["exception-answer"]
