"""The note types' ids and fields are frozen: a change fails here instead of silently breaking updates."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from quizgen import kinds, pipeline
from quizgen.errors import QuizgenError
from quizgen.execution.pool import Pool
from quizgen.project import lock
from quizgen.render.anki import notetypes as anki_notetypes
from tests.support.anki import EXPECTED, build, collection, counts, import_all
from tests.support.projects import copy_project

# Never edit these to make a test pass: Anki matches note types by id, and a different field list under
# the same id makes it skip every existing note on re-import (see the test below). New content goes
# into Extra1..3; a new layout gets a new model id and name.
FROZEN_IDS = {"value": 1700983602, "myth": 2087942418, "order": 1408162270, "basic": 1714263088}
FROZEN_FIELDS = {
    "value": [
        "Id", "Question", "Code", "Answer", "Judge", "Explain", "Output", "Torch", "Setup", "Source",
        "Extra1", "Extra2", "Extra3",
    ],
    "myth": [
        "Id", "Claim", "Verdict", "Judge", "Explain", "Proof", "Output", "Torch", "Setup", "Source",
        "Extra1", "Extra2", "Extra3",
    ],
    "order": [
        "Id", "Question", "Lines", "Judge", "Accepted", "Solution", "Explain", "Output", "Torch", "Setup",
        "Source", "Extra1", "Extra2", "Extra3",
    ],
    "basic": [
        "Id", "Front", "Back", "Code", "Output", "Explain", "Torch", "Setup", "Source",
        "Extra1", "Extra2", "Extra3",
    ],
}  # fmt: skip


def test_model_ids_are_frozen() -> None:
    assert {k.name: k.anki_model_id for k in kinds.all_kinds()} == FROZEN_IDS


def test_field_lists_are_frozen() -> None:
    assert {k.name: list(k.anki_fields) for k in kinds.all_kinds()} == FROZEN_FIELDS


def test_the_built_note_types_have_the_frozen_fields() -> None:
    for kind in kinds.names():
        model = anki_notetypes.model(kind, mod=1)
        assert model.model_id == FROZEN_IDS[kind]
        assert [f["name"] for f in model.fields] == FROZEN_FIELDS[kind]


def test_templates_use_only_their_own_fields_and_the_media_script() -> None:
    js, _ = anki_notetypes.media_js()
    for kind in kinds.names():
        front, back = anki_notetypes.templates(kind)
        used = set(re.findall(r"\{\{[#/^]?([^}]+)\}\}", front + back)) - {"FrontSide"}
        assert used <= set(FROZEN_FIELDS[kind]), kind
        assert anki_notetypes.JS_PLACEHOLDER not in front + back
        if kind != "basic":
            assert front.rstrip().endswith(f'<script src="{js}"></script>')
            assert back.rstrip().endswith(f'<script src="{js}"></script>')
            assert back.lstrip().startswith('<div class="qg-back-side" hidden></div>\n{{FrontSide}}')


def test_anki_skips_every_note_when_a_field_list_changes(
    anki_build: pipeline.Report, tmp_path: Path, pool: Pool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Why the fields are frozen: Anki imports the changed type as a new one and skips the notes."""
    root = copy_project(anki_build, tmp_path / "project")
    (root / "cards" / lock.LOCK_NAME).unlink()  # as if someone also thought to reset the lock
    value = kinds.get("value")
    monkeypatch.setattr(value, "anki_fields", (*value.anki_fields, "Extra4"))
    changed = build(root, pool=pool)
    with collection(tmp_path / "anki") as col:
        import_all(col, anki_build)
        logs = counts(import_all(col, changed))
        values = sum(1 for card_id in EXPECTED if card_id.startswith("value-"))
        assert logs["conflicting"] == values  # every value note: skipped, left as it was
        extended = [nt for nt in col.models.all() if "Extra4" in [f["name"] for f in nt["flds"]]]
        assert len(extended) == 1 and extended[0]["id"] != FROZEN_IDS["value"]  # a second, unused type


def test_the_build_refuses_a_changed_field_list(
    anki_build: pipeline.Report, tmp_path: Path, pool: Pool, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = copy_project(anki_build, tmp_path / "project")
    before = (root / "build" / "anki" / "Sample__Gradients.apkg").read_bytes()
    myth = kinds.get("myth")
    monkeypatch.setattr(myth, "anki_fields", tuple(f for f in myth.anki_fields if f != "Extra3"))
    with pytest.raises(QuizgenError, match="note type 'quizgen myth' changed its fields"):
        build(root, pool=pool)
    assert (root / "build" / "anki" / "Sample__Gradients.apkg").read_bytes() == before
