"""Writing one .apkg with genanki, byte for byte the same for the same notes.

genanki.Package.write_to_file stamps notes with the clock and zips with file times; here every time
comes from the caller (the lock) and the zip entries carry a fixed date, so a rebuild changes nothing.
"""

from __future__ import annotations

import itertools
import json
import sqlite3
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import genanki

from quizgen.render import zipped

_entry = zipped.entry  # (by this name, so a test can make the disk fill up mid-package)


class _Note(genanki.Note):
    """A note whose id and modification time are given, not drawn from the build's clock."""

    def __init__(self, nid: int, mod: int, **kw: Any) -> None:
        super().__init__(**kw)
        self.nid, self.mod = nid, mod

    def write_to_db(self, cursor: sqlite3.Cursor, timestamp: float, deck_id: int, id_gen: Any) -> None:
        # genanki draws the note id, then one id per card, from id_gen: one card per note, same id.
        super().write_to_db(cursor, self.mod, deck_id, itertools.repeat(self.nid))

    def _check_invalid_html_tags_in_fields(self) -> None:
        """Skipped: genanki's lint for callers who forgot html.escape (quizgen escapes every text) is a
        pattern quadratic in a line of tags: 75,000 code spans in one card took 42 s of CPU."""


@dataclass
class NoteSpec:
    """One note as it goes into a package."""

    model: genanki.Model
    fields: list[str]
    tags: list[str]
    guid: str
    nid: int  # also the card's id; Anki shows it as the creation time
    mod: int
    due: int  # position among new cards: the order of the source file


def write_apkg(
    path: Path,
    deck_id: int,
    deck_name: str,
    description: str,
    notes: list[NoteSpec],
    media: dict[str, bytes],
) -> None:
    """Write a package holding one deck, its notes and the media files (name -> content)."""
    deck = genanki.Deck(deck_id, deck_name, description)
    for spec in notes:
        deck.add_note(
            _Note(
                spec.nid,
                spec.mod,
                model=spec.model,
                fields=spec.fields,
                tags=spec.tags,
                guid=spec.guid,
                due=spec.due,
            )
        )
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "collection.anki2"
        conn = sqlite3.connect(db)
        try:
            # A scratch file zipped and deleted: no journal, no fsync (genanki commits twice while making
            # the schema, and each waited for the disk: 0.25 -> 0.02 s for the shipped 19 decks). Neither
            # setting is stored in the file, whose bytes stay the same.
            conn.execute("PRAGMA journal_mode=OFF")
            conn.execute("PRAGMA synchronous=OFF")
            timestamp = max((n.mod for n in notes), default=0)
            genanki.Package(deck).write_to_db(conn.cursor(), timestamp, itertools.count(1))
            conn.commit()
        finally:
            conn.close()
        names = sorted(media)
        with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
            _entry(zf, "collection.anki2", db.read_bytes())
            _entry(zf, "media", json.dumps({str(i): n for i, n in enumerate(names)}).encode())
            for i, name in enumerate(names):
                _entry(zf, str(i), media[name])
