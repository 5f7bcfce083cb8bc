"""Issue 29: a tensor whose graph's first node a backward freed is shared by the copies of a state
(order.kept), not rebuilt by running again the steps that made it; the search stays exact when
a step changes one (it notices before the state is used, and starts again sharing nothing), and shares
nothing where code could look below that node."""

from __future__ import annotations

import pytest
import torch

from quizgen.execution.worker.order_search import frozen as order_frozen
from quizgen.execution.worker.order_search import kept as order_kept
from quizgen.execution.worker.order_search import program_state as order_state
from quizgen.execution.worker.order_search.names import freed_graphs_shareable
from tests.support.order_puzzles import job, recording, search

pytestmark = [
    pytest.mark.usefixtures("warm_search"),
    pytest.mark.filterwarnings("ignore:The .grad attribute of a Tensor that is not a leaf"),
]


def _state() -> dict[str, torch.Tensor]:
    w = torch.ones(3, requires_grad=True)
    loss = (w * torch.arange(3.0)).sin().sum() / 2
    loss.backward()
    return {"w": w, "loss": loss}


def _keeping() -> order_state.Shared:
    shared = order_state.Shared()
    shared.kept.on = True
    return shared


def test_a_copy_shares_a_tensor_whose_first_node_was_freed_and_fingerprints_alike() -> None:
    ns, shared = _state(), _keeping()
    _, copy = order_state.capture(ns, set(ns), shared, copy=True)
    assert copy is not None and copy["loss"] is ns["loss"] and copy["w"] is not ns["w"]
    # (below the first node, the copy's graph leads to the other state's `w`: never seen, so not compared)
    fingerprint = order_state.capture(ns, set(ns), shared, False, True)[0]
    assert order_state.capture(copy, set(copy), shared, False, True)[0] == fingerprint
    assert ("freed root", "DivBackward0", shared.freed[next(iter(shared.freed))][1]) in fingerprint
    # without `keeping` nothing is shared: a graph is never copied
    with pytest.raises(order_state.Opaque, match="autograd history"):
        order_state.capture(ns, set(ns), order_state.Shared(), copy=True)


def test_only_a_freed_first_node_is_shared() -> None:
    w = torch.ones(3, requires_grad=True)
    live = {"w": w, "loss": (w * 2).sum()}  # (no backward yet: a step's backward would reach `w`)
    with pytest.raises(order_state.Opaque, match="autograd history"):
        order_state.capture(live, set(live), _keeping(), copy=True)
    ns = _state()
    ns["alias"] = ns["loss"].detach()  # (its data is the shared tensor's: a copy could not keep it so)
    with pytest.raises(order_state.Opaque):
        order_state.capture(ns, set(ns), _keeping(), copy=True)
    ns = _state()
    ns["loss"].grad = torch.ones(())  # (a gradient a step could change in place, unseen by the seal)
    with pytest.raises(order_state.Opaque):
        order_state.capture(ns, set(ns), _keeping(), copy=True)


@pytest.mark.parametrize(
    "change",
    [
        lambda t: t.mul_(2),
        lambda t: t.detach_(),
        lambda t: setattr(t, "note", 1),
        lambda t: t.retain_grad(),
    ],
)
def test_a_shared_tensor_changed_is_noticed_before_its_states_are_used(change: object) -> None:
    ns, shared = _state(), _keeping()
    order_state.capture(ns, set(ns), shared, copy=True)
    shared.kept.verify(ns)
    change(ns["loss"])  # type: ignore[operator]
    with pytest.raises(order_frozen.Thawed):
        shared.kept.verify(ns)


def test_code_that_can_look_below_a_first_node_shares_none() -> None:
    assert freed_graphs_shareable(["loss.backward()", "opt.step()"])
    for code in ["print(loss.grad_fn)", "loss.backward(inputs=[w])", "torch.autograd.grad(loss, w)"]:
        assert not freed_graphs_shareable(["loss.backward()", code])


@pytest.fixture
def events(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Each tensor shared ("kept") and each restart ("thawed") of fast searches, however small; states
    are copied, never rebuilt from setup, whatever this machine's speed makes either cost (a tensor is
    shared by copies: where steps ran faster than a copy, a search rebuilt every state and shared none)."""
    from quizgen.execution.worker.order_search.costs import Costs

    monkeypatch.setattr(Costs, "rebuild_is_cheaper", lambda self, steps: False)
    seen: list[str] = []
    recording(monkeypatch, order_kept.Kept, "keep", seen, called="kept")
    recording(monkeypatch, order_kept.Kept, "verify_one", seen, raised="thawed")
    return seen


SETUP = """\
model = torch.nn.Linear(2, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
micro = [(torch.randn(2, 2), torch.randn(2, 1)) for _ in range(2)]
"""
LOOP = ["for xb, yb in micro:", "loss = ((model(xb) - yb) ** 2).mean() / 2", "loss.backward()"]


def test_states_after_a_loop_share_its_last_loss(events: list[str]) -> None:
    """After the loop `loss` holds a graph its backward freed; the lines after it read `loss`."""
    lines = [*LOOP, "opt.step()", "opt.zero_grad()", "last = loss.item()"]
    check = "assert model.weight.grad is None or not model.weight.grad.any()\nassert last > 0\n"
    puzzle = job(SETUP, lines, check, levels=[0, 1, 1, 0, 0, 0, 0], distractors=("(loss * 2).backward()",))
    fast = search(puzzle, fast=True)[0]
    assert "kept" in events and "thawed" not in events
    assert fast == search(puzzle, fast=False)[0]


def test_a_step_that_changes_a_shared_loss_restarts_the_search_sharing_nothing(events: list[str]) -> None:
    """`loss.mul_(0)` after the loop changes the tensor the other branches hold: from one state, later
    steps see it changed or not, depending on the order; the fast search must agree with the plain one."""
    lines = [*LOOP, "opt.step()", "last = loss.item()", "loss.mul_(0)"]
    check = "assert last > 0\n"
    puzzle = job(SETUP, lines, check, levels=[0, 1, 1, 0, 0, 0])
    fast = search(puzzle, fast=True)[0]
    assert "kept" in events and "thawed" in events
    assert fast == search(puzzle, fast=False)[0]
