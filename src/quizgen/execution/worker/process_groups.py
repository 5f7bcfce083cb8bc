"""Letting go of a job's namespace without ending a gloo process group inside a deadlock.

A gloo process group runs its collectives on threads of its own (`pt_gloo_runloop`). A collective that
DDP launches during `backward()` captures torch's thread-local state, which then holds a Python object
(the `contextvars` context `torch.autograd.graph._engine_run_backward` stashes), so the gloo thread that
drops the finished work last must take the GIL to let go of it. After `destroy_process_group()` a DDP
model's Reducer can be the group's last holder; when the model is freed, the Reducer's dealloc keeps
the GIL while `~ProcessGroupGloo` joins the gloo threads, and a thread still waiting for the GIL to drop
its work never ends: a deadlock (pytorch/pytorch#56297). It strikes when the namespace is freed in the
few milliseconds between the backward and the gloo thread's turn at the GIL: about 1 job in 20 when
a job's namespace was simply dropped at its end. A ProcessGroup object's own dealloc releases the GIL
before that destructor; so the namespace is emptied while the groups its objects name are held here,
and those are let go after: their threads get the GIL, finish and end.
"""

from __future__ import annotations

import gc
import os
import sys
from types import CellType, FunctionType, ModuleType

GLOO_THREADS = frozenset({"pt_gloo_runloop", "gloo_tcp_loop"})


def gloo_threads() -> int:
    """How many of this process's threads are gloo's (0 where /proc cannot tell)."""
    try:
        tasks = os.listdir("/proc/self/task")
    except OSError:
        return 0
    found = 0
    for task in tasks:
        try:
            with open(f"/proc/self/task/{task}/comm") as f:
                found += f.read().strip() in GLOO_THREADS
        except OSError:
            continue  # the thread ended while we looked
    return found


def let_go(ns: dict[str, object]) -> None:
    """Empty a finished job's namespace so that each process group only its objects held ends from its
    ProcessGroup object (the GIL released), never from a Reducer. Costs nothing unless a gloo group is
    alive. A group something else still holds is kept for the life of the process (the worker retires)."""
    if not gloo_threads():
        return  # no gloo group alive: the namespace goes as any other
    held = _reachable_groups(ns)
    ns.clear()
    if any(_holders(group) for group in held):
        gc.collect()  # a model in a reference cycle (its hooks name it) goes now, not in a later job
    _kept.extend(group for group in held if _holders(group))
    held.clear()  # each group no one else holds ends here, from its ProcessGroup object


_kept: list[object] = []  # groups something outside the namespace held: never ended in this process
_OPAQUE = (ModuleType, type)  # what a job's objects may name but does not hold groups for it


def _holders(group: object) -> int:
    """How many references to the group there are besides `held`'s and this call's."""
    return sys.getrefcount(group) - 4  # held, the caller's loop, this argument, getrefcount's own


def _reachable_groups(ns: dict[str, object], limit: int = 1_000_000) -> list[object]:
    """The ProcessGroup objects the namespace's objects hold (a DDP model's `process_group`, ...), found
    by walking what they refer to, but for modules, classes and functions' globals (torch itself)."""
    from torch.distributed import ProcessGroup

    found: dict[int, object] = {}
    seen: set[int] = set()
    stack: list[object] = list(ns.values())
    while stack and len(seen) < limit:
        obj = stack.pop()
        if id(obj) in seen or issubclass(type(obj), _OPAQUE):
            continue
        seen.add(id(obj))
        if issubclass(type(obj), ProcessGroup):
            found[id(obj)] = obj
        elif type(obj) is FunctionType:
            cells = obj.__closure__ or ()
            stack += [*(obj.__defaults__ or ()), *(c.cell_contents for c in cells if _full(c))]
        else:
            stack += gc.get_referents(obj)
    return list(found.values())


def _full(cell: CellType) -> bool:
    try:
        cell.cell_contents  # noqa: B018 - an empty cell raises
    except ValueError:
        return False
    return True
