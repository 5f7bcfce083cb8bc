"""Many cards: builds that change nothing touch nothing, an edit rewrites only what it changes, and 10,000
cards import into a real Anki collection (and import again as nothing new)."""

from __future__ import annotations

import json
import os
import sqlite3
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from quizgen import pipeline
from quizgen.cards import loader
from quizgen.project import lock, state
from quizgen.render import anki, cards_json, manifest, markup, prepare, present, quiz, torch_use
from quizgen.render.code import highlighting
from quizgen.render.prepare import Preparation
from quizgen.render.view import card_key
from tests.support.projects import SAMPLE_DECK, basic_decks, write_project

CARDS_PER_FILE = 2000  # a card file holds at most 50,000 YAML nodes: 2000 basic cards are 18,000


def build(root: Path) -> pipeline.Report:
    return pipeline.build(pipeline.Options(cards_dir=root / "cards", out_dir=root / "build", pool=None))


def stamps(root: Path) -> dict[str, tuple[int, int, bytes]]:
    """Every output file: its inode, modification time and bytes."""
    found = {}
    for path in sorted((root / "build").rglob("*")):
        if path.is_file() and ".cache" not in path.parts and not path.name.startswith(".quizgen"):
            stat = path.stat()
            found[str(path.relative_to(root))] = (stat.st_ino, stat.st_mtime_ns, path.read_bytes())
    return found


def test_the_lock_name_is_the_one_the_anki_output_writes() -> None:
    assert manifest.LOCK_NAME == lock.LOCK_NAME


def test_an_unchanged_build_leaves_every_output_alone(tmp_path: Path) -> None:
    root = write_project(tmp_path, basic_decks(2, 3))
    first = build(root)
    before = stamps(root)
    again = build(root)
    assert again.written == first.written
    assert stamps(root) == before


def test_an_edit_rewrites_only_the_outputs_it_changes(tmp_path: Path) -> None:
    root = write_project(tmp_path, basic_decks(2, 3))
    build(root)
    before = stamps(root)
    part1 = root / "cards" / "part-1.yaml"
    part1.write_text(part1.read_text().replace("Answer 1.", "Answer one."))
    build(root)
    after = stamps(root)
    changed = sorted(name for name in after if after[name] != before.get(name))
    assert changed == [
        "build/anki/Scale__Part-1.apkg",
        "build/cards.json",
        "build/quiz/decks/scale-part-1.html",
    ]


def _tree(folder: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(folder)): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and ".cache" not in p.relative_to(folder).parts
    }


def test_an_incremental_build_is_byte_for_byte_a_clean_one(tmp_path: Path, pool: Any) -> None:
    """Everything a build keeps from earlier ones (parsed card files, results, highlighting, views made
    once for both outputs, pages and packages left alone) makes exactly what a build from nothing does."""
    root = write_project(tmp_path, {"sample.yaml": SAMPLE_DECK, **basic_decks(2, 3)})
    options = pipeline.Options(cards_dir=root / "cards", out_dir=root / "build", jobs=2, pool=pool)
    pipeline.build(options)
    sample = root / "cards" / "sample.yaml"
    sample.write_text(sample.read_text().replace("Gradients add up", "The gradients add up"))
    part = root / "cards" / "part-2.yaml"
    part.write_text(part.read_text().replace("Answer 4.", "Answer four."))
    report = pipeline.build(options)
    assert report.executed == 0  # the edits are in prose: every result came from the cache
    incremental = _tree(root / "build")
    (root / "build").rename(root / "incremental")
    pipeline.build(replace(options, use_cache=False))
    clean = _tree(root / "build")
    assert sorted(incremental) == sorted(clean)
    assert [name for name in clean if incremental[name] != clean[name]] == []


