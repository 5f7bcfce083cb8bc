"""Running card code inside a worker: compiling with the card file's name and line, fresh namespaces,
seeds, and errors reduced to the frames in card files. Only worker processes import this (torch)."""

from __future__ import annotations

import os
import random
import traceback
from collections.abc import Callable
from functools import lru_cache
from types import CodeType

from quizgen.execution.protocol import SnippetJob
from quizgen.execution.worker.owner import is_fork_of_job


class SnippetFailed(Exception):
    """The card's code failed in a way that is the card's fault (or its limits)."""

    def __init__(self, message: str, retire: bool = False) -> None:
        super().__init__(message)
        self.message = message
        self.retire = retire  # the worker may be in a bad state: replace it


def compile_snippet(snippet: SnippetJob, mode: str = "exec") -> CodeType:
    """Compiled so that tracebacks name the card file and its line numbers."""
    return _compiled(snippet["code"], snippet["path"], int(snippet["line"]), mode)


# Least recently used first out: a deck's setup, compiled for every job, stays; card code rarely repeats.
@lru_cache(maxsize=256)
def _compiled(source: str, path: str, line: int, mode: str) -> CodeType:
    # dont_inherit: a card's code is its own module; this one's `from __future__ import annotations`
    # would make its annotations strings (a dataclass in a card failed, `__annotations__` lied).
    try:
        code = compile(source, path, mode, dont_inherit=True)
    except SyntaxError:
        # Rare (the loader checks syntax); padded, the error names the line in the card file.
        code = compile("\n" * (line - 1) + source, path, mode, dont_inherit=True)
    return shift_lines(code, line - 1)


def shift_lines(code: CodeType, by: int) -> CodeType:
    """The code as if it began `by` lines further down its file: padding the source with blank lines
    instead costs a parse of every line above the card (quadratic in a big card file). Line tables
    count from co_firstlineno (PEP 626), so moving it moves every line, nested code objects included."""
    if by == 0:
        return code
    consts = tuple(shift_lines(c, by) if isinstance(c, CodeType) else c for c in code.co_consts)
    return code.replace(co_firstlineno=code.co_firstlineno + by, co_consts=consts)


def format_exception(exc: BaseException, paths: set[str]) -> str:
    """A traceback reduced to the frames in card files, ending with the exception itself."""
    # Without column positions: a card file's line holds YAML around the code, so carets would
    # point at the wrong characters.
    frames = [
        traceback.FrameSummary(f.filename, f.lineno, f.name, line=f.line)
        for f in traceback.extract_tb(exc.__traceback__)
        if f.filename in paths
    ]
    lines = ["Traceback (most recent call last):\n"] if frames else []
    lines += traceback.StackSummary.from_list(frames).format()
    lines += traceback.format_exception_only(type(exc), exc)
    return "".join(lines).rstrip()


def run(code: CodeType, ns: dict[str, object], what: str) -> None:
    """exec, turning the ways a snippet ends its job (exit, memory) into SnippetFailed."""
    run_call(what, exec, code, ns)


def run_call(what: str, call: Callable[..., object], *args: object) -> None:
    """Call what runs a snippet's code (exec, or an order step run block by block), turning the ways a
    snippet ends its job (exit, memory) into SnippetFailed."""
    try:
        call(*args)
    except SystemExit as exc:
        raise SnippetFailed(f"{what} called sys.exit({exc.code!r})") from None
    except MemoryError:
        raise SnippetFailed(f"{what} ran out of memory (the per-snippet memory cap)", retire=True) from None
    except RuntimeError as exc:
        # torch's allocator reports an exhausted memory cap as a RuntimeError, not MemoryError.
        if "can't allocate memory" in str(exc) or "not enough memory" in str(exc):
            raise SnippetFailed(
                f"{what} ran out of memory (the per-snippet memory cap)", retire=True
            ) from None
        raise
    finally:
        _end_if_forked()


def _end_if_forked() -> None:
    """A process the snippet forked must not go on as the job (and answer for it): it ends here."""
    if is_fork_of_job():
        os._exit(0)


def seed() -> None:
    """What `torch.manual_seed(0)` does, without its cost: for each device not yet started, it queues
    another seeding with a formatted stack (~0.1 ms, and a list that grows with every job). The zygote
    queued that once (seed_devices); here only the CPU and devices already started are seeded."""
    import torch

    torch.default_generator.manual_seed(0)
    for name in _DEVICES:
        device = getattr(torch, name, None)
        if device is not None and device.is_initialized() and not device._is_in_bad_fork():
            device.manual_seed_all(0)
    if getattr(torch._C, "_has_mps", False):  # pragma: no cover - macOS only (and 1.13 has no flag)
        torch.mps.manual_seed(0)
    random.seed(0)
    try:
        import numpy

        numpy.random.seed(0)
    except ImportError:  # pragma: no cover - numpy ships with the torch wheel's requirements here
        pass


_DEVICES = ("cuda", "xpu", "mtia")  # the lazily started devices torch.manual_seed seeds


def seed_devices() -> None:
    """Seed every device once, as `torch.manual_seed(0)` does (the zygote, before forking workers), and
    seed as each job does, so that what a job's seeding imports is imported here once."""
    import torch

    torch.manual_seed(0)
    # (numpy 2 imports `numpy.random` on first use: nine extension modules loaded in every job's process,
    # ~10 ms of CPU a job on torch 2.13, where numpy 1's `import numpy` had loaded them already)
    seed()


def fresh_namespace(
    setups: list[CodeType], paths: set[str], into: dict[str, object] | None = None
) -> dict[str, object]:
    """A new module namespace with seeds reset and every setup snippet run in it (in `into`, emptied
    first, when given: what setup defines then reads that very dict as its globals)."""
    seed()
    ns: dict[str, object] = {} if into is None else into
    ns.clear()
    ns["__name__"] = "__quizgen__"
    for code in setups:
        try:
            run(code, ns, "setup")
        except SnippetFailed:
            raise
        except BaseException as exc:
            raise SnippetFailed("setup failed:\n" + format_exception(exc, paths)) from None
    return ns
