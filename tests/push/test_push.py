"""quizgen push with Anki closed: straight into a real collection (Anki's library), reviews kept."""

from __future__ import annotations

import sqlite3
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from quizgen import pipeline
from quizgen.cli import cli
from quizgen.errors import PushError
from quizgen.execution.pool import Pool
from quizgen.push import push
from quizgen.push.packages import read
from quizgen.render.view import card_key
from tests.support.anki import EXPECTED, NAMES, build, collection, held_open, note_of, review
from tests.support.projects import copy_project

EDIT = ("Gradients add up: 3.0 + 5.0 = 8.0.", "Gradients accumulate: 3.0 + 5.0 = 8.0.")


def edit(root: Path, old: str, new: str) -> None:
    path = root / "cards" / "sample.yaml"
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))


def history(path: Path) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    """Every review logged and every card's scheduling, read from the collection file itself."""
    db = sqlite3.connect(path)
    try:
        revlog = db.execute("SELECT * FROM revlog ORDER BY id").fetchall()
        cards = db.execute(
            "SELECT id, nid, did, type, queue, due, ivl, factor, reps, lapses FROM cards"
        ).fetchall()
    finally:
        db.close()
    return revlog, sorted(cards)


def test_a_package_reads_back_as_built(anki_build: pipeline.Report) -> None:
    (sample,) = [read(p) for p in anki_build.written if p.name == "Sample__Gradients.apkg"]
    assert sample.deck == "Sample::Gradients"
    assert [n.card_id for n in sample.notes] == [
        card_key(k) for k, v in EXPECTED.items() if v[0] == sample.deck
    ]
    assert {nt.name for nt in sample.notetypes.values()} == {
        "quizgen value",
        "quizgen myth",
        "quizgen order",
        "quizgen basic",
    }
    assert [name for name in sample.media if name.startswith("_quizgen-anki-")]


def test_push_into_a_collection_keeps_reviews_and_updates_only_the_edited_note(
    anki_build: pipeline.Report, tmp_path: Path, pool: Pool
) -> None:
    root = copy_project(anki_build, tmp_path / "project")
    path = tmp_path / "anki" / "collection.anki2"
    with collection(path.parent):
        pass  # a learner's collection, empty
    first = push(anki_build.written, None, path, "", NAMES)
    assert sum(len(d.added) for d in first.decks) == len(EXPECTED)
    with collection(path.parent) as col:
        nid = note_of(col, "value-two-steps")
        reviewed = [review(col, "value-two-steps"), review(col, "value-braces", "Sample::Gradients::Tricky")]
        others = {cid: col.get_card(cid).note().mod for cid in col.find_cards("")}
    before = history(path)
    assert len(before[0]) >= 2

    edit(root, *EDIT)
    pushed = push(build(root, pool=pool).written, None, path, "", NAMES)
    assert [(d.deck, d.added, d.updated, len(d.left)) for d in pushed.decks] == [
        ("Sample::Gradients", [], ["value-two-steps"], 6),
        ("Sample::Gradients::Tricky", [], [], 2),
    ]
    assert history(path) == before  # every review and every card's scheduling as they were
    with collection(path.parent) as col:
        assert "Gradients accumulate" in col.get_note(nid)["Explain"]
        assert col.note_count() == len(EXPECTED)
        untouched = {
            cid: col.get_card(cid).note().mod for cid in col.find_cards(f"-Id:{card_key('value-two-steps')}")
        }
        assert untouched == {c: m for c, m in others.items() if c in untouched}
        assert set(reviewed) <= set(col.find_cards(""))
    assert pushed.lines()[-1] == f"pushed into {path}: 0 added, 1 updated, 8 left as they were"


def test_push_by_profile_name_and_the_command_reports(
    anki_build: pipeline.Report, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANKI_BASE", str(tmp_path / "Anki2"))
    with collection(tmp_path / "Anki2" / "User 1"):
        pass
    root = copy_project(anki_build, tmp_path / "project")
    result = CliRunner().invoke(
        cli,
        [
            "push",
            "--profile",
            "User 1",
            "--cards",
            str(root / "cards"),
            "--out",
            str(root / "build"),
            "-j",
            "1",
        ],
    )
    assert result.exit_code == 0, result.output
    where = tmp_path / "Anki2" / "User 1" / "collection.anki2"
    assert result.output.splitlines()[-3:] == [
        "Sample::Gradients: 7 added, 0 updated, 0 left as they were",
        "Sample::Gradients::Tricky: 2 added, 0 updated, 0 left as they were",
        f"pushed into {where}: 9 added, 0 updated, 0 left as they were",
    ]
    with pytest.raises(PushError, match=r"no Anki profile 'Nobody' \(the profiles there: User 1;"):
        push(anki_build.written, "Nobody", None, "")


@pytest.mark.parametrize("where", ["this process", "another process"])
def test_a_collection_open_in_anki_is_refused(
    anki_build: pipeline.Report, tmp_path: Path, where: str
) -> None:
    path = tmp_path / "collection.anki2"
    with collection(tmp_path):
        pass
    with ExitStack() as stack:
        if where == "this process":
            col = stack.enter_context(collection(tmp_path))
            col.db.scalar("select count() from notes")
        else:
            stack.enter_context(held_open(tmp_path))
        with pytest.raises(PushError) as caught:
            push(anki_build.written, None, path, "", NAMES)
    assert caught.value.message == (
        f"{path}: the collection is open in Anki (locked): close Anki and push "
        "again, or leave --profile/--collection out to push into the running Anki through AnkiConnect"
    )
    assert history(path) == ([], [])


def test_a_missing_collection_is_not_created(anki_build: pipeline.Report, tmp_path: Path) -> None:
    with pytest.raises(PushError, match="no Anki collection there"):
        push(anki_build.written, None, tmp_path / "collection.anki2", "")
    assert not (tmp_path / "collection.anki2").exists()


def test_a_note_type_changed_by_hand_stops_the_push_before_anything_is_written(
    anki_build: pipeline.Report, tmp_path: Path
) -> None:
    path = tmp_path / "collection.anki2"
    with collection(tmp_path):
        pass
    push(anki_build.written, None, path, "", NAMES)
    with collection(tmp_path) as col:
        notetype = col.models.by_name("quizgen value")
        col.models.add_field(notetype, col.models.new_field("Mine"))
        col.models.update_dict(notetype)
    before = history(path)
    with pytest.raises(PushError) as caught:
        push(anki_build.written, None, path, "", NAMES)
    assert caught.value.message.startswith(
        f"{path}: note type 'quizgen value' was changed by hand (fields Id, Question, Code, Answer, Judge, "
        "Explain, Output, Torch, Setup, Source, Extra1, Extra2, Extra3, Mine; 1 card type(s)): quizgen can "
        "no longer update its notes. In Anki's Tools -> Manage Note Types, give it back the fields Id, "
    )
    assert history(path) == before
