"""Running one job inside a worker process: its output captured, torch's global state reset first.

Only worker processes import this module (it imports torch).
"""

from __future__ import annotations

import linecache
import sys
import time
import traceback
import warnings

from quizgen.constants import OUTPUT_LIMIT
from quizgen.execution.protocol import (
    Answer,
    Job,
    Raised,
    RaisedFrame,
    Result,
    RunJob,
    job_snippets,
    last_line,
)
from quizgen.execution.worker import cite, compat, process_groups
from quizgen.execution.worker.describe import describe, evaluate
from quizgen.execution.worker.order_search import search as order_runs
from quizgen.execution.worker.snippets import (
    SnippetFailed,
    compile_snippet,
    format_exception,
    fresh_namespace,
    run,
)


class Capture:
    """sys.stdout/stderr for snippets: keeps the first OUTPUT_LIMIT characters, drops the rest."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.size = 0
        self.dropped = 0

    def write(self, text: str) -> int:
        room = OUTPUT_LIMIT - self.size
        if room > 0:
            self.parts.append(text[:room])
            self.size += min(room, len(text))
        self.dropped += max(0, len(text) - max(room, 0))
        return len(text)

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return False

    def text(self) -> str:
        out = "".join(self.parts)
        if self.dropped:
            out += f"\n... [{self.dropped} more characters of output cut]"
        return out


_WARNING_FILTERS: list[object] = []
_BACKEND_FLAGS: dict[str, object] = {}


def remember_state() -> None:
    """Note the process-wide settings a snippet may change, so reset_state() can restore them."""
    _WARNING_FILTERS[:] = list(warnings.filters)
    _BACKEND_FLAGS.clear()
    _BACKEND_FLAGS.update(compat.backend_flags())


def reset_state() -> None:
    """Undo what an earlier snippet in this worker may have changed in torch's global settings."""
    import torch

    torch.set_default_dtype(torch.float32)
    torch.set_grad_enabled(True)
    compat.reset_autocast()  # a snippet may enter autocast and never leave it
    torch.set_autocast_cache_enabled(True)
    torch.autograd.set_detect_anomaly(False)
    if torch.are_deterministic_algorithms_enabled():  # the setter alone imports for 1.5 s
        torch.use_deterministic_algorithms(False)
    torch.set_printoptions(profile="default", sci_mode=None)
    if hasattr(torch, "set_default_device"):
        torch.set_default_device(None)
    torch.set_num_threads(1)
    if _BACKEND_FLAGS:
        compat.restore_backend_flags(_BACKEND_FLAGS)
    filters: list[object] = warnings.filters  # type: ignore[assignment]
    filters[:] = _WARNING_FILTERS
    warnings._filters_mutated()  # type: ignore[attr-defined]  # filters were replaced behind its back


def _exception_answer(exc: BaseException) -> Answer:
    return {
        "type": "exception",
        "value": type(exc).__name__,
        "message": str(exc)[:1000],
        "display": "".join(traceback.format_exception_only(type(exc), exc)).strip()[:1000],
    }


def _raised(exc: BaseException, job: Job) -> Raised:
    """The exception's frames in the job's snippets, by place in the job (results are cached by content)."""
    spans = [(s["path"], s["line"], last_line(s)) for s in job_snippets(job)]
    frames: list[RaisedFrame] = []
    for f in traceback.extract_tb(exc.__traceback__):
        at = next(
            (k for k, (path, a, b) in enumerate(spans) if f.filename == path and a <= (f.lineno or 0) <= b),
            None,
        )
        if at is not None:
            offset = (f.lineno or 0) - spans[at][1]
            frames.append({"snippet": at, "offset": offset, "name": f.name, "text": (f.line or "").strip()})
    only = "".join(traceback.format_exception_only(type(exc), exc)).rstrip()[:OUTPUT_LIMIT]
    return {"frames": frames, "exception": only}


