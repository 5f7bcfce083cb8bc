"""The result cache: hits, misses, corruption, and unchanged builds that never start torch."""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from quizgen import pipeline
from quizgen.execution import pool as execute
from quizgen.execution.cache import STORE, Cache, job_key
from quizgen.execution.protocol import Outcome

from .conftest import SAMPLE_DECK


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
    with sqlite3.connect(root / "build" / ".cache" / STORE) as db:
        db.execute("UPDATE results SET value = 'garbage'")
    assert pipeline.check(options(root)).executed == 7

    assert pipeline.check(options(root, use_cache=False)).executed == 7