def test_only_the_edited_decks_page_and_package_are_made_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = write_project(tmp_path, basic_decks(3, 2))
    build(root)
    made: list[str] = []
    real_page, real_apkg = quiz._render, anki.write_apkg

    def page(*args: Any) -> None:
        made.append(args[3].name)
        real_page(*args)

    def apkg(*args: Any) -> None:
        made.append(args[0].name)
        real_apkg(*args)

    monkeypatch.setattr(quiz, "_render", page)
    monkeypatch.setattr(anki, "write_apkg", apkg)
    part = root / "cards" / "part-2.yaml"
    part.write_text(part.read_text().replace("Answer 2.", "Answer two."))
    build(root)
    assert sorted(made) == ["Scale__Part-2.apkg", "index.html", "scale-part-2.html"]
    (root / "build" / "quiz" / "decks" / "scale-part-1.html").write_text("changed by hand")
    made.clear()
    part.write_text(part.read_text().replace("Answer two.", "Answer 2."))
    build(root)
    assert sorted(made) == ["Scale__Part-2.apkg", "index.html", "scale-part-1.html", "scale-part-2.html"]


def test_outputs_changed_by_hand_are_built_again(tmp_path: Path) -> None:
    root = write_project(tmp_path, basic_decks(1, 2))
    build(root)
    page = root / "build" / "quiz" / "index.html"
    made = page.read_bytes()
    page.write_text("changed by hand")
    build(root)
    assert page.read_bytes() == made


