"""The shipped deck in cards/: every card verified by execution, the coverage map honest, every
package importing cleanly into a real Anki collection."""

from __future__ import annotations

import json
import re
import shutil
import sqlite3
import tempfile
import zipfile
from collections import Counter
from html.parser import HTMLParser
from pathlib import Path

import pytest

from quizgen import pipeline
from quizgen.cards import course
from quizgen.cards.fields import ID_PATTERN
from tests.support.anki import collection, counts, import_all
from tests.support.paths import REPO


@pytest.fixture(scope="module")
def shipped(tmp_path_factory: pytest.TempPathFactory, pool: object) -> pipeline.Report:
    """The shipped cards built in a copy, so the build's lock update never touches the checkout."""
    root = tmp_path_factory.mktemp("shipped")
    shutil.copytree(REPO / "cards", root / "cards")
    shutil.copy(REPO / "quizgen.toml", root / "quizgen.toml")  # its torch matrix: a card is judged on 1.13.1
    options = pipeline.Options(cards_dir=root / "cards", out_dir=root / "build", pool=pool)  # type: ignore[arg-type]
    report = pipeline.build(options)
    report.root = root  # type: ignore[attr-defined]
    return report


def test_the_deck_has_what_the_issue_asks(shipped: pipeline.Report) -> None:
    kinds = Counter(vc.card.kind for d in shipped.decks for vc in d.cards)
    assert sum(kinds.values()) >= 40
    # issue 33 turns myths into value cards (fewer coin flips): a few myths stay, not the first issue's 8
    assert kinds["value"] >= 8 and kinds["myth"] >= 5 and kinds["order"] >= 5
    orders = [vc.outcome.orders for d in shipped.decks for vc in d.cards if vc.card.kind == "order"]
    assert all(orders) and sum(len(o or []) > 1 for o in orders) >= 3  # several right orders where true
    for deck in shipped.decks:
        for vc in deck.cards:
            if vc.card.kind != "basic":
                assert vc.card.explain.strip(), f"{vc.card.id} explains nothing"


def test_every_order_puzzle_accepts_what_a_teacher_would(shipped: pipeline.Report) -> None:
    """No puzzle accepts a line moved into or out of a body, nor more than its max_accepted (issue 31)."""
    weak = [str(w) for w in shipped.warnings if w.message.startswith("the check accepts")]
    assert weak == []


def test_coverage_names_only_real_cards(shipped: pipeline.Report) -> None:
    ids = {vc.card.id for d in shipped.decks for vc in d.cards}
    text = (REPO / "cards" / "COVERAGE.md").read_text()
    rows = [line for line in text.splitlines() if re.match(r"^\| \d+ \|", line)]
    assert len(rows) >= 30
    named = {
        token
        for row in rows
        for token in re.findall(r"`([^`]+)`", row.rsplit("|", 2)[-2])
        if re.match(ID_PATTERN, token) and "-" in token
    }
    assert named and named <= ids, sorted(named - ids)
    corrected = [row for row in rows if "**corrected**" in row]
    assert corrected, "COVERAGE.md marks the seed claims execution corrected"


def test_every_shipped_package_imports_into_anki(shipped: pipeline.Report, tmp_path: Path) -> None:
    total = sum(len(d.cards) for d in shipped.decks)
    with collection(tmp_path / "anki") as col:
        logs = import_all(col, shipped)
        assert counts(logs) == {"new": total, "updated": 0, "duplicate": 0, "conflicting": 0}
        assert col.note_count() == total
        for cid in col.find_cards(""):
            card = col.get_card(cid)
            assert card.question() and card.answer()
        decks = {d.name for d in col.decks.all_names_and_ids()}
        shown = [course.numbered(d.deck) for d in shipped.decks]  # in course order
        assert set(shown) <= decks
        # Anki lists decks by name: its list is the course (issue 33)
        assert [n for n in sorted(decks, key=str.lower) if n in shown] == shown
        # Importing the same build again changes nothing.
        assert counts(import_all(col, shipped))["new"] == 0


def test_the_committed_lock_knows_every_card(shipped: pipeline.Report) -> None:
    import json

    lock = json.loads((REPO / "cards" / "quizgen.lock").read_text())
    ids = {vc.card.id for d in shipped.decks for vc in d.cards}
    assert set(lock["cards"]) == ids


def test_a_fresh_clones_build_leaves_the_committed_lock_as_it_is(shipped: pipeline.Report) -> None:
    """Built without torch 1.13.1 provisioned (the lock's answers stand in for it), the shipped cards make
    the lock the repository has: `git status` stays clean after `make build`."""
    root: Path = shipped.root  # type: ignore[attr-defined]
    assert not [n for n in shipped.notes if n.startswith("updated")], shipped.notes
    assert (root / "cards" / "quizgen.lock").read_bytes() == (REPO / "cards" / "quizgen.lock").read_bytes()


