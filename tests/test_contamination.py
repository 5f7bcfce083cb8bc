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


@pytest.mark.filterwarnings("ignore::FutureWarning")
def test_torchs_own_step_wrapper_is_recognised_and_a_forged_one_is_not() -> None:
    """torch wraps an optimizer class's step the first time one is made; a card may forge the marks
    (`__wrapped__`, `hooked`) around a step of its own, which must still count."""
    import torch

    def plain(self: torch.optim.SGD, closure: Any = None) -> Any:
        return torch.optim.SGD.step(self, closure)

    # A class of this module with a step not wrapped yet (torch.optim's own may be, by earlier tests).
    probe = type("_Probe", (torch.optim.SGD,), {"__module__": __name__, "step": plain})
    globals()["_Probe"] = probe
    name = f"{__name__}._Probe"
    try:
        watch = contamination.Watch()
        assert name in watch.names
        probe([torch.nn.Parameter(torch.ones(1))])  # torch's first use: step wrapped
        assert probe.step is not plain and probe.step.hooked
        assert name not in watch.changed()

        def forged(self: object, closure: object = None) -> None:
            return None

        fake = torch.optim.Optimizer.profile_hook_step(forged)
        fake.__wrapped__ = probe.step  # type: ignore[attr-defined]
        fake.hooked = True  # type: ignore[attr-defined]
        probe.step = fake
        assert name in watch.changed()
    finally:
        del globals()["_Probe"]
