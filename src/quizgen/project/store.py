"""The build's stored state: one SQLite store per project, in its state folder, with a table per memo.

One SQLite store (`cache.sqlite3`, WAL) rather than a file per entry: entries are written in batches,
so the parent never stops to write one while the workers wait, and an unchanged build reads every entry
it needs in a few queries. SQLite keeps the store whole when a build is killed and lets concurrent builds
share it; any failure to read or write it only costs time (the entry is recomputed). It lives in the
project's state folder in the user's cache directory (project/state.py), never in the project: its keys
are hashes anyone can compute, so rows a repository shipped could forge results and highlighted code.
Its tables: execution's results (execution/cache.py), highlighted code, snippets known to compile,
whether a card's code uses torch, parsed card files, what each per-deck output was made from.

Every row carries the day it was last used (`used`: written, or read by `lookup`), so the store does not
grow forever: once a day, when a run closes it, rows no run used for CACHE_KEEP_DAYS are deleted. A read
refreshes the day only when it is older than today, so a second run on the same day writes nothing for
what it only read.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import time
from collections.abc import Iterable
from pathlib import Path
from typing import TypeVar

from quizgen import __version__
from quizgen.constants import CACHE_KEEP_DAYS
from quizgen.errors import OutputError
from quizgen.project import state

STORE = "cache.sqlite3"
# key -> value text; only these names reach SQL. decks: parsed card files (cards/stored.py); outputs:
# what a per-deck output was made from (render/reuse.py); torch: whether a card's code uses torch
# (render/present.py).
TABLES = ("results", "highlight", "compiled", "meta", "decks", "outputs", "torch")
_FLUSH_EVERY = 200  # results held before a write, at most
_FLUSH_SECONDS = 1.0  # ... or this long since the last one
_BUSY_SECONDS = 30.0  # how long to wait for another build's write to finish
_BATCH = 500  # keys per query: below SQLite's limit on bound variables
# PRAGMA user_version of the tables' layout. A store of another one (an older quizgen's, without `used`)
# is dropped and made afresh: it is a cache. Raise it when a table gains or changes a column.
LAYOUT = 1
_PRUNED = "pruned"  # meta key: the day the store was last pruned


S = TypeVar("S", bound="Store")


def today() -> int:
    """Days since the epoch (UTC), the unit of `used`; a function of its own so tests can move the clock."""
    return int(time.time() // 86400)


def code_stamp() -> str:
    """quizgen's own files by name, size and time: what a memo of their work is only good for."""
    package = Path(__file__).parent.parent
    stamps = [(str(p), (s := p.stat()).st_size, s.st_mtime_ns) for p in sorted(package.rglob("*.py"))]
    return hashlib.sha256(json.dumps([__version__, stamps]).encode()).hexdigest()


class Memo:
    """The loader's memo of parsed card files (quizgen/cards/stored.py), in a table of the store."""

    def __init__(self, cache: Store) -> None:
        self.cache, self.salt = cache, code_stamp()

    def recall(self, key: str) -> str | None:
        return self.cache.lookup("decks", [key]).get(key)

    def keep(self, key: str, text: str) -> None:
        self.cache.store("decks", [(key, text)])


class Store:
    """The store under `root`; opened on first use, written in batches (`flush` writes what is held)."""

    def __init__(self, root: Path, enabled: bool = True) -> None:
        self.root = root
        self.enabled = enabled
        self._db: sqlite3.Connection | None = None
        self._held: dict[str, dict[str, str]] = {name: {} for name in TABLES}  # table -> key -> value
        self._stale: dict[str, set[str]] = {name: set() for name in TABLES}  # read, last used before today
        self._flushed = time.monotonic()

    @property
    def path(self) -> Path:
        return self.root / STORE

    def _open(self) -> sqlite3.Connection | None:
        if self._db is not None or not self.enabled:
            return self._db
        try:
            self._db = _connect(self.path)
        except sqlite3.OperationalError:  # locked past the wait, read-only, ...: run without it
            self.enabled = False
        except sqlite3.DatabaseError:  # not a database (a foreign or damaged file): start it afresh
            try:
                for suffix in ("", "-wal", "-shm"):
                    self.path.with_name(STORE + suffix).unlink(missing_ok=True)
                self._db = _connect(self.path)
            except (OSError, sqlite3.Error):
                self.enabled = False
        except OSError:
            self.enabled = False  # a cache that cannot be opened only costs time
        return self._db

    def lookup(self, table: str, keys: Iterable[str]) -> dict[str, str]:
        """The stored values of those `keys` that `table` has; each found is marked used today (written
        with the next batch, and only for rows whose day is older)."""
        asked = list(keys)  # read twice below: an iterator would be spent by the first
        held = self._held[_table(table)]
        found = {key: held[key] for key in asked if key in held}  # not written yet, but known
        wanted = [key for key in dict.fromkeys(asked) if key not in found]
        db = self._open()
        if db is None or not wanted:
            return found
        day, stale = today(), self._stale[table]
        try:
            for start in range(0, len(wanted), _BATCH):
                part = wanted[start : start + _BATCH]
                marks = ",".join("?" * len(part))
                rows = db.execute(f"SELECT key, value, used FROM {table} WHERE key IN ({marks})", part)
                for key, value, used in rows:
                    found[str(key)] = str(value)
                    if used < day:
                        stale.add(str(key))
        except sqlite3.Error:
            pass  # an unreadable store: what it would have had is recomputed
        return found

    def value(self, table: str, key: str) -> str | None:
        """The stored value of one key, or None (what a memo asks while a render runs)."""
        return self.lookup(table, [key]).get(key)

    def keys(self, table: str) -> set[str]:
        """Every key `table` holds (for tables whose keys are all there is to know).

        Not a use: which of them the caller needs is not known here, and marking all would keep all. Such
        a row goes CACHE_KEEP_DAYS after it was stored; a caller that needs it again then stores it again.
        """
        db = self._open()
        try:
            return {str(k) for (k,) in db.execute(f"SELECT key FROM {_table(table)}")} if db else set()
        except sqlite3.Error:
            return set()

    def store(self, table: str, entries: Iterable[tuple[str, str]]) -> None:
        """Hold `entries` for `table`; they are written with the next batch."""
        if self.enabled:
            self._held[_table(table)].update(entries)
            held = sum(len(v) for v in self._held.values())
            if held >= _FLUSH_EVERY or time.monotonic() - self._flushed >= _FLUSH_SECONDS:
                self.flush()

    def flush(self) -> None:
        """Write every held entry, and today's day on every row read since the last write, in one
        transaction."""
        self._flushed = time.monotonic()
        if not any(self._held.values()) and not any(self._stale.values()):
            return  # an unchanged run on the day of the last one: nothing to write
        db = self._open()
        held, self._held = self._held, {name: {} for name in TABLES}
        stale, self._stale = self._stale, {name: set() for name in TABLES}
        if db is None:
            return
        day = today()
        try:
            with db:
                for table, entries in held.items():
                    if entries:
                        rows = ((key, value, day) for key, value in entries.items())
                        sql = f"INSERT OR REPLACE INTO {table} (key, value, used) VALUES (?, ?, ?)"
                        db.executemany(sql, rows)
                for table, keys in stale.items():
                    _mark_used(db, table, sorted(keys - held[table].keys()), day)
        except sqlite3.Error:
            pass  # a cache that cannot be written only costs time

    def close(self) -> None:
        """Write what is held; once a day, also delete what no run used for CACHE_KEEP_DAYS."""
        self.flush()
        if self._db is not None:
            _prune(self._db, today())
            self._db.close()
            self._db = None

    @classmethod
    def for_output(cls: type[S], out_dir: Path, enabled: bool = True) -> S:
        """The store of the project whose outputs go to `out_dir`; off when `enabled` is False or when its
        folder cannot be made (a store that cannot be kept only costs time)."""
        if enabled:
            try:
                return cls(state.folder(out_dir))
            except OutputError:
                pass
        return cls(state.where(out_dir), enabled=False)


