"""Anki decks against the real Anki backend: clean imports, updates in place, review history kept."""

from __future__ import annotations

import errno
import hashlib
import html
import json
import os
import re
import shutil
import tempfile
import time
import zipfile
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from quizgen import pipeline
from quizgen.cards.model import Deck
from quizgen.cli import cli
from quizgen.errors import CardErrors, OutputError
from quizgen.execution.pool import Pool
from quizgen.project import lock, state
from quizgen.render import anki
from quizgen.render.anki import notetypes as anki_notetypes
from quizgen.render.anki import package as anki_package
from quizgen.render.reuse import Reuse
from quizgen.render.view import card_key
from tests.support.anki import EXPECTED, build, collection, counts, import_all, note_of, review
from tests.support.anki import card_id as card_id_of
from tests.support.projects import SAMPLE_DECK, copy_project, write_project


def apkgs(report: pipeline.Report) -> list[Path]:
    return sorted(p for p in report.written if p.suffix == ".apkg")


def digests(paths: list[Path]) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in paths}


def text_of(rendered: str) -> str:
    """What a learner reads: the rendered HTML without style, scripts and tags, entities decoded."""
    body = re.sub(r"<style>.*?</style>|<script.*?</script>", "", rendered, flags=re.S)
    return html.unescape(re.sub(r"<[^>]+>", "", body))


def edit(root: Path, old: str, new: str, file: str = "sample.yaml") -> None:
    path = root / "cards" / file
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))


# -- 1. import ------------------------------------------------------------------------------------


def test_one_apkg_per_deck_named_after_it(anki_build: pipeline.Report) -> None:
    assert [p.name for p in apkgs(anki_build)] == ["Sample__Gradients.apkg", "Sample__Gradients__Tricky.apkg"]


def test_import_puts_every_card_in_its_deck_with_its_tags(
    anki_build: pipeline.Report, tmp_path: Path
) -> None:
    with collection(tmp_path) as col:
        assert counts(import_all(col, anki_build))["new"] == len(EXPECTED)
        found = {}
        for cid in col.find_cards("deck:Sample"):
            card = col.get_card(cid)
            note = card.note()
            found[card_id_of(anki_build, note)] = (col.decks.name(card.did), sorted(note.tags))
        assert found == EXPECTED
        # `::` made a real hierarchy: the sub-deck is a child of the sample deck
        parent = col.decks.by_name("Sample::Gradients")
        assert parent is not None
        assert [name for name, _ in col.decks.children(parent["id"])] == ["Sample::Gradients::Tricky"]


PLAIN_PYTHON = ("basic-why-accumulate", "value-braces")  # their code uses no torch: they do not claim it


def test_every_card_renders_question_and_answer(anki_build: pipeline.Report, tmp_path: Path) -> None:
    expected_back = {
        "value-two-steps": ["8.0", "Gradients add up", "verified with torch"],
        "value-grad-none": ["None"],
        "value-shape": ["torch.Size([2, 3])"],
        "value-raises": ["raises RuntimeError"],
        "myth-zero-grad-zeros": ["The claim is False", "sets them to None", "assert w.grad is None"],
        "order-train-step": ["The answer, as code", "may also go after line 2 or 4", "3 accepted"],
        "basic-why-accumulate": ["micro-batches", 'print("accumulate")', "accumulate"],
        "value-braces": ["{'{{a}}': {'b': [1, 2]}}", "Braces {{ }} are text: {{FrontSide}}."],
        "value-list": ["tensor([2., 4., 6.])"],
    }
    with collection(tmp_path) as col:
        import_all(col, anki_build)
        for cid in col.find_cards("deck:Sample"):
            card = col.get_card(cid)
            card_id = card_id_of(anki_build, card.note())
            question, answer = text_of(card.question()), text_of(card.answer())
            assert question.strip(), card_id
            assert question.strip() in answer, f"{card_id}: the back shows the front"
            for snippet in expected_back[card_id]:
                assert snippet in answer, f"{card_id}: {snippet!r} not on the back"
            assert not card.question_av_tags() and not card.answer_av_tags(), "no [sound:] was played"
            verified = re.search(r"verified with torch \d+\.\d+\b", answer) is not None
            assert verified == (card_id not in PLAIN_PYTHON), card_id


