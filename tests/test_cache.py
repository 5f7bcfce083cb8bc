"""The result cache: hits, misses, corruption, and unchanged builds that never start torch."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from quizgen import pipeline
from quizgen.execution import pool as execute
from quizgen.execution.cache import Cache, job_key
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
    hit = cache.get(key)
    assert hit is not None and hit.cached and hit.output == "hi\n"
    path = tmp_path / "ab" / f"{key}.json"
    for corrupt in ("{not json", '{"key": "other", "outcome": {}}', json.dumps({"key": key}), "[]", ""):
        path.write_text(corrupt)
        assert cache.get(key) is None, corrupt
    cache.put(key, Outcome(ok=False, error="boom"))  # failures carry locations: never cached
    assert cache.get(key) is None
    assert Cache(tmp_path, enabled=False).get(key) is None


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
    assert edited.decks[0].cards[0].answer == {"type": "float", "value": 12.0, "display": "12.0"}

    # A corrupt entry is recomputed, not trusted.
    for entry in (root / "build" / ".cache").rglob("*.json"):
        entry.write_text("garbage")
    assert pipeline.check(options(root)).executed == 7

    assert pipeline.check(options(root, use_cache=False)).executed == 7