def _run_code(job: RunJob, paths: set[str]) -> Result:
    ns = fresh_namespace([compile_snippet(s) for s in job["setup"]], paths)
    try:
        return _ran(job, ns, paths)
    finally:
        process_groups.let_go(ns)  # a DDP model it holds must not be the one to end a gloo group


def _ran(job: RunJob, ns: dict[str, object], paths: set[str]) -> Result:
    """The job's result, its snippet run in `ns`."""
    code = compile_snippet(job["code"])
    result: Result = {"ok": True, "output": ""}
    if not job.get("answer"):
        try:
            run(code, ns, "the snippet")
        except SnippetFailed:
            raise
        except BaseException as exc:
            raise SnippetFailed(format_exception(exc, paths)) from None
        return _with_cites(result, job, ns, paths)
    expr_job = job.get("expr")
    try:
        run(code, ns, "the snippet")
        if expr_job is None:
            raise SnippetFailed("the snippet finished without raising, and the card has no answer_expr")
        value, dtype = evaluate(expr_job, ns)
    except SnippetFailed:
        raise
    except BaseException as exc:
        result["value"] = _exception_answer(exc)
        result["raised"] = _raised(exc, job)
    else:
        result["value"] = describe(value, dtype)
    return _with_cites(result, job, ns, paths)


def _with_cites(result: Result, job: RunJob, ns: dict[str, object], paths: set[str]) -> Result:
    if job.get("cite"):
        result["cited"] = cite.evaluate(job["cite"], ns, paths)
    return result


def _run_by_type(job: Job) -> Result:
    """Run one job in this worker process."""
    paths = {s["path"] for s in job_snippets(job)}
    if job["type"] == "search":
        setups = [compile_snippet(s) for s in job["setup"]]
        return order_runs.search(job, setups, paths)
    return _run_code(job, paths)


_lines: dict[str, list[str]] = {}  # card file -> its lines as far as this worker's jobs showed them


def _register_lines(job: Job) -> None:
    """Give linecache the job's own code under each card file's name, so tracebacks show the lines
    that ran: the worker does not read card files (in the sandbox it may not see them).

    Each file's lines are one list per worker, in which a job writes only its own snippets' lines: a
    list made afresh for each job grew with the card's place in its file (quadratic in a big file).
    Lines other jobs wrote are never shown, since no frame of this job's code stands on them."""
    for s in job_snippets(job):
        lines = _lines.setdefault(s["path"], [])
        own = [text + "\n" for text in s["code"].splitlines()]
        start = max(s["line"] - 1, 0)
        if len(lines) < start + len(own):
            lines += ["\n"] * (start + len(own) - len(lines))
        lines[start : start + len(own)] = own
        # mtime None keeps linecache from dropping the entry when it cannot stat that name from here
        # (and from checking its size).
        linecache.cache[s["path"]] = (0, None, lines, s["path"])


def execute_job(job: Job, reset: bool = True) -> Result:
    """Run a job with its output captured; `reset=False` in a process forked from the zygote, whose
    settings are reset already (startup.warm_up) and which runs nothing else.

    A failure of quizgen's own code is reported as `internal` with its traceback, never as the card's.
    """
    _register_lines(job)
    capture = Capture()
    saved = sys.stdout, sys.stderr
    start = time.perf_counter()
    try:
        if reset:
            reset_state()
        sys.stdout = sys.stderr = capture
        result = _run_by_type(job)
    except SnippetFailed as exc:
        result = {"ok": False, "output": "", "error": exc.message, "retire": exc.retire}
    except MemoryError:
        result = {"ok": False, "output": "", "error": "ran out of memory (the per-snippet memory cap)"}
        result["retire"] = True
    except Exception:
        result = {"ok": False, "output": "", "internal": traceback.format_exc(), "retire": True}
    finally:
        sys.stdout, sys.stderr = saved
    result["output"] = capture.text()
    result["seconds"] = time.perf_counter() - start
    return result
