"""Helpers for the Anki tests: a deck of awkward text, real Anki collections, importing like Anki does."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tests.support.tools import require

require("anki")  # skipped where Anki is missing, a failure in CI

from anki.collection import Collection, ImportAnkiPackageOptions, ImportAnkiPackageRequest  # noqa: E402
from anki.import_export_pb2 import ImportAnkiPackageUpdateCondition, ImportResponse  # noqa: E402

from quizgen import pipeline  # noqa: E402
from quizgen.render.view import card_key  # noqa: E402
from tests.support.projects import copy_project  # noqa: E402, F401 - re-exported for the tests

# A sub-deck whose text and code hold what could break Anki's templates or trigger its media handling.
TRICKY_DECK = """\
deck: Sample::Gradients::Tricky
description: "Braces {{Id}} and [sound:boom.mp3] stay text."
tags: [tricky]
setup: |
  import torch
cards:
  - id: value-braces
    kind: value
    tags: [braces]
    ask: "How many items are in `d['\\\\{{a}}']['b']`? Text with \\\\{{Question}} and [sound:boom.mp3]
      stays text."
    code: |
      d = {"{{a}}": {"b": [1, 2]}}
      print(d)
    answer_expr: len(d["{{a}}"]["b"])
    answer: 2
    explain: "Braces {{ }} are text: \\\\{{FrontSide}}."
  - id: value-list
    kind: value
    ask: "What is `w.grad`?"
    code: |
      w = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
      (w * w).sum().backward()
    answer_expr: w.grad
    answer: [2.0, 4.0, 6.0]
    tolerance: {rtol: 0.01}
"""

# card id -> (deck, tags), for every card of SAMPLE_DECK and TRICKY_DECK
EXPECTED = {
    "value-two-steps": ("Sample::Gradients", ["accumulation", "sample"]),
    "value-grad-none": ("Sample::Gradients", ["sample"]),
    "value-shape": ("Sample::Gradients", ["sample"]),
    "value-raises": ("Sample::Gradients", ["sample"]),
    "myth-zero-grad-zeros": ("Sample::Gradients", ["sample"]),
    "order-train-step": ("Sample::Gradients", ["sample"]),
    "basic-why-accumulate": ("Sample::Gradients", ["sample"]),
    "value-braces": ("Sample::Gradients::Tricky", ["braces", "tricky"]),
    "value-list": ("Sample::Gradients::Tricky", ["tricky"]),
}

IF_NEWER = ImportAnkiPackageUpdateCondition.IMPORT_ANKI_PACKAGE_UPDATE_CONDITION_IF_NEWER


@contextmanager
def collection(folder: Path) -> Iterator[Collection]:
    """A new, empty Anki collection (the real Rust backend) in `folder`."""
    folder.mkdir(parents=True, exist_ok=True)
    col = Collection(str(folder / "collection.anki2"))
    try:
        yield col
    finally:
        col.close()


@contextmanager
def held_open(folder: Path) -> Iterator[None]:
    """The collection in `folder` open in another process, as Anki holds its profile's while it runs."""
    script = (
        "import sys; from anki.collection import Collection; "
        f"col = Collection({str(folder / 'collection.anki2')!r}); "
        "col.db.scalar('select count() from notes'); "
        "print('open', flush=True); sys.stdin.read(); col.close()"
    )
    anki = subprocess.Popen(
        [sys.executable, "-c", script], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert anki.stdout is not None and anki.stdout.readline() == "open\n"
        yield
    finally:
        anki.communicate("", timeout=60)


def import_apkg(col: Collection, path: Path) -> ImportResponse.Log:
    """Import a package the way Anki's import dialog does by default: update notes and note types if newer."""
    options = ImportAnkiPackageOptions(
        update_notes=IF_NEWER, update_notetypes=IF_NEWER, merge_notetypes=False, with_scheduling=False
    )
    result = col.import_anki_package(ImportAnkiPackageRequest(package_path=str(path), options=options))
    return result.log


def import_all(col: Collection, report: pipeline.Report) -> list[ImportResponse.Log]:
    return [import_apkg(col, p) for p in report.written if p.suffix == ".apkg"]


def counts(logs: list[ImportResponse.Log]) -> dict[str, int]:
    return {
        "new": sum(len(log.new) for log in logs),
        "updated": sum(len(log.updated) for log in logs),
        "duplicate": sum(len(log.duplicate) for log in logs),
        "conflicting": sum(len(log.conflicting) for log in logs),
    }


NAMES = {card_key(card_id): card_id for card_id in EXPECTED}  # a note's Id (the card's key) -> its id


def note_of(col: Collection, card_id: str) -> int:
    """The id of the note holding a quizgen card, found by its Id field (the card's key)."""
    (nid,) = col.find_notes(f"Id:{card_key(card_id)}")
    return int(nid)


def card_id(report: pipeline.Report, note: Any) -> str:
    """The id of the card a note holds: its Id field holds the card's key, a digest of the id."""
    return {card_key(vc.card.id): vc.card.id for d in report.decks for vc in d.cards}[note["Id"]]


def review(col: Collection, card_id: str, deck: str = "Sample::Gradients") -> int:
    """Answer the card of `card_id` once (Good), with the scheduler as a learner would; its card id."""
    (cid,) = col.find_cards(f"Id:{card_key(card_id)}")
    col.decks.select(col.decks.id_for_name(deck))
    card = col.sched.getCard()
    while card is not None and card.id != cid:  # the scheduler picks the order; answer until ours
        col.sched.answerCard(card, 3)
        card = col.sched.getCard()
    assert card is not None
    col.sched.answerCard(card, 3)
    return int(cid)


def build(root: Path, **kw: object) -> pipeline.Report:
    return pipeline.build(pipeline.Options(cards_dir=root / "cards", out_dir=root / "build", **kw))  # type: ignore[arg-type]
