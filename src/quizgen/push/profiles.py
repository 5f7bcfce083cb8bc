"""Where Anki keeps its profiles, and whether Anki has one open (it holds the collection locked)."""

from __future__ import annotations

import os
import sqlite3
import sys
from pathlib import Path
from urllib.parse import quote

from quizgen.errors import PushError

COLLECTION = "collection.anki2"


def base() -> Path:
    """Anki's folder of profiles: $ANKI_BASE (as Anki reads it), else the platform's default."""
    if os.environ.get("ANKI_BASE"):
        return Path(os.environ["ANKI_BASE"]).expanduser()
    if sys.platform == "win32":
        return Path(os.environ.get("APPDATA", Path.home())) / "Anki2"
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Application Support" / "Anki2"
    data = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(data) / "Anki2"


def names() -> list[str]:
    """The profiles in Anki's folder (each a folder holding a collection)."""
    folder = base()
    if not folder.is_dir():
        return []
    return sorted(p.name for p in folder.iterdir() if (p / COLLECTION).is_file())


def collection(profile: str) -> Path:
    """The collection file of the profile named `profile`; an error lists the profiles there are."""
    path = base() / profile / COLLECTION
    if path.is_file():
        return path
    found = names()
    there = f"the profiles there: {', '.join(found)}" if found else "it holds no profile"
    raise PushError(f"{base()}: no Anki profile '{profile}' ({there}; $ANKI_BASE names another folder)")


def locked(path: Path) -> bool:
    """Whether a program (Anki) holds this collection open: Anki locks it for as long as it has it."""
    try:
        db = sqlite3.connect(f"file:{quote(str(path))}?mode=ro", uri=True, timeout=0)
    except sqlite3.Error:
        return False
    try:
        db.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except sqlite3.OperationalError as exc:
        return "locked" in str(exc)
    finally:
        db.close()
    return False


def open_in_anki() -> list[str]:
    """The profiles Anki has open now (their collections are locked)."""
    return [name for name in names() if locked(base() / name / COLLECTION)]
