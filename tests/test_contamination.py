"""The worker's watch on shared namespaces (execution/contamination.py): tags gathered at once must tell
exactly what reading them one by one tells."""

from __future__ import annotations

import ctypes
import types
from typing import Any

import pytest

from quizgen.execution import contamination


def test_gathered_tags_are_the_dicts_own_tags() -> None:
    dicts: list[dict[str, Any]] = [{}, {"a": 1}, types.__dict__.copy(), {"x": [1]}]
    read = contamination._tag_reader(dicts)
    one_by_one = [ctypes.c_uint64.from_address(id(d) + contamination._VERSION_OFFSET).value for d in dicts]
    assert list(read()) == one_by_one
    dicts[2]["new"] = 1
    moved = [int(a != b) for a, b in zip(read(), one_by_one, strict=True)]
    assert moved == [0, 0, 1, 0]


@pytest.mark.filterwarnings("ignore::FutureWarning")  # the walk reads torch's deprecated aliases too
def test_a_patched_module_is_noticed_and_a_restored_entry_is_not(monkeypatch: Any) -> None:
    import json

    watch = contamination.Watch()  # pytest itself changes other namespaces meanwhile: look at json only
    assert "json" not in watch.changed()
    saved = json.dumps
    json.dumps = lambda *a, **k: "patched"  # type: ignore[assignment]
    try:
        assert "json" in watch.changed()
    finally:
        json.dumps = saved
    assert "json" not in watch.changed()  # the same object back: its tag moved, but nothing differs
    json.__dict__["added_by_a_card"] = 1
    try:
        assert "json" in watch.changed()
    finally:
        del json.__dict__["added_by_a_card"]