def _table(name: str) -> str:
    if name not in TABLES:
        raise ValueError(f"no cache table {name!r}")
    return name


def _mark_used(db: sqlite3.Connection, table: str, keys: list[str], day: int) -> None:
    """Set `used` to `day` on those rows, a batch of keys per statement (as `lookup` reads them)."""
    for start in range(0, len(keys), _BATCH):
        part = keys[start : start + _BATCH]
        marks = ",".join("?" * len(part))
        db.execute(f"UPDATE {table} SET used = ? WHERE key IN ({marks})", [day, *part])


def _prune(db: sqlite3.Connection, day: int) -> None:
    """Delete the rows no run used for CACHE_KEEP_DAYS, unless done already today; when that freed
    most of the file, give the space back (VACUUM rewrites the whole store, so only then)."""
    try:
        row = db.execute("SELECT value FROM meta WHERE key = ?", (_PRUNED,)).fetchone()
        if row is not None and str(row[0]).isdigit() and int(row[0]) >= day:
            return
        with db:
            db.execute(
                "INSERT OR REPLACE INTO meta (key, value, used) VALUES (?, ?, ?)", (_PRUNED, str(day), day)
            )
            for table in TABLES:
                if table != "meta":  # a few rows, read or rewritten by every run
                    db.execute(f"DELETE FROM {table} WHERE used < ?", (day - CACHE_KEEP_DAYS,))
        (free,) = db.execute("PRAGMA freelist_count").fetchone()
        (pages,) = db.execute("PRAGMA page_count").fetchone()
        if free * 2 > pages:
            db.execute("VACUUM")
    except sqlite3.Error:
        pass  # locked, read-only, damaged: pruned another day


def _lay_out(db: sqlite3.Connection) -> None:
    """Make the tables afresh, dropping whatever the store held: it is of another layout, or new."""
    db.execute("BEGIN IMMEDIATE")  # two builds opening an old store at once: the second sees it done
    try:
        if db.execute("PRAGMA user_version").fetchone()[0] != LAYOUT:
            query = "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite%'"
            for (name,) in db.execute(query).fetchall():
                db.execute('DROP TABLE "{}"'.format(str(name).replace('"', '""')))
            for table in TABLES:
                db.execute(
                    f"CREATE TABLE {table} (key TEXT PRIMARY KEY, value TEXT NOT NULL,"
                    " used INTEGER NOT NULL DEFAULT 0)"  # the default: an older quizgen's writes
                )
            db.execute(f"PRAGMA user_version = {LAYOUT}")
        db.execute("COMMIT")
    except sqlite3.Error:
        if db.in_transaction:
            db.execute("ROLLBACK")
        raise


def _connect(path: Path) -> sqlite3.Connection:
    path.parent.mkdir(parents=True, exist_ok=True)
    db = sqlite3.connect(path, timeout=_BUSY_SECONDS, isolation_level=None)
    try:
        db.execute("PRAGMA journal_mode=WAL")  # readers never wait for a writer; a killed one loses nothing
        db.execute("PRAGMA synchronous=NORMAL")  # a power cut may lose the last batch: it is recomputed
        if db.execute("PRAGMA user_version").fetchone()[0] != LAYOUT:
            _lay_out(db)
        db.execute("SELECT count(*) FROM results LIMIT 1").fetchone()  # a damaged file fails here
    except sqlite3.Error:
        db.close()
        raise
    db.isolation_level = "DEFERRED"  # `with db:` is one transaction per batch
    return db
