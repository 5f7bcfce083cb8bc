"""Autograd graphs in a state's fingerprint (order.tensors): saved values a backward freed."""

from __future__ import annotations

import pytest
import torch

from quizgen.execution.worker.order_search import program_state as order_state

pytestmark = pytest.mark.filterwarnings("ignore:The .grad attribute of a Tensor that is not a leaf")


def _fingerprint(ns: dict[str, object], shared: order_state.Shared) -> tuple[object, ...]:
    return order_state.capture(ns, set(ns), shared, False, True, False)[0]


def _state() -> dict[str, object]:
    w = torch.ones(3, requires_grad=True)
    return {"w": w, "loss": (w * torch.arange(3.0)).sin().sum()}


def test_freed_saved_values_are_told_apart_and_read_once() -> None:
    """A backward frees a node's saved tensors: the state fingerprints otherwise than before it (the
    error reading one gives), and once one read said so the others of that node are not read again
    (each read costs ~1-5 ms on torch 1.13); the fingerprint is the one a fresh walk gives."""
    ns, shared = _state(), order_state.Shared()
    before = _fingerprint(ns, shared)
    ns["loss"].backward()  # type: ignore[attr-defined]
    after = _fingerprint(ns, shared)
    assert after != before and shared.freed
    assert all(message.startswith("Trying to backward") for _, message in shared.freed.values())
    assert _fingerprint(ns, shared) == after == _fingerprint(ns, order_state.Shared())


def test_a_saved_value_changed_in_place_is_read_again() -> None:
    """Its error names the tensor's version, which may change again: it is not kept as freed."""
    w = torch.ones(3, requires_grad=True)
    x = w * 1
    ns: dict[str, object] = {"w": w, "x": x, "loss": (x * x).sum()}
    shared = order_state.Shared()
    with torch.no_grad():
        x.add_(1)
    first = _fingerprint(ns, shared)
    with torch.no_grad():
        x.add_(1)
    assert _fingerprint(ns, shared) != first and not shared.freed
