"""Issue 29, fifth round: a state copied again is copied by a recorded plan (order.plan), which must
build what the walk builds (order.program_state): the same fingerprint, nothing mutable shared with
the source, the same objects kept whole; states a plan cannot build are copied by the walk."""

from __future__ import annotations

from collections import OrderedDict, defaultdict
from dataclasses import dataclass
from typing import Any

import pytest
import torch

from quizgen.execution.worker.order_search import costs as order_costs
from quizgen.execution.worker.order_search import frozen as order_frozen
from quizgen.execution.worker.order_search import plan as order_plan
from quizgen.execution.worker.order_search import program_state as order_state
from quizgen.execution.worker.order_search import search as order_runs
from quizgen.execution.worker.order_search.plan import Plan
from tests.support.order_puzzles import job, search

pytestmark = pytest.mark.usefixtures("warm_search")


class Window(list):  # a list subclass with state of its own (the token window card's `Loader`)
    pass


class Box:
    pass


def _state() -> dict[str, Any]:
    """A training state after a step: a module, SGD with momentum (state keyed by parameters),
    views sharing a storage, a gradient, tensor attributes, plain containers of every kind."""
    torch.manual_seed(0)
    model = torch.nn.Linear(3, 2)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    model(torch.randn(4, 3)).sum().backward()
    opt.step()
    data = torch.arange(8.0)
    tagged = torch.ones(2)
    tagged.note = [1, 2]  # type: ignore[attr-defined]
    window = Window([data[:4], data[4:]])
    window.passes = 3  # type: ignore[attr-defined]
    box = Box()
    box.items = {"a": [1.5, -0.0], 2: (3, "x")}
    shared_list = [1, 2]
    return {
        "model": model, "opt": opt, "data": data, "head": data[:2], "tagged": tagged, "window": window,
        "box": box, "twice": (shared_list, shared_list), "atoms": (1, "b", None), "names": {"x", "y"},
        "frozen_names": frozenset({1, 2}), "ordered": OrderedDict(a=1), "counts": defaultdict(int, b=2),
        "fn": torch.nn.functional.mse_loss, "step": 3, "ignored": [0],
    }  # fmt: skip


def _fingerprint(ns: dict[str, Any], live: frozenset[str]) -> tuple[object, ...]:
    return order_state.capture(ns, live, order_state.Shared(), copy=False)[0]


def _recorded(ns: dict[str, Any], live: frozenset[str], shared: order_state.Shared) -> Plan:
    assert order_state.capture(ns, live, shared, copy=True)[1] is not None  # (a plan follows a walk)
    plan = order_plan.record(ns, live, shared)
    assert plan is not None
    return plan


def test_a_plan_builds_what_the_walk_builds() -> None:
    ns = _state()
    live = frozenset(ns) - {"ignored"}
    before = _fingerprint(ns, live)
    plan = _recorded(ns, live, order_state.Shared())
    walked = order_state.capture(ns, live, order_state.Shared(), copy=True)[1]
    assert walked is not None
    for copy in (plan(), plan()):
        assert _fingerprint(copy, live) == _fingerprint(walked, live) == before
        assert list(copy) == list(ns) and copy["ignored"] is ns["ignored"]  # (not live: not copied)
        assert copy["atoms"] is ns["atoms"] and copy["frozen_names"] is ns["frozen_names"]
        assert copy["fn"] is ns["fn"]
        assert copy["twice"][0] is copy["twice"][1] is not ns["twice"][0]
        assert copy["head"]._base is copy["data"]  # (a view of the copy, as the walk makes it)
        assert type(copy["window"]) is Window and copy["window"].passes == 3
        weight = copy["model"].weight
        assert type(weight) is torch.nn.Parameter and weight is not ns["model"].weight
        assert copy["opt"].param_groups[0]["params"][0] is weight and weight in copy["opt"].state
        copy["model"].weight.data.add_(1)  # a step run on the copy...
        copy["window"].append(0)
        copy["box"].items["a"].append(0)
        copy["tagged"].note.append(3)
        copy["names"].add("z")
        assert _fingerprint(ns, live) == before  # ...leaves the source as it was
    assert plan()["model"].weight.equal(ns["model"].weight)


class Scaler:  # keys its state by id(), as torch's GradScaler keys each optimizer's
    def __init__(self, opt: object) -> None:
        self.states = defaultdict(dict, {id(opt): {"stage": 1}})


def test_a_plan_keys_a_dict_by_the_id_of_its_own_copy_of_the_instance() -> None:
    ns = _state()
    ns["scaler"] = Scaler(ns["opt"])
    ns["big"] = {10**15 + 7: "a number, not an id"}
    live = frozenset(ns) - {"ignored"}
    plan = _recorded(ns, live, order_state.Shared())
    for copy in (plan(), plan()):
        assert list(copy["scaler"].states) == [id(copy["opt"])] and copy["opt"] is not ns["opt"]
        assert list(copy["big"]) == [10**15 + 7]
        assert _fingerprint(copy, live) == _fingerprint(ns, live)
    assert list(ns["scaler"].states) == [id(ns["opt"])]


