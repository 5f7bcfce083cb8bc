"""Issue 29: tensors only read are shared by every branch of the fast search, not copied (order.frozen),
and the search stays exact when a step does change one: it notices (a version, or the bytes at the
end) and starts again without freezing, or refuses to copy a view of frozen data."""

from __future__ import annotations

import pytest
import torch

from quizgen.execution.worker.order_search import frozen as order_frozen
from quizgen.execution.worker.order_search import program_state as order_state
from tests.support.order_puzzles import job, recording, search

pytestmark = pytest.mark.usefixtures("warm_search")


@pytest.fixture
def events(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every search run fast ("fast"), what it froze ("froze N") and each restart ("thawed")."""
    seen: list[str] = []
    init = order_frozen.Frozen.__init__

    def recording_init(self: order_frozen.Frozen, ns: dict[str, object], live: frozenset[str]) -> None:
        init(self, ns, live)
        seen.append(f"froze {len(self.tensors)}")

    monkeypatch.setattr(order_frozen.Frozen, "__init__", recording_init)
    recording(monkeypatch, order_frozen.Frozen, "check", seen, raised="thawed")
    return seen


SETUP = """\
model = torch.nn.Linear(3, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
batches = [(torch.randn(4, 3), torch.randn(4, 1)) for _ in range(2)]
step = 0
"""
LINES = [
    "x, y = batches[step]",
    "opt.zero_grad()",
    "loss = ((model(x) - y) ** 2).mean()",
    "loss.backward()",
    "opt.step()",
    "step += 1",
]
CHECK = "assert step == 2 and model.weight.grad is not None\n"


def test_batches_only_read_are_frozen_and_shared_by_copies(events: list[str]) -> None:
    puzzle = job(SETUP, LINES, CHECK, repeat=2)
    fast, _ = search(puzzle, fast=True)
    assert "froze 4" in events and "thawed" not in events
    assert fast == search(puzzle, fast=False)[0]


def test_a_copy_holds_the_frozen_tensor_itself() -> None:
    data = torch.randn(4, 2)
    ns: dict[str, object] = {"micro": [(data[0:2], data[2:4])], "w": torch.zeros(2, requires_grad=True)}
    shared = order_state.Shared()
    shared.frozen = order_frozen.Frozen(ns, frozenset(ns))
    assert len(shared.frozen.tensors) == 3  # the two views and their base; never `w`
    _, copy = order_state.capture(ns, ns, shared, copy=True)
    assert copy is not None
    assert copy["micro"][0][0] is ns["micro"][0][0]  # type: ignore[index]
    assert copy["w"] is not ns["w"]
    ns["view"] = data.view(-1)  # a tensor a step made, viewing frozen data: no copy can keep it so
    with pytest.raises(order_state.Opaque, match="a view of data every branch shares"):
        order_state.capture(ns, ns, shared, copy=True)


def test_a_step_that_changes_frozen_data_restarts_the_search_unfrozen(events: list[str]) -> None:
    """`x.mul_(2)` changes a batch in place: from one state, later steps see it changed or not,
    depending on the order; the fast search must agree with the plain one."""
    lines = ["x, y = batches[step]", "x.mul_(2)", "loss = ((model(x) - y) ** 2).mean()", *LINES[3:]]
    check = "assert step == 1 and torch.allclose(batches[0][0], ref_x * 2)\n"
    puzzle = job(SETUP + "ref_x = batches[0][0].clone()\n", lines, check)
    fast, _ = search(puzzle, fast=True)
    assert "thawed" in events
    assert fast == search(puzzle, fast=False)[0]


def test_a_write_no_version_sees_is_caught_at_the_end(events: list[str]) -> None:
    """A write through numpy bumps no version (and names `numpy`, so nothing is frozen at all)."""
    lines = ["x, y = batches[step]", "x.numpy()[0, 0] = 5.0", *LINES[2:]]
    puzzle = job(SETUP, lines, CHECK.replace("step == 2", "step == 1"))
    fast, _ = search(puzzle, fast=True)
    assert not any(event.startswith("froze") for event in events)
    assert fast == search(puzzle, fast=False)[0]
