"""The lock: note times move only for cards whose note changed, and always forward."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from quizgen.errors import QuizgenError
from quizgen.project import lock
from quizgen.project.lock import CardEntry, Lock, NoteState, NotetypeState
from quizgen.render import anki
from quizgen.render.stage import Stage

TYPES = {"1": NotetypeState("quizgen value", "t1", ("Id", "Question"))}


def notes(**hashes: str) -> dict[str, NoteState]:
    return {k.replace("_", "-"): NoteState(h, "Deck") for k, h in hashes.items()}


def test_a_first_build_stamps_every_card_and_type_now() -> None:
    new, changes = lock.update(Lock(), notes(a="h1", b="h2"), TYPES, now=100)
    assert new.cards == {"a": CardEntry("h1", "Deck", 100, 100), "b": CardEntry("h2", "Deck", 100, 100)}
    assert new.notetypes["1"].mod == 100 and new.notetypes["1"].fields == ["Id", "Question"]
    assert changes.added == ["a", "b"] and not changes.changed
    assert changes.new_notetypes == ["quizgen value"] and changes.notetypes == []  # new, not "changed"


def test_unchanged_cards_keep_their_times_and_changed_ones_move_forward() -> None:
    old, _ = lock.update(Lock(), notes(a="h1", b="h2"), TYPES, now=100)
    new, changes = lock.update(old, notes(a="h1", b="h2-edited"), TYPES, now=200)
    assert new.cards["a"] == old.cards["a"]
    assert new.cards["b"] == CardEntry("h2-edited", "Deck", added=100, mod=200)
    assert changes.changed == ["b"] and not changes.added and not changes.notetypes


def test_a_change_within_the_same_second_or_with_a_clock_behind_still_moves_forward() -> None:
    old, _ = lock.update(Lock(), notes(a="h1"), TYPES, now=100)
    same, _ = lock.update(old, notes(a="h2"), TYPES, now=100)
    assert same.cards["a"].mod == 101
    behind, _ = lock.update(same, notes(a="h3"), TYPES, now=50)
    assert behind.cards["a"].mod == 102


def test_reverting_an_edit_is_a_change_too() -> None:
    first, _ = lock.update(Lock(), notes(a="h1"), TYPES, now=100)
    edited, _ = lock.update(first, notes(a="h2"), TYPES, now=200)
    reverted, changes = lock.update(edited, notes(a="h1"), TYPES, now=300)
    assert reverted.cards["a"].mod == 300 and changes.changed == ["a"]


def test_removed_cards_are_reported_once_and_kept_for_reference() -> None:
    old, _ = lock.update(Lock(), notes(a="h1", b="h2"), TYPES, now=100)
    new, changes = lock.update(old, notes(a="h1"), TYPES, now=200)
    assert changes.removed == ["b"] and "b" not in new.cards
    assert new.removed["b"].deck == "Deck" and new.removed["b"].removed == 200
    later, changes = lock.update(new, notes(a="h1"), TYPES, now=300)
    assert not changes.removed and later.removed == new.removed
    back, changes = lock.update(later, notes(a="h1", b="h2"), TYPES, now=400)
    assert changes.added == ["b"] and not back.removed


def test_a_card_in_another_deck_is_reported_as_moved() -> None:
    old, _ = lock.update(Lock(), notes(a="h1"), TYPES, now=100)
    new, changes = lock.update(old, {"a": NoteState("h1", "Other")}, TYPES, now=200)
    assert changes.moved == [("a", "Deck", "Other")]
    assert new.cards["a"].deck == "Other" and new.cards["a"].mod == 100


def test_a_note_type_with_other_fields_is_flagged() -> None:
    old, _ = lock.update(Lock(), notes(a="h1"), TYPES, now=100)
    types = {"1": NotetypeState("quizgen value", "t2", ("Id", "Question", "Extra"))}
    _, changes = lock.update(old, notes(a="h1"), types, now=200)
    assert changes.refielded == [("quizgen value", ["Id", "Question"], ["Id", "Question", "Extra"])]


def test_a_changed_template_moves_the_note_type_time() -> None:
    old, _ = lock.update(Lock(), notes(a="h1"), TYPES, now=100)
    types = {"1": NotetypeState("quizgen value", "t2", ("Id", "Question"))}
    new, changes = lock.update(old, notes(a="h1"), types, now=100)
    assert new.notetypes["1"].mod == 101 and changes.notetypes == ["quizgen value"] and not changes.refielded


def test_the_file_round_trips_and_is_written_only_when_it_changes(tmp_path: Path) -> None:
    path = tmp_path / lock.LOCK_NAME
    assert lock.read(path) == Lock()
    new, _ = lock.update(Lock(), notes(a="h1"), TYPES, now=100)
    stage = Stage()
    assert lock.stage(path, new, stage) is True
    stage.commit()
    assert lock.read(path) == new
    assert lock.stage(path, new, stage) is False
    assert path.read_text().endswith("}\n") and '"format": 1' in path.read_text()


@pytest.mark.parametrize(
    "text",
    [
        "{ not json",
        '{"format": 99}',
        '{"format": 1, "cards": {"a": {"hash": 1}}}',
        '{"format": 1, "cards": {"a": {"hash": "h", "deck": "D", "added": 1, "mod": "soon"}}}',
        "[]",
        '{"format": 1, "torch": ' + "[" * 100_000 + "]" * 100_000 + "}",  # deeper than Python recurses
    ],
)
def test_a_damaged_lock_is_a_clear_error(tmp_path: Path, text: str) -> None:
    path = tmp_path / lock.LOCK_NAME
    path.write_text(text)
    with pytest.raises(QuizgenError, match="not a quizgen lock file"):
        lock.read(path)


def test_note_ids_follow_the_time_cards_were_first_built_and_never_collide() -> None:
    entries = {
        "b": CardEntry("h", "D", added=100, mod=100),
        "a": CardEntry("h", "D", added=100, mod=100),
        "c": CardEntry("h", "D", added=50, mod=300),
    }
    assert anki.note_ids(entries) == {"c": 50_000, "a": 100_000, "b": 100_001}


def test_an_edit_reverted_since_the_last_commit_takes_the_committed_entry_back() -> None:
    committed, _ = lock.update(Lock(), notes(a="h1", b="h2"), TYPES, now=100)
    edited, _ = lock.update(committed, notes(a="h1-edited", b="h2"), TYPES, now=200, committed=committed)
    assert edited.cards["a"] == CardEntry("h1-edited", "Deck", added=100, mod=200)
    reverted, changes = lock.update(edited, notes(a="h1", b="h2"), TYPES, now=300, committed=committed)
    assert reverted == committed and changes.changed == ["a"]  # Anki's copy from the last build changes
    # Edited again after a commit of the edit: a change like any other, its time moves forward.
    again, _ = lock.update(edited, notes(a="h1", b="h2"), TYPES, now=300, committed=edited)
    assert again.cards["a"] == CardEntry("h1", "Deck", added=100, mod=300)


def test_a_card_added_and_removed_since_the_last_commit_leaves_no_trace() -> None:
    committed, _ = lock.update(Lock(), notes(a="h1"), TYPES, now=100)
    added, _ = lock.update(committed, notes(a="h1", b="h2"), TYPES, now=200, committed=committed)
    back, changes = lock.update(added, notes(a="h1"), TYPES, now=300, committed=committed)
    assert back == committed and changes.removed == ["b"]
    gone, _ = lock.update(committed, notes(), TYPES, now=400, committed=committed)
    assert gone.removed["a"].removed == 400  # a committed card's removal is recorded
    kept, _ = lock.update(gone, notes(), TYPES, now=500, committed=gone)
    assert kept == gone


def test_the_committed_lock_is_read_from_git(tmp_path: Path) -> None:
    path = tmp_path / "cards" / lock.LOCK_NAME
    path.parent.mkdir()
    assert lock.committed(path) is None  # no repository
    first, _ = lock.update(Lock(), notes(a="h1"), TYPES, now=100)
    path.write_text(lock.dumps(first))
    git = ["git", "-C", str(tmp_path), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], check=True)
    assert lock.committed(path) is None  # no commit yet
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-qm", "cards"], check=True)
    edited, _ = lock.update(first, notes(a="h2"), TYPES, now=200)
    path.write_text(lock.dumps(edited))
    assert lock.committed(path) == first
