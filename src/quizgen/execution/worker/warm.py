"""Warming the zygote: what torch does the first time a feature is used, done once before workers fork.

torch changes shared state on first use: it wraps every optimizer class's `step` the first time one is
made, loads decompositions the first time `vmap` runs, imports `torch._dynamo` (seconds) with the first
optimizer. Done here, in the zygote, those changes are part of the warm state every job's process is
forked from: an ordinary card does not pay for them (each job would, in a process of its own).
Only a warm pool does it (the zygote of a build with more jobs than workers); each step is skipped when
this torch lacks it, so a torch of another version only warms less. What few jobs use (`torch.compile`,
`torch.func`'s transforms) is made on demand (`on_demand`, execution/warming.py), where those jobs run.
"""

from __future__ import annotations

import contextlib
import importlib
import inspect
import io
import warnings
from collections.abc import Callable, Iterator
from typing import Any


def first_use() -> None:
    """Use once every feature whose first use changes torch's shared state (warnings silenced)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        steps = (_optimizers, _schedulers, _amp, _hooks, _distributed, _data, _checkpoint, _lazy)
        for step in steps:
            with contextlib.suppress(Exception):
                step()
    _made.add("optimizers")  # (on_demand: made already)


_made: set[str] = set()  # what on_demand made in this process


def not_made(features: list[str]) -> list[str]:
    """The features named that on_demand knows and has not made in this process."""
    return [name for name in features if name in ON_DEMAND and name not in _made]


def on_demand(features: list[str]) -> bool:
    """Make the first uses named (execution/warming.py) not made yet: whether any was made (a torch
    without the feature makes none). Warnings silenced."""
    made = False
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in features:
            if name in ON_DEMAND and name not in _made:
                _made.add(name)
                with contextlib.suppress(Exception):
                    made |= ON_DEMAND[name]()
    return made


def _compile() -> bool:
    import torch

    if not hasattr(torch, "compile"):  # new in 2.0
        return False
    # Made, never called: wrapping imports what compiling needs (on Python 3.11 before torch 2.1 it
    # raises); compiling would start threads (the zygote must stay single-threaded to fork) and write
    # caches.
    torch.compile(torch.nn.Linear(2, 1))
    return True


def _optimizers_made() -> bool:
    _optimizers()
    return True


def _func_made() -> bool:
    _func()
    return True


ON_DEMAND: dict[str, Callable[[], bool]] = {
    "compile": _compile,
    "optimizers": _optimizers_made,
    "func": _func_made,
}


def _optimizers() -> None:
    import torch

    for cls in _classes(torch.optim, torch.optim.Optimizer):
        with contextlib.suppress(Exception):
            _step_once(cls)


def _step_once(cls: type) -> None:
    import torch

    w = torch.nn.Parameter(torch.ones(2, 2))  # 2-D: Muon takes matrices only
    opt = cls([w])
    if cls.__name__ == "SparseAdam":
        return  # made (its step patched); a dense gradient would fail its step
    (w * w).sum().backward()
    opt.step(lambda: (w * w).sum())  # LBFGS needs the closure; the others accept one
    opt.zero_grad()


def _schedulers() -> None:
    import torch
    from torch.optim import lr_scheduler as s
    from torch.optim import swa_utils

    made: dict[str, Callable[[Any], Any]] = {
        "LambdaLR": lambda opt: s.LambdaLR(opt, lambda epoch: 1.0),
        "MultiplicativeLR": lambda opt: s.MultiplicativeLR(opt, lambda epoch: 1.0),
        "StepLR": lambda opt: s.StepLR(opt, 1),
        "MultiStepLR": lambda opt: s.MultiStepLR(opt, [1]),
        "ConstantLR": lambda opt: s.ConstantLR(opt),
        "LinearLR": lambda opt: s.LinearLR(opt),
        "ExponentialLR": lambda opt: s.ExponentialLR(opt, 0.9),
        "PolynomialLR": lambda opt: s.PolynomialLR(opt),
        "CosineAnnealingLR": lambda opt: s.CosineAnnealingLR(opt, 2),
        "CosineAnnealingWarmRestarts": lambda opt: s.CosineAnnealingWarmRestarts(opt, 2),
        "CyclicLR": lambda opt: s.CyclicLR(opt, 0.01, 0.1),
        "OneCycleLR": lambda opt: s.OneCycleLR(opt, 0.1, total_steps=4),
        "ReduceLROnPlateau": lambda opt: s.ReduceLROnPlateau(opt),
        "SequentialLR": lambda opt: s.SequentialLR(opt, [s.ConstantLR(opt), s.ExponentialLR(opt, 0.9)], [1]),
        "ChainedScheduler": lambda opt: s.ChainedScheduler([s.ConstantLR(opt), s.ExponentialLR(opt, 0.9)]),
        "SWALR": lambda opt: swa_utils.SWALR(opt, 0.05),
    }
    for name, make in made.items():
        with contextlib.suppress(Exception):
            model = torch.nn.Linear(2, 1)
            opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
            sched = make(opt)
            averaged = swa_utils.AveragedModel(model) if name == "SWALR" else None
            model(torch.ones(1, 2)).sum().backward()
            opt.step()
            sched.step(1.0) if name == "ReduceLROnPlateau" else sched.step()
            if averaged is not None:
                averaged.update_parameters(model)


def _amp() -> None:
    import torch

    model = torch.nn.Linear(2, 2)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    # A CPU GradScaler since 2.3 (before, CUDA's only): autocast alone is warmed without one.
    scaler = torch.amp.GradScaler("cpu") if hasattr(torch.amp, "GradScaler") else None
    for dtype in (torch.bfloat16, torch.float16):  # 1.13 autocasts the CPU to bfloat16 only
        with torch.autocast("cpu", dtype=dtype):
            loss = model(torch.ones(2, 2)).float().sum()
        if scaler is None:
            loss.backward()
            opt.step()
        else:
            scaler.scale(loss).backward()
            scaler.unscale_(opt)
            scaler.step(opt)
            scaler.update()
        opt.zero_grad()


def _hooks() -> None:
    import torch

    layer = torch.nn.Linear(2, 2)
    x = torch.ones(1, 2, requires_grad=True)
    hooks: dict[str, Callable[..., Any]] = {
        "register_forward_pre_hook": lambda module, args: None,
        "register_forward_hook": lambda module, args, out: None,
        "register_full_backward_pre_hook": lambda module, grad_out: None,  # since 2.0
        "register_full_backward_hook": lambda module, grad_in, grad_out: None,
    }
    handles = [getattr(layer, name)(hook) for name, hook in hooks.items() if hasattr(layer, name)]
    handles.append(x.register_hook(lambda grad: grad))
    layer(x).sum().backward()
    torch.nn.utils.clip_grad_norm_(layer.parameters(), 1.0)
    for handle in handles:
        handle.remove()


def _func() -> None:
    import torch
    from torch import func

    x = torch.ones(3)
    func.grad(lambda t: t.sin().sum())(x)
    func.vmap(func.jacrev(torch.sin))(torch.ones(2, 3))
    func.jacfwd(torch.sin)(x)
    layer = torch.nn.Linear(3, 1)
    func.functional_call(layer, dict(layer.named_parameters()), (x,))


def _distributed() -> None:
    import torch.distributed

    if not torch.distributed.is_available():
        return
    # imports only: a process group would start threads here. `torch.distributed.nn`'s functions take the
    # current group as a default when it is imported: imported now, no card's group is held open by it.
    for name in ("torch.distributed.device_mesh", "torch.distributed.nn", "torch.nn.parallel"):
        with contextlib.suppress(ImportError):  # (device_mesh is new in 2.2)
            importlib.import_module(name)


def _data() -> None:
    import torch
    from torch.utils.data import DataLoader, TensorDataset

    for _ in DataLoader(TensorDataset(torch.ones(4, 1)), batch_size=2, shuffle=True):
        pass
    # A loader with worker processes installs torch's SIGCHLD handler once, and notes it in a module
    # global (it checks only the loaders' own workers, none here): done here rather than by a card.
    from torch.utils.data._utils import signal_handling

    signal_handling._set_SIGCHLD_handler()


def _checkpoint() -> None:
    import torch
    import torch.utils.checkpoint

    buffer = io.BytesIO()
    torch.save({"w": torch.ones(1)}, buffer)
    buffer.seek(0)
    torch.load(buffer)
    # Activation checkpointing notes the default device type in a class attribute on first use.
    layer = torch.nn.Linear(2, 2)
    for reentrant in (False, True):
        x = torch.ones(1, 2, requires_grad=True)
        torch.utils.checkpoint.checkpoint(layer, x, use_reentrant=reentrant).sum().backward()


# Modules torch imports inside a function on first use that the steps above do not reach (the first
# dispatch mode set imports the schema checker; a DDP card's ranks, its communication hooks and
# multiprocessing's queues): imported in every job that needs them, they would cost each of those jobs.
LAZY = (
    "torch._subclasses.schema_check_mode",
    "torch.distributed.algorithms.ddp_comm_hooks",
    "multiprocessing.popen_fork",
    "multiprocessing.queues",
    "multiprocessing.synchronize",
)


def _lazy() -> None:
    for name in LAZY:
        with contextlib.suppress(ImportError):
            importlib.import_module(name)


def _classes(module: Any, base: type) -> Iterator[type]:
    for value in vars(module).values():
        if inspect.isclass(value) and issubclass(value, base) and value is not base:
            yield value
