"""Reading back a built .apkg: the deck, note types, notes and media a push brings into Anki.

A push delivers what `quizgen build` wrote, byte for byte, so it reads the packages rather than
rendering again: what reaches Anki through AnkiConnect is what File -> Import would bring.
"""

from __future__ import annotations

import json
import sqlite3
import tempfile
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

from quizgen.errors import OutputError

FIELD_SEPARATOR = "\x1f"  # Anki keeps a note's fields in one column, separated by this


@dataclass(frozen=True)
class NoteType:
    """A note type as the package defines it: one card template, its fields in order."""

    id: int
    name: str
    fields: tuple[str, ...]
    front: str
    back: str
    css: str


@dataclass(frozen=True)
class PackedNote:
    """One note of a package: the card id is its first field (Id)."""

    card_id: str
    guid: str
    notetype: int
    fields: tuple[str, ...]
    tags: tuple[str, ...]


@dataclass
class Package:
    """One built deck: where it is, its name, the note types it uses, its notes and media files."""

    path: Path
    deck: str
    notetypes: dict[int, NoteType] = field(default_factory=dict)
    notes: list[PackedNote] = field(default_factory=list)
    media: dict[str, bytes] = field(default_factory=dict)


def read(path: Path) -> Package:
    """The contents of a .apkg quizgen wrote (genanki's schema 11 collection, a `media` map)."""
    try:
        with zipfile.ZipFile(path) as zf, tempfile.TemporaryDirectory() as tmp:
            zf.extract("collection.anki2", tmp)
            names: dict[str, str] = json.loads(zf.read("media"))
            media = {name: zf.read(number) for number, name in names.items()}
            db = sqlite3.connect(Path(tmp) / "collection.anki2")
            try:
                return _package(path, db, media)
            finally:
                db.close()
    except (OSError, KeyError, ValueError, zipfile.BadZipFile, sqlite3.Error) as exc:
        raise OutputError(f"{path}: not a package quizgen built ({exc}); run quizgen build again") from exc


def _package(path: Path, db: sqlite3.Connection, media: dict[str, bytes]) -> Package:
    models_json, decks_json = db.execute("SELECT models, decks FROM col").fetchone()
    decks = [d["name"] for d in json.loads(decks_json).values() if d["name"] != "Default"]
    package = Package(path, decks[0] if decks else path.stem, media=media)
    for model in json.loads(models_json).values():
        (template,) = model["tmpls"]
        package.notetypes[int(model["id"])] = NoteType(
            int(model["id"]),
            model["name"],
            tuple(f["name"] for f in model["flds"]),
            template["qfmt"],
            template["afmt"],
            model["css"],
        )
    # In the order of the source file: a new card's due is its position there (one card per note).
    query = "SELECT n.guid, n.mid, n.tags, n.flds FROM notes n JOIN cards c ON c.nid = n.id ORDER BY c.due"
    for guid, mid, tags, flds in db.execute(query):
        values = tuple(flds.split(FIELD_SEPARATOR))
        package.notes.append(PackedNote(values[0], guid, int(mid), values, tuple(tags.split())))
    return package
