"""The zygote's start: torch imported and warmed up once, the state every worker and job is forked from.

zygote.py runs these before it forks its first worker; nothing here runs card code.
"""

from __future__ import annotations

import gc
import os
import warnings

from quizgen.execution.sandbox.libc import prctl
from quizgen.execution.worker import huge_pages


def learner_warning(
    message: Warning | str, category: type[Warning], filename: str, lineno: int, line: str | None = None
) -> str:
    """A warning as a card's output shows it to learners: `UserWarning: text`, without the file and line
    it came from (a path on the author's machine, inside torch or the card file)."""
    return f"{category.__name__}: {message}\n"


def warm_up(optimizers: bool) -> str:
    import torch
    import torch.nn
    import torch.optim

    from quizgen.execution.worker import backtraces, runner, snippets

    backtraces.skip_cpp_traces()  # before anything raises: an error costs 6-7 ms less on torch 1.13
    snippets.seed_devices()
    torch.set_num_threads(1)
    torch.set_num_interop_threads(1)
    warnings.formatwarning = learner_warning
    runner.remember_state()
    if optimizers:
        # The first optimizer pulls in torch._dynamo (seconds), and torch patches shared state the first
        # time each feature is used: pay both once, here, not in every worker (warm.py).
        from quizgen.execution.worker import warm

        warm.first_use()
    # What the warm-up changed of torch's settings, put back once here: every job's process is forked
    # from this state (workers run no card code), so none needs to reset them again (~280 of its pages
    # written, ~1.2 ms a job).
    runner.reset_state()
    return str(torch.__version__)


def settle() -> None:
    """What torch and the warm-up made stays as it is in every fork: out of the collector's reach (a
    job's process does not write to, so copy, each of those objects' pages when it collects), and in
    huge pages (forks copy, and exits take down, far fewer page-table entries). No collection first: it
    went over all ~285,000 objects for ~0.1 s, every pool's start waiting, and found ~20 (a type and its
    closures), which may as well stay."""
    gc.freeze()
    huge_pages.collapse()


def not_dumpable() -> None:
    prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE; also loads libc once for every fork (sandbox/libc.py)


def watch_parent() -> int | None:
    """A pidfd of the process that started the pool (None where Linux has none); exit if it is gone."""
    parent = os.getppid()
    try:
        fd = os.pidfd_open(parent)
    except (OSError, AttributeError):  # pragma: no cover - not Linux, or before 5.3
        return None
    if os.getppid() != parent:  # it ended before the pidfd was open: the pidfd may name another
        os._exit(1)
    return fd