def test_braces_and_sound_tags_stay_text(anki_build: pipeline.Report, tmp_path: Path) -> None:
    with collection(tmp_path) as col:
        import_all(col, anki_build)
        card = col.get_card(col.find_cards(f"Id:{card_key('value-braces')}")[0])
        question = text_of(card.question())
        assert "d['{{a}}']['b']" in question
        assert "Text with {{Question}} and [sound:boom.mp3] stays text." in question
        assert "value-braces" not in question, "{{Question}} in the text was not filled in by Anki"


def test_code_is_highlighted_with_light_and_night_palettes(
    anki_build: pipeline.Report, tmp_path: Path
) -> None:
    with collection(tmp_path) as col:
        import_all(col, anki_build)
        card = col.get_card(col.find_cards(f"Id:{card_key('value-two-steps')}")[0])
        rendered = card.question()
        assert '<pre class="highlight"><code><span class="n">w</span>' in rendered
        css = card.note_type()["css"]
        assert ".highlight .k {" in css and ".nightMode .highlight .k," in css
        assert "http://" not in rendered + css and "https://" not in rendered + css, "no network, no CDN"


def test_media_script_is_shipped_under_a_hashed_underscore_name(
    anki_build: pipeline.Report, tmp_path: Path
) -> None:
    with collection(tmp_path) as col:
        import_all(col, anki_build)
        media = os.listdir(col.media.dir())
        assert len(media) == 1 and re.fullmatch(r"_quizgen-anki-[0-9a-f]{12}\.js", media[0]), media
        card = col.get_card(col.find_cards(f"Id:{card_key('order-train-step')}")[0])
        assert f'<script src="{media[0]}"></script>' in card.question()


# -- 2. re-import, 3. edit -------------------------------------------------------------------------


def test_reimporting_the_same_build_adds_and_updates_nothing(
    anki_build: pipeline.Report, tmp_path: Path
) -> None:
    with collection(tmp_path) as col:
        import_all(col, anki_build)
        again = counts(import_all(col, anki_build))
        assert again["new"] == 0 and again["updated"] == 0 and again["duplicate"] == len(EXPECTED)
        assert col.note_count() == len(EXPECTED)


def test_an_edit_updates_exactly_that_note_and_keeps_its_reviews(
    anki_build: pipeline.Report, tmp_path: Path, pool: Pool
) -> None:
    root = copy_project(anki_build, tmp_path / "project")
    with collection(tmp_path / "anki") as col:
        import_all(col, anki_build)
        nid = note_of(col, "value-two-steps")
        cid = review(col, "value-two-steps")
        reviews = col.db.list("select id from revlog where cid = ?", cid)
        assert len(reviews) == 1

        before = lock.read(root / "cards" / lock.LOCK_NAME)
        edit(root, "Gradients add up: 3.0 + 5.0 = 8.0.", "Gradients accumulate: 3.0 + 5.0 = 8.0.")
        report = build(root, pool=pool)
        after = lock.read(root / "cards" / lock.LOCK_NAME)
        changed = {k for k in after.cards if after.cards[k] != before.cards[k]}
        assert changed == {"value-two-steps"}
        assert after.cards["value-two-steps"].mod > before.cards["value-two-steps"].mod

        logs = import_all(col, report)
        assert counts(logs) == {"new": 0, "updated": 1, "duplicate": len(EXPECTED) - 1, "conflicting": 0}
        assert [n.id.nid for log in logs for n in log.updated] == [nid]
        assert col.note_count() == len(EXPECTED)
        assert "Gradients accumulate" in col.get_note(nid)["Explain"]
        assert col.find_cards(f"Id:{card_key('value-two-steps')}") == [cid]
        assert col.db.list("select id from revlog where cid = ?", cid) == reviews


