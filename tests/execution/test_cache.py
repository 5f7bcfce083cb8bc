"""The result cache: hits, misses, corruption, and unchanged builds that never start torch."""

from __future__ import annotations

import json
import os
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from quizgen import pipeline
from quizgen.constants import CACHE_KEEP_DAYS
from quizgen.errors import CardErrors
from quizgen.execution import pool as execute
from quizgen.execution.cache import Cache, job_key
from quizgen.execution.protocol import Outcome
from quizgen.project import state
from quizgen.project import store as store_module
from quizgen.project.store import LAYOUT, STORE
from tests.support.projects import SAMPLE_DECK, write_project


def test_job_key_ignores_places_but_not_code() -> None:
    job = {"type": "run", "code": {"code": "x = 1", "path": "a.yaml", "line": 3}}
    moved = {"type": "run", "code": {"code": "x = 1", "path": "b.yaml", "line": 30}}
    edited = {"type": "run", "code": {"code": "x = 2", "path": "a.yaml", "line": 3}}
    assert job_key(job) == job_key(moved)
    assert job_key(job) != job_key(edited)


def test_cache_round_trip_and_corruption(tmp_path: Path) -> None:
    cache = Cache(tmp_path)
    key = "ab" + "0" * 62
    assert cache.get(key) is None
    cache.put(key, Outcome(ok=True, output="hi\n", value={"type": "int", "value": 1, "display": "1"}))
    hit = cache.get(key)  # held for the next batch, which a read writes first
    assert hit is not None and hit.cached and hit.output == "hi\n"
    cache.close()
    reopened = Cache(tmp_path)
    assert reopened.get(key) is not None
    for corrupt in ("{not json", '{"key": "other", "outcome": {}}', json.dumps({"key": key}), "[]", ""):
        with sqlite3.connect(tmp_path / STORE) as db:
            db.execute("UPDATE results SET value = ? WHERE key = ?", (corrupt, key))
        assert reopened.get(key) is None, corrupt
    reopened.put(key, Outcome(ok=False, error="boom"))  # failures carry locations: never cached
    assert reopened.get(key) is None
    assert Cache(tmp_path, enabled=False).get(key) is None
    reopened.close()


def test_a_store_that_is_not_a_database_is_started_afresh(tmp_path: Path) -> None:
    (tmp_path / STORE).write_bytes(b"garbage, not SQLite" * 100)
    cache = Cache(tmp_path)
    key = "cd" + "1" * 62
    assert cache.get(key) is None
    cache.put(key, Outcome(ok=True, output="", value={"type": "int", "value": 2, "display": "2"}))
    cache.close()
    assert Cache(tmp_path).get(key) is not None


def test_results_are_written_in_batches_and_all_by_close(tmp_path: Path) -> None:
    cache = Cache(tmp_path)
    keys = [f"{i:064x}" for i in range(450)]
    for key in keys:
        cache.put(key, Outcome(ok=True, output=key))
        cache._flushed = time.monotonic()  # only the count may start a write here
    with sqlite3.connect(tmp_path / STORE) as db:
        assert db.execute("SELECT count(*) FROM results").fetchone()[0] == 400  # two batches of 200
    cache.close()
    found = Cache(tmp_path).get_many(keys)
    assert sorted(found) == keys and found[keys[7]].output == keys[7]


def test_two_caches_on_one_store_both_write(tmp_path: Path) -> None:
    first, second = Cache(tmp_path), Cache(tmp_path)
    first.put("a" * 64, Outcome(ok=True, output="first"))
    second.put("b" * 64, Outcome(ok=True, output="second"))
    assert first.get("b" * 64) is None  # not written yet
    second.flush()
    assert first.get("b" * 64) is not None
    first.close()
    second.close()
    assert sorted(Cache(tmp_path).get_many(["a" * 64, "b" * 64])) == ["a" * 64, "b" * 64]