def _ids_in(text: str, ids: set[str]) -> set[str]:
    """The card ids written in `text` as whole slugs (not as part of a longer one)."""
    return {m for m in re.findall(r"(?<![a-z0-9-])[a-z0-9]+(?:-[a-z0-9]+)+(?![a-z0-9-])", text) if m in ids}


def _anki_notes(apkg: Path) -> list[dict[str, str]]:
    """Every note of a package as field name -> value, with its note type's name as `_type`."""
    with zipfile.ZipFile(apkg) as zf, tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "collection.anki2"
        db.write_bytes(zf.read("collection.anki2"))
        con = sqlite3.connect(db)
        try:
            models = json.loads(con.execute("select models from col").fetchone()[0])
            rows = con.execute("select mid, flds from notes").fetchall()
        finally:
            con.close()
    notes = []
    for mid, flds in rows:
        model = models[str(mid)]
        names = [f["name"] for f in model["flds"]]
        notes.append({"_type": model["name"], **dict(zip(names, flds.split("\x1f"), strict=True))})
    return notes


def test_no_page_file_or_note_names_a_card(shipped: pipeline.Report) -> None:
    """An id names the lesson (`myth-...` ids are false claims): learners meet only the cards' keys."""
    root: Path = shipped.root  # type: ignore[attr-defined]
    ids = {vc.card.id for d in shipped.decks for vc in d.cards}
    found: dict[str, set[str]] = {}
    for path in sorted((root / "build" / "quiz").rglob("*")):
        named = _ids_in(path.relative_to(root).as_posix(), ids)
        if path.is_file() and path.suffix in (".html", ".js", ".css", ".json", ".svg"):
            named |= _ids_in(path.read_text(encoding="utf-8"), ids)
        if named:
            found[path.name] = named
    packages = sorted((root / "build" / "anki").glob("*.apkg"))
    assert len(packages) == len(shipped.decks)
    for apkg in packages:
        for note in _anki_notes(apkg):
            for name, value in note.items():
                if named := _ids_in(value, ids):
                    found[f"{apkg.name} -> {name}"] = found.get(f"{apkg.name} -> {name}", set()) | named
    assert found == {}


class _Attributes(HTMLParser):
    """The attributes of an HTML fragment whose values hold a verdict word."""

    def __init__(self) -> None:
        super().__init__()
        self.found: set[tuple[str, str, str]] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:  # a title is text shown (a linked card's question), not a channel
            if value and name != "title" and re.search(r"\b(true|false|right|wrong|correct)\b", value, re.I):
                self.found.add((tag, name, value))


def _verdict_attributes(fragment: str) -> frozenset[tuple[str, str, str]]:
    parser = _Attributes()
    parser.feed(fragment)
    return frozenset(parser.found)


def test_no_attribute_tells_a_myths_verdict(shipped: pipeline.Report) -> None:
    """True and false myths carry the same verdict words in their attributes (the True and False
    buttons'), on the quiz's pages and in Anki's fields; only the judge's data holds the verdict."""
    root: Path = shipped.root  # type: ignore[attr-defined]
    quiz: set[frozenset[tuple[str, str, str]]] = set()
    for page in sorted((root / "build" / "quiz" / "decks").glob("*.html")):
        text = page.read_text(encoding="utf-8")
        held = re.search(r'<script type="application/json" id="card-html">(.*?)</script>', text, re.S)
        assert held
        for card in json.loads(held[1]).values():
            if 'class="card kind-myth"' in card:
                quiz.add(_verdict_attributes(card))
    anki: set[frozenset[tuple[str, str, str]]] = set()
    for apkg in sorted((root / "build" / "anki").glob("*.apkg")):
        for note in _anki_notes(apkg):
            if note["_type"].endswith("myth"):
                shown = (v for k, v in note.items() if k not in ("_type", "Verdict", "Judge"))
                anki.add(_verdict_attributes("".join(shown)))
    assert len(quiz) == 1 and len(anki) == 1, (frozenset.union(*quiz) - frozenset.intersection(*quiz), anki)


def test_the_shipped_deck_passes_the_item_writing_report(shipped: pipeline.Report) -> None:
    """No answer-blind guesser beats chance by a margin a learner would notice, per deck or over all."""
    from quizgen.report import guessers

    assert [str(w) for w in shipped.warnings if "guessing" in w.message] == []
    table = guessers.table(shipped.decks)
    assert "all decks" in table and not any(line.endswith("leaks") for line in table)
