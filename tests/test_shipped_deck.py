"""The shipped deck in cards/: every card verified by execution, the coverage map honest, every
package importing cleanly into a real Anki collection."""

from __future__ import annotations

import re
import shutil
from collections import Counter
from pathlib import Path

import pytest

from quizgen import pipeline
from quizgen.cards.fields import ID_PATTERN

from .anki_support import collection, counts, import_all

REPO = Path(__file__).resolve().parent.parent


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
    assert kinds["value"] >= 8 and kinds["myth"] >= 8 and kinds["order"] >= 5
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
        assert {d.deck.name for d in shipped.decks} <= decks
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