class _NoPool:
    def __init__(self, *args: object, **kw: object) -> None:
        raise AssertionError("a worker pool was started for an unchanged build")


def test_unchanged_build_executes_nothing(
    project: Callable[..., Path], options: Callable[..., pipeline.Options], monkeypatch: pytest.MonkeyPatch
) -> None:
    root = project({"sample.yaml": SAMPLE_DECK})
    first = pipeline.check(options(root))
    assert first.executed == 7 and first.cached == 0

    monkeypatch.setattr(execute, "Pool", _NoPool)
    again = pipeline.check(options(root, pool=None))
    assert again.executed == 0 and again.cached == 7
    assert again.decks[0].cards[0].answer == first.decks[0].cards[0].answer

    # Editing one card executes that card only.
    deck = root / "cards" / "sample.yaml"
    text = deck.read_text().replace("(1.25 * w**2)", "(2.25 * w**2)").replace("answer: 8.0", "answer: 12.0")
    deck.write_text(text)
    monkeypatch.undo()
    edited = pipeline.check(options(root))
    assert edited.executed == 1 and edited.cached == 6
    answer = edited.decks[0].cards[0].answer or {}
    assert (answer["type"], answer["value"], answer["display"]) == ("float", 12.0, "12.0")

    # A corrupt entry is recomputed, not trusted.
    with sqlite3.connect(state.where(root / "build") / STORE) as db:
        db.execute("UPDATE results SET value = 'garbage'")
    assert pipeline.check(options(root)).executed == 7

    assert pipeline.check(options(root, use_cache=False)).executed == 7


# --- Pruning: every row knows the day it was last used; rows unused for CACHE_KEEP_DAYS go. ---

DAY = 20_000  # a fixed "today", moved by the tests through store_module.today


def _on_day(monkeypatch: pytest.MonkeyPatch, day: int) -> None:
    monkeypatch.setattr(store_module, "today", lambda: day)


def _used(root: Path, table: str = "highlight") -> dict[str, int]:
    with sqlite3.connect(root / STORE) as db:
        return {str(k): int(u) for k, u in db.execute(f"SELECT key, used FROM {table}")}


def _write(root: Path, monkeypatch: pytest.MonkeyPatch, day: int, entries: dict[str, str]) -> None:
    """A run on `day` that stores `entries` in the highlight table."""
    _on_day(monkeypatch, day)
    cache = Cache(root)
    cache.store("highlight", entries.items())
    cache.close()


def _read_run(root: Path, keys: list[str]) -> list[str]:
    """A run that reads `keys` (passed as an iterator) from the highlight table: the SQL it ran."""
    cache = Cache(root)
    db = cache._open()
    assert db is not None
    statements: list[str] = []
    db.set_trace_callback(statements.append)
    assert len(cache.lookup("highlight", iter(keys))) == len(keys)  # an iterator is read once, not twice
    cache.close()
    return [statement.split()[0] for statement in statements]


def _version(watcher: sqlite3.Connection) -> int:
    """Changes whenever another connection has committed a change to the file."""
    watcher.execute("SELECT count(*) FROM meta").fetchone()  # the version is brought up to date by a read
    return int(watcher.execute("PRAGMA data_version").fetchone()[0])


def test_rows_read_again_on_the_same_day_are_not_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    keys = [f"k{i:04}" for i in range(1200)]
    _write(tmp_path, monkeypatch, DAY - 1, {key: "v" for key in keys})
    with sqlite3.connect(tmp_path / STORE) as watcher:
        before = _version(watcher)
        _on_day(monkeypatch, DAY)
        # The first read of the day marks the rows used, a batch of keys per statement.
        assert _read_run(tmp_path, keys).count("UPDATE") == 3
        assert set(_used(tmp_path).values()) == {DAY} and _version(watcher) != before
        before = _version(watcher)
        for _ in range(2):  # later runs of the same day only read
            assert set(_read_run(tmp_path, keys)) == {"SELECT"}
        assert _version(watcher) == before