def test_states_alike_share_a_plan_s_code_and_each_plan_builds_its_own_state() -> None:
    """Two states of the same shape (other values, other objects) record the same source: compiled once
    (most of what recording cost), while each plan copies the state it was recorded from."""
    first, second = _state(), _state()
    second["model"].weight.data.mul_(3)
    second["step"] = 4
    live = frozenset(first) - {"ignored"}
    plans = [_recorded(ns, live, order_state.Shared()) for ns in (first, second)]
    assert plans[0].__code__ is plans[1].__code__
    for plan, ns in zip(plans, (first, second), strict=True):
        copy = plan()
        assert _fingerprint(copy, live) == _fingerprint(ns, live)
        assert copy["model"].weight.equal(ns["model"].weight) and copy["step"] == ns["step"]
    assert _fingerprint(first, live) != _fingerprint(second, live)


def test_a_plan_keeps_frozen_tensors_themselves() -> None:
    data = torch.randn(4, 2)
    ns: dict[str, Any] = {"micro": [(data[0:2], data[2:4])], "w": torch.zeros(2, requires_grad=True)}
    shared = order_state.Shared()
    shared.frozen = order_frozen.Frozen(ns, frozenset(ns))
    copy = _recorded(ns, frozenset(ns), shared)()
    assert copy["micro"][0] is ns["micro"][0]  # (a tuple of frozen tensors is kept whole, as the walk does)
    assert copy["w"] is not ns["w"] and copy["w"].requires_grad


def _closure() -> object:
    count = [0]
    return lambda: count


@pytest.mark.parametrize(
    "value",
    [_closure(), torch.nn.Linear(1, 1).forward, [[1]] * 1],
    ids=["closure", "bound method", "plain"],
)
def test_what_a_plan_does_not_build_is_left_to_the_walk(value: object) -> None:
    ns = {"value": value}
    shared = order_state.Shared()
    assert order_state.capture(ns, None, shared, copy=True)[1] is not None
    plan = order_plan.record(ns, None, shared)
    assert (plan is not None) == (type(value) is list)
    cycle: list[object] = []
    cycle.append(cycle)
    assert order_plan.record({"cycle": cycle}, None, shared) is None


@dataclass
class _Holder:
    plan: Plan | None = None
    copies: int = 0


def test_a_state_is_planned_on_its_second_copy() -> None:
    ns = _state()
    plans, holder = order_plan.Plans(order_state.Shared()), _Holder()
    copies = [plans.copy(holder, ns, None) for _ in range(4)]
    assert (plans.recorded, plans.replayed) == (1, 2)
    assert len({id(copy["model"]) for copy in copies}) == 4
    assert all(_fingerprint(copy, frozenset(ns)) == _fingerprint(ns, frozenset(ns)) for copy in copies)


def test_a_state_with_few_copies_to_follow_is_not_planned() -> None:
    """Recording a plan costs more than a copy by the walk (1.3-1.6 of one): a node's second copy
    records one only when at least PLAN_PAYS more copies of it may follow (the steps still to run)."""
    ns = _state()
    plans, few, enough = order_plan.Plans(order_state.Shared()), _Holder(), _Holder()
    for more in range(order_plan.PLAN_PAYS - 1, -1, -1):  # the second copy has PLAN_PAYS - 2 to follow
        plans.copy(few, ns, None, more)
    assert few.plan is None and plans.recorded == 0
    for more in range(order_plan.PLAN_PAYS + 1, -1, -1):  # the second copy has PLAN_PAYS to follow
        plans.copy(enough, ns, None, more)
    assert enough.plan is not None and (plans.recorded, plans.replayed) == (1, order_plan.PLAN_PAYS)


def test_an_indented_loop_is_searched_alike_with_plans(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(order_runs, "SMALL", 0.0)  # (fast, however small)
    # States copied, never rebuilt from setup: the search chooses by the costs it measures, and on a busy
    # machine a copy timed dear once made it rebuild every state of this small puzzle, recording no plan
    monkeypatch.setattr(order_costs.Costs, "rebuild_is_cheaper", lambda self, steps: False)
    recorded: list[bool] = []
    record = order_plan.record

    def recording(*args: Any) -> Plan | None:
        plan = record(*args)
        recorded.append(plan is not None)
        return plan

    monkeypatch.setattr(order_plan, "record", recording)
    setup = """\
model = torch.nn.Linear(2, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.randn(4, 2)
micro = [(x[:2], x[2:])]
"""
    lines = ["for xb, yb in micro:", "model(xb).sum().backward()", "opt.step()", "opt.zero_grad()"]
    check = "assert model.weight.grad is None or not model.weight.grad.any()\n"
    puzzle = job(setup, lines, check, levels=[0, 1, 1, 0])
    assert search(puzzle, fast=True)[0] == search(puzzle, fast=False)[0]
    assert any(recorded)