def test_note_type_templates_update_on_import(
    anki_build: pipeline.Report, tmp_path: Path, pool: Pool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Templates and CSS may change (the fields may not): Anki takes them, the notes stay as they are."""
    root = copy_project(anki_build, tmp_path / "project")
    with collection(tmp_path / "anki") as col:
        import_all(col, anki_build)
        css = anki_notetypes.css() + "\n/* restyled */\n"
        monkeypatch.setattr(anki_notetypes, "css", lambda: css)
        report = build(root, pool=pool)
        assert counts(import_all(col, report))["updated"] == 0
        assert all(
            "/* restyled */" in nt["css"] for nt in col.models.all() if nt["name"].startswith("quizgen ")
        )


# -- byte-identical builds, the lock ---------------------------------------------------------------


def test_the_same_sources_build_the_same_bytes(
    anki_build: pipeline.Report, tmp_path: Path, pool: Pool
) -> None:
    first = digests(apkgs(anki_build))
    # a copy elsewhere, built from scratch (no cache, no previous output): absolute paths do not leak in
    root = copy_project(anki_build, tmp_path / "elsewhere")
    shutil.rmtree(root / "build")
    shutil.rmtree(state.where(root / "build"))
    lock_before = (root / "cards" / lock.LOCK_NAME).read_bytes()
    report = build(root, pool=pool, use_cache=False)
    assert digests(apkgs(report)) == first
    assert (root / "cards" / lock.LOCK_NAME).read_bytes() == lock_before
    assert not any("quizgen.lock" in n for n in report.notes), "an unchanged lock is not rewritten"


def test_the_lock_is_sorted_json_beside_the_cards(anki_build: pipeline.Report) -> None:
    root: Path = anki_build.root  # type: ignore[attr-defined]
    text = (root / "cards" / lock.LOCK_NAME).read_text()
    data = json.loads(text)
    assert text == json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False) + "\n"
    assert sorted(data["cards"]) == sorted(EXPECTED)
    assert {e["deck"] for e in data["cards"].values()} == {"Sample::Gradients", "Sample::Gradients::Tricky"}
    assert sorted(nt["name"] for nt in data["notetypes"].values()) == [
        "quizgen basic",
        "quizgen myth",
        "quizgen order",
        "quizgen value",
    ]
    assert any("quizgen.lock" in n and "9 new" in n for n in anki_build.notes)


# -- removed cards ---------------------------------------------------------------------------------


def test_a_removed_card_is_reported_with_a_search_that_finds_it_in_anki(
    anki_build: pipeline.Report, tmp_path: Path, pool: Pool
) -> None:
    root = copy_project(anki_build, tmp_path / "project")
    tricky = root / "cards" / "tricky.yaml"
    text = tricky.read_text()
    tricky.write_text(text[: text.index("  - id: value-list")])
    report = build(root, pool=pool)
    (message,) = [n for n in report.notes if "removed since the last build" in n]
    assert "value-list" in message
    query = message.split("search for this in Anki's browser: ")[1]
    assert query == f'"note:quizgen *" (Id:{card_key("value-list")} OR Id:value-list)'
    assert "value-list" in lock.read(root / "cards" / lock.LOCK_NAME).removed

    with collection(tmp_path / "anki") as col:
        import_all(col, anki_build)
        logs = import_all(col, report)
        assert counts(logs)["new"] == 0 and counts(logs)["updated"] == 0
        assert col.note_count() == len(EXPECTED), "Anki never deletes on import"
        assert col.find_notes(query) == [note_of(col, "value-list")]
        # several removed cards make one query too
        both = anki.removed_query(["value-list", "value-braces"])
        assert sorted(col.find_notes(both)) == sorted(
            [note_of(col, "value-list"), note_of(col, "value-braces")]
        )

    again = build(root, pool=pool)
    assert not any("removed" in n for n in again.notes), "reported once, when it happens"


def test_a_card_moved_to_another_deck_is_reported(
    anki_build: pipeline.Report, tmp_path: Path, pool: Pool
) -> None:
    root = copy_project(anki_build, tmp_path / "project")
    edit(root, "deck: Sample::Gradients::Tricky", "deck: Sample::Tricky", "tricky.yaml")
    report = build(root, pool=pool)
    moved = [n for n in report.notes if "moved from deck" in n]
    assert len(moved) == 2 and all("Change Deck" in n for n in moved)
    assert [p.name for p in apkgs(report)] == ["Sample__Gradients.apkg", "Sample__Tricky.apkg"]


# -- errors ----------------------------------------------------------------------------------------


def test_decks_whose_ids_collide_are_refused() -> None:
    decks = [Deck("A", "cards/a.yaml"), Deck("B", "cards/b.yaml")]
    with pytest.raises(CardErrors) as info:
        anki.check_decks(decks, id_for=lambda name: 42)
    assert "cards/b.yaml -> deck: deck 'B' has the same Anki deck id as 'A'" in info.value.message


def test_decks_that_would_share_a_file_are_refused() -> None:
    decks = [Deck("Py Torch::X", "cards/a.yaml"), Deck("py-torch::x", "cards/b.yaml")]
    with pytest.raises(CardErrors, match="would write the same file as 'Py Torch::X'"):
        anki.check_decks(decks)


def test_deck_ids_and_guids_are_stable_and_depend_on_names_only() -> None:
    assert anki.deck_id("PyTorch::Gradients") == anki.deck_id("PyTorch::Gradients")
    assert anki.deck_id("PyTorch::Gradients") != anki.deck_id("PyTorch::Gradient")
    assert 0 < anki.deck_id("x") < 2**53
    assert anki.guid("value-two-steps") == anki.guid("value-two-steps") != anki.guid("value-two-step")
    assert anki.file_name("PyTorch::Gradients::ZeroGrad") == "PyTorch__Gradients__ZeroGrad.apkg"


def test_a_failed_write_leaves_the_previous_decks_and_lock(
    anki_build: pipeline.Report, tmp_path: Path, pool: Pool, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = copy_project(anki_build, tmp_path / "project")
    before = digests(sorted((root / "build" / "anki").iterdir()))
    lock_before = (root / "cards" / lock.LOCK_NAME).read_bytes()
    edit(root, "Put one training step in order.", "Put a training step in order.")
    real = anki_package._entry
    calls = []

    def disk_full(zf: object, name: str, data: bytes) -> None:
        calls.append(name)
        if len(calls) > 4:  # the second deck's package
            raise OSError(errno.ENOSPC, "No space left on device")
        real(zf, name, data)  # type: ignore[arg-type]

    monkeypatch.setattr(anki_package, "_entry", disk_full)
    monkeypatch.setattr(Reuse, "copied", lambda *args: False)  # every package written, not copied
    with pytest.raises(OutputError, match="No space left on device"):
        build(root, pool=pool)
    assert digests(sorted((root / "build" / "anki").iterdir())) == before
    assert (root / "cards" / lock.LOCK_NAME).read_bytes() == lock_before
    assert [p.name for p in (root / "build").iterdir() if p.name.startswith(".anki")] == []


def test_a_read_only_cards_folder_still_builds_and_says_the_lock_is_stale(
    anki_build: pipeline.Report, tmp_path: Path, pool: Pool, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = copy_project(anki_build, tmp_path / "project")
    lock_before = (root / "cards" / lock.LOCK_NAME).read_bytes()
    edit(root, "Put one training step in order.", "Put a training step in order.")
    refuse_writes(root / "cards", monkeypatch)
    try:
        report = build(root, pool=pool)
    finally:
        (root / "cards").chmod(0o755)
    assert (root / "cards" / lock.LOCK_NAME).read_bytes() == lock_before
    assert any("quizgen.lock: cannot write" in n and "new times each build" in n for n in report.notes)
    assert len(apkgs(report)) == 2


def refuse_writes(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Make `folder` refuse new files: read-only, or for root (who ignores that) a refusing tempfile."""
    if os.geteuid() != 0:
        folder.chmod(0o555)
        return
    for name in ("mkstemp", "mkdtemp"):
        real = getattr(tempfile, name)

        def refusing(*args: Any, real: Any = real, **kw: Any) -> Any:
            if kw.get("dir") is not None and Path(kw["dir"]).resolve() == folder.resolve():
                raise PermissionError(errno.EACCES, "Permission denied", str(kw["dir"]))
            return real(*args, **kw)

        monkeypatch.setattr(tempfile, name, refusing)


def test_an_unwritable_output_folder_is_a_clear_error(
    anki_build: pipeline.Report, tmp_path: Path, runner: CliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = copy_project(anki_build, tmp_path / "project")
    before = digests(sorted((root / "build" / "anki").iterdir()))
    edit(root, "Put one training step in order.", "Put a training step in order.")
    monkeypatch.chdir(root)
    refuse_writes(root / "build", monkeypatch)
    try:
        result = runner.invoke(cli, ["build"])
    finally:
        (root / "build").chmod(0o755)
    assert result.exit_code == 1, result.output
    assert "cannot write" in result.output and "Permission denied" in result.output
    assert isinstance(result.exception, SystemExit), "no traceback"
    assert digests(sorted((root / "build" / "anki").iterdir())) == before


def test_an_output_folder_that_cannot_be_made_is_a_clear_error(tmp_path: Path, pool: Pool) -> None:
    root = write_project(tmp_path, {"sample.yaml": SAMPLE_DECK})
    (root / "not-a-folder").write_text("")
    options = pipeline.Options(cards_dir=root / "cards", out_dir=root / "not-a-folder" / "out", pool=pool)
    with pytest.raises(OutputError, match="cannot write"):
        pipeline.build(options)


def test_a_corrupt_lock_is_a_clear_error(
    anki_build: pipeline.Report, tmp_path: Path, runner: CliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = copy_project(anki_build, tmp_path / "project")
    (root / "cards" / lock.LOCK_NAME).write_text("{ not json")
    monkeypatch.chdir(root)
    result = runner.invoke(cli, ["build"])
    assert result.exit_code == 1, result.output
    assert "quizgen.lock: not a quizgen lock file" in result.output
    assert isinstance(result.exception, SystemExit)


# -- the command line ------------------------------------------------------------------------------


def test_build_command_writes_the_decks_and_the_lock(
    anki_build: pipeline.Report, tmp_path: Path, runner: CliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = copy_project(anki_build, tmp_path / "project")
    (root / "cards" / lock.LOCK_NAME).unlink()
    monkeypatch.chdir(root)
    result = runner.invoke(cli, ["build"])
    assert result.exit_code == 0, result.output
    assert "wrote build/anki/Sample__Gradients.apkg" in result.output
    assert "wrote build/anki/Sample__Gradients__Tricky.apkg" in result.output
    assert "updated cards/quizgen.lock (9 new, 0 changed, 0 removed" in result.output
    again = runner.invoke(cli, ["build"])
    assert again.exit_code == 0, again.output
    assert "quizgen.lock" not in again.output


def test_source_date_epoch_stamps_new_and_changed_notes(
    anki_build: pipeline.Report, tmp_path: Path, pool: Pool, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = copy_project(anki_build, tmp_path / "project")
    (root / "cards" / lock.LOCK_NAME).unlink()
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    build(root, pool=pool)
    entries = lock.read(root / "cards" / lock.LOCK_NAME).cards
    assert {(e.added, e.mod) for e in entries.values()} == {(1700000000, 1700000000)}
    edit(root, "Put one training step in order.", "Put a training step in order.")
    build(root, pool=pool)
    assert lock.read(root / "cards" / lock.LOCK_NAME).cards["order-train-step"].mod == 1700000001


def test_a_card_of_many_code_spans_is_packaged_in_linear_time(
    tmp_path: Path, options: Any, recwarn: pytest.WarningsRecorder
) -> None:
    # genanki's check for unescaped tags is quadratic in a line of tags (its lookahead reads to the
    # line's end at every `<`): 80,000 code spans in one card took ~30 s of CPU in it alone.
    front = "`a` " * 80_000
    write_project(
        tmp_path,
        {"d.yaml": f'deck: D\ncards:\n  - id: one\n    kind: basic\n    front: "{front}"\n    back: b\n'},
    )
    started = time.process_time()
    pipeline.build(options(tmp_path))
    assert time.process_time() - started < 12  # ~2.5 s (the quadratic check alone: ~30 s)
    with zipfile.ZipFile(tmp_path / "build" / "anki" / "D.apkg") as z:
        assert z.read("collection.anki2")
    assert not [w for w in recwarn if "invalid HTML tags" in str(w.message)]