def test_rows_unused_for_the_keep_days_are_deleted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert CACHE_KEEP_DAYS == 30
    _write(tmp_path, monkeypatch, DAY - 40, {"read-today": "a"})
    _write(tmp_path, monkeypatch, DAY - 31, {"stale": "b"})
    _write(tmp_path, monkeypatch, DAY - 29, {"recent": "c"})
    assert set(_used(tmp_path)) == {"read-today", "stale", "recent"}  # none old enough on those days

    _on_day(monkeypatch, DAY)
    cache = Cache(tmp_path)
    assert cache.lookup("highlight", ["read-today"]) == {"read-today": "a"}
    cache.close()
    assert _used(tmp_path) == {"read-today": DAY, "recent": DAY - 29}


def test_the_prune_runs_once_a_day(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _write(tmp_path, monkeypatch, DAY, {"fresh": "a"})  # pruned today (there was nothing to prune)
    with sqlite3.connect(tmp_path / STORE) as db:
        db.execute("INSERT INTO highlight (key, value, used) VALUES ('old', 'b', ?)", (DAY - 60,))
    _write(tmp_path, monkeypatch, DAY, {"later": "c"})
    assert "old" in _used(tmp_path)  # a second run on the same day does not prune again
    _write(tmp_path, monkeypatch, DAY + 1, {})
    assert "old" in _used(tmp_path)  # a run that never opened the store does not open it to prune
    _on_day(monkeypatch, DAY + 1)
    cache = Cache(tmp_path)
    cache.lookup("highlight", ["fresh"])
    cache.close()
    assert sorted(_used(tmp_path)) == ["fresh", "later"]
    with sqlite3.connect(tmp_path / STORE) as db:
        assert db.execute("SELECT value FROM meta WHERE key = 'pruned'").fetchone() == (str(DAY + 1),)


def _pages(root: Path) -> tuple[int, int]:
    with sqlite3.connect(root / STORE) as db:
        (pages,) = db.execute("PRAGMA page_count").fetchone()
        (free,) = db.execute("PRAGMA freelist_count").fetchone()
        return int(pages), int(free)


def test_the_file_shrinks_only_when_the_prune_freed_most_of_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    most, little = tmp_path / "most", tmp_path / "little"
    for root, gone in ((most, 300), (little, 50)):
        _write(root, monkeypatch, DAY - 40, {f"gone{i}": "x" * 2000 for i in range(gone)})
        _write(root, monkeypatch, DAY - 10, {f"kept{i}": "y" * 2000 for i in range(200)})
        pages, _ = _pages(root)
        _write(root, monkeypatch, DAY, {"new": "z"})
        assert len(_used(root)) == 201
        if root == most:  # 300 of 500 rows went: the file is rewritten without them
            assert _pages(root)[0] < pages * 0.6 and _pages(root)[1] == 0
        else:  # 50 of 250: the free pages stay for the next rows
            assert _pages(root)[0] == pages and _pages(root)[1] > 0


def test_a_store_of_the_older_layout_is_replaced(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    key = "ef" + "2" * 62
    outcome = Outcome(ok=True, output="old", value={"type": "int", "value": 3, "display": "3"})
    with sqlite3.connect(tmp_path / STORE) as db:  # what quizgen wrote before rows had a `used` day
        db.execute("PRAGMA journal_mode=WAL")
        for table in ("results", "highlight", "compiled", "meta", "decks", "outputs", "torch", "extra"):
            db.execute(f"CREATE TABLE {table} (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        db.execute("INSERT INTO results VALUES (?, ?)", (key, json.dumps({"key": key, "outcome": {}})))
        db.execute("INSERT INTO highlight VALUES ('h', 'old')")

    monkeypatch.setattr(store_module, "_BUSY_SECONDS", 0.05)
    with sqlite3.connect(tmp_path / STORE, isolation_level=None) as blocker:
        blocker.execute("BEGIN IMMEDIATE")  # another build writing: this one runs without the store
        locked = Cache(tmp_path)
        assert locked.lookup("highlight", ["h"]) == {} and not locked.enabled
        locked.close()
        blocker.execute("ROLLBACK")

    cache = Cache(tmp_path)
    assert cache.lookup("highlight", ["h"]) == {} and cache.get(key) is None  # dropped, no error
    cache.put(key, outcome)
    cache.close()
    assert Cache(tmp_path).get(key) is not None
    with sqlite3.connect(tmp_path / STORE) as db:
        assert db.execute("PRAGMA user_version").fetchone() == (LAYOUT,)
        tables = {name for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        assert tables == set(store_module.TABLES)
        assert "used" in {row[1] for row in db.execute("PRAGMA table_info(results)")}


def test_an_unchanged_check_weeks_later_is_still_all_from_cache(
    project: Callable[..., Path],
    options: Callable[..., pipeline.Options],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    root = project({"sample.yaml": SAMPLE_DECK})
    _on_day(monkeypatch, DAY)
    assert pipeline.check(options(root)).executed == 7

    monkeypatch.setattr(execute, "Pool", _NoPool)
    for day in (DAY, DAY + 40, DAY + 40, DAY + 80):  # the prune of a later day keeps what this run read
        _on_day(monkeypatch, day)
        again = pipeline.check(options(root, pool=None))
        assert (again.executed, again.cached) == (0, 7), day
    store = state.where(root / "build")
    assert set(_used(store, "results").values()) == {DAY + 80}


def test_the_state_of_a_project_no_build_used_for_weeks_goes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, options: Callable[..., pipeline.Options]
) -> None:
    monkeypatch.setenv("QUIZGEN_CACHE_DIR", str(tmp_path / "state"))
    gone, used = state.folder(tmp_path / "gone" / "build"), state.folder(tmp_path / "used" / "build")
    weeks_ago = time.time() - (CACHE_KEEP_DAYS + 1) * 86400
    for folder in (gone, used):
        (folder / STORE).write_text("")
        os.utime(folder, (weeks_ago, weeks_ago))
    state.folder(tmp_path / "used" / "build")  # a build of it begins: in use again
    deck = "deck: D\ncards:\n  - {id: a, kind: basic, front: F, back: B}\n"
    root = write_project(tmp_path / "project", {"deck.yaml": deck})
    pipeline.build(options(root))
    assert not gone.exists()
    assert (used / STORE).exists() and state.where(root / "build").is_dir()


FLAKY = """\
deck: Flaky
setup: |
  import torch
cards:
  - id: flaky-proof
    kind: myth
    claim: "`w.grad` is None before any backward call."
    proof: |
      w = torch.ones(2, requires_grad=True)
      if open({flag!r}).read() == "fail":  # as a DDP proof whose queue timed out under load
          raise TimeoutError("the queue was empty")
    holds: w.grad is None
"""


def test_a_failure_is_never_kept_so_a_flaky_one_is_not_replayed(
    project: Callable[..., Path], options: Callable[..., pipeline.Options]
) -> None:
    flag = project({}) / "flag"  # read by the proof: outside a sandbox, as only a test would
    flag.write_text("fail")
    root = project({"flaky.yaml": FLAKY.format(flag=str(flag))})
    unsandboxed = options(root, pool=None, sandbox="off", jobs=1)
    with pytest.raises(CardErrors, match="TimeoutError: the queue was empty"):
        pipeline.check(unsandboxed)  # the proof raised: an answer to the worker, a failure to the card
    flag.write_text("pass")
    report = pipeline.check(unsandboxed)
    assert (report.executed, report.cached) == (1, 0)  # run again, not replayed
    again = pipeline.check(unsandboxed)
    assert (again.executed, again.cached) == (0, 1)  # what passed is kept