@pytest.mark.slow
@pytest.mark.anki
def test_ten_thousand_cards_import_into_anki_and_import_again_as_nothing_new(tmp_path: Path) -> None:
    from tests.support.anki import collection, counts, import_all

    total = 10_000
    root = write_project(tmp_path, basic_decks(total // CARDS_PER_FILE, CARDS_PER_FILE))
    report = build(root)
    assert report.cards == total
    with collection(tmp_path / "anki") as col:
        first = counts(import_all(col, report))
        assert first == {"new": total, "updated": 0, "duplicate": 0, "conflicting": 0}
        assert col.note_count() == total
        again = counts(import_all(col, report))
        assert again == {"new": 0, "updated": 0, "duplicate": total, "conflicting": 0}
        assert col.note_count() == total
        (nid,) = col.find_notes(f"Id:{card_key('basic-9999')}")
        assert "Answer 9999." in col.get_note(nid).fields[col.get_note(nid).keys().index("Back")]
    assert os.path.getsize(root / "build" / "anki" / "Scale__Part-5.apkg") > 0


@pytest.mark.browser
def test_a_deck_page_of_2000_cards_lays_out_only_the_card_shown(tmp_path: Path, browser: Any) -> None:
    root = write_project(tmp_path, basic_decks(1, CARDS_PER_FILE))
    build(root)
    page = browser.new_page()
    try:
        page.goto((root / "build" / "quiz" / "decks" / "scale-part-1.html").as_uri())
        page.wait_for_selector(f"#card-{card_key('basic-0')} .card-title", state="visible")
        held = "Object.keys(JSON.parse(document.getElementById('card-html').textContent)).length"
        assert page.evaluate(held) == CARDS_PER_FILE  # each card's HTML a string until it is shown
        assert page.locator("article.card").count() == 1
        page.click(f"#card-{card_key('basic-0')} .reveal")
        page.click("#self-grade [data-knew='true']")
        page.click("#next")
        page.wait_for_selector(f"#card-{card_key('basic-1')} .card-title", state="visible")
        assert page.locator("article.card").count() == 2
        assert page.locator("article.card:visible").count() == 1
        assert page.inner_text("#status").startswith("Quiz: card 2 of 2000")
    finally:
        page.close()


def test_card_code_is_highlighted_ahead_from_the_loaded_cards(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    code = "print('ahead of the render')  # unique to this test\n"
    deck = "deck: Ahead\nsetup: |\n  x = 1\ncards:\n  - id: b\n    kind: basic\n    front: F\n    back: B\n"
    deck += "    code: |\n      " + code
    root = write_project(tmp_path, {"ahead.yaml": deck})
    decks, problems = loader.load(root / "cards")
    assert problems == []
    preparation = Preparation(state.folder(root / "build"))
    preparation.start(decks)
    assert preparation.thread is not None
    preparation.thread.join()
    preparation.stop()
    assert sorted(prepare.shown_code(decks[0], decks[0].cards[0])) == [code, "x = 1"]
    calls: list[object] = []
    real = highlighting.pygments.highlight

    def counted(*args: Any) -> str:
        calls.append(args)
        return str(real(*args))

    monkeypatch.setattr(highlighting.pygments, "highlight", counted)
    with highlighting.using(lambda key: None, lambda new: None):
        assert "ahead of the render" in markup.highlight(code)
    assert calls == []  # served from what was prepared


def test_whether_card_code_uses_torch_is_kept_for_later_builds(
    tmp_path: Path, pool: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The answers ("verified with torch" or not) are stored; a later build reads them, parsing no code,
    and makes the same bytes; the build's warm-up works them out from the loaded cards."""
    monkeypatch.setattr(torch_use.TORCH_USE, "known", {})  # not what earlier tests' builds worked out
    root = write_project(tmp_path, {"sample.yaml": SAMPLE_DECK})
    options = pipeline.Options(cards_dir=root / "cards", out_dir=root / "build", jobs=2, pool=pool)
    pipeline.build(options)
    first = _tree(root / "build")
    with sqlite3.connect(state.where(root / "build") / "cache.sqlite3") as db:
        stored = dict(db.execute("SELECT key, value FROM torch"))
    decks, problems = loader.load(root / "cards")
    assert problems == []
    jobs = {card.id: present.card_job(deck, card) for deck in decks for card in deck.cards}
    parts = {card_id: torch_use.torch_parts(job) for card_id, job in jobs.items() if job is not None}
    keys = {card_id: torch_use.torch_key(part) for card_id, part in parts.items()}
    assert stored[keys["value-two-steps"]] == "1"
    assert stored[keys["basic-why-accumulate"]] == "0"  # prints a string: torch never verified it
    parsed: list[object] = []
    real = torch_use._parsed_uses_torch
    monkeypatch.setattr(torch_use, "_parsed_uses_torch", lambda job: parsed.append(job) or real(job))
    monkeypatch.setattr(torch_use.TORCH_USE, "known", {})
    (root / "build" / "cards.json").unlink()  # an output gone: the render runs again
    pipeline.build(options)
    assert parsed == []
    assert _tree(root / "build") == first
    monkeypatch.setattr(torch_use.TORCH_USE, "known", {})
    (state.where(root / "build") / "cache.sqlite3").unlink()
    preparation = Preparation(state.folder(root / "build"))
    preparation.start(decks)
    assert preparation.thread is not None
    preparation.thread.join()
    preparation.stop()
    assert len(parsed) == len(set(parts.values()))  # each distinct job once, ahead of the render
    assert torch_use.TORCH_USE.known == {parts[i]: stored[keys[i]] == "1" for i in parts}


def test_cards_json_takes_unchanged_decks_from_the_last_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Only an edited deck's part of cards.json is encoded again; the file is what one dump makes."""
    root = write_project(tmp_path, basic_decks(3, 4))
    build(root)
    part = root / "cards" / "part-2.yaml"
    part.write_text(part.read_text().replace("Answer 5.", "Answer five."))
    recalled: list[bool] = []
    real = cards_json._recalled
    monkeypatch.setattr(cards_json, "_recalled", lambda *a: recalled.append(bool(r := real(*a))) or r)
    report = build(root)
    assert recalled == [True, False, True]
    whole = cards_json.layout(cards_json.cards_data(report.decks))
    assert json.loads(whole) == cards_json.cards_data(report.decks)
    assert (root / "build" / "cards.json").read_text() == whole
    assert '"back": "Answer five."' in whole
    (root / "build" / "cards.json").write_text(whole.replace("Answer 9.", "Answer nine."))  # by hand
    recalled.clear()
    build(root)
    assert recalled == [True, True, False]  # part 3's bytes there are no longer what was made
    assert (root / "build" / "cards.json").read_text() == whole


def test_cards_json_layout_keeps_a_shape_it_does_not_know_whole() -> None:
    data = {"format": 2, "decks": [{"name": "A", "cards": [{"id": "a"}]}], "note": "kept"}
    assert cards_json.layout(data) == json.dumps(data, indent=1, sort_keys=True) + "\n"
    usual = {"format": 2, "decks": [{"name": "A", "cards": [{"id": "a"}, {"id": "b"}]}]}
    assert json.loads(cards_json.layout(usual)) == usual
    assert '    {"id": "a"},\n    {"id": "b"}\n' in cards_json.layout(usual)
