"""Running one job inside a worker process: the snippets, the answer's description, the order search.

Only worker processes import this module (it imports torch).
"""

from __future__ import annotations

import linecache
import os
import random
import sys
import time
import traceback
import warnings
from typing import Any

OUTPUT_LIMIT = 64 * 1024
MAX_ELEMENTS = 10_000


# -- inside a worker ------------------------------------------------------------------------------


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


def _compile(snippet: dict[str, Any], mode: str = "exec") -> Any:
    padded = "\n" * (int(snippet["line"]) - 1) + snippet["code"]
    return compile(padded, snippet["path"], mode)


_WARNING_FILTERS: list[Any] = []


def remember_state() -> None:
    """Note the process-wide settings a snippet may change, so reset_state() can restore them."""
    _WARNING_FILTERS[:] = list(warnings.filters)


def reset_state() -> None:
    """Undo what an earlier snippet in this worker may have changed in torch's global settings."""
    import torch

    torch.set_default_dtype(torch.float32)
    torch.set_grad_enabled(True)
    torch.autograd.set_detect_anomaly(False)
    if torch.are_deterministic_algorithms_enabled():  # the setter alone imports for 1.5 s
        torch.use_deterministic_algorithms(False)
    torch.set_printoptions(profile="default", sci_mode=None)
    if hasattr(torch, "set_default_device"):
        torch.set_default_device(None)
    torch.set_num_threads(1)
    filters: list[Any] = warnings.filters  # type: ignore[assignment]
    filters[:] = _WARNING_FILTERS
    warnings._filters_mutated()  # type: ignore[attr-defined]  # filters were replaced behind its back


def _seed() -> None:
    import torch

    torch.manual_seed(0)
    random.seed(0)
    try:
        import numpy

        numpy.random.seed(0)
    except ImportError:  # pragma: no cover - numpy ships with the torch wheel's requirements here
        pass


class SnippetFailed(Exception):
    def __init__(self, message: str, retire: bool = False) -> None:
        super().__init__(message)
        self.message = message
        self.retire = retire  # the worker may be in a bad state: replace it


def _format_exception(exc: BaseException, paths: set[str]) -> str:
    """A traceback reduced to the frames in card files, ending with the exception itself."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename in paths]
    lines = ["Traceback (most recent call last):\n"] if frames else []
    lines += traceback.format_list(frames)
    lines += traceback.format_exception_only(type(exc), exc)
    return "".join(lines).rstrip()


def _run(code: Any, ns: dict[str, Any], paths: set[str], what: str) -> None:
    try:
        exec(code, ns)
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


def _fresh_namespace(setups: list[Any], paths: set[str]) -> dict[str, Any]:
    _seed()
    ns: dict[str, Any] = {"__name__": "__quizgen__"}
    for code in setups:
        try:
            _run(code, ns, paths, "setup")
        except SnippetFailed:
            raise
        except BaseException as exc:
            raise SnippetFailed("setup failed:\n" + _format_exception(exc, paths)) from None
    return ns


def describe(obj: Any) -> dict[str, Any]:
    """A JSON description of a Python value: its type, its value and how Python shows it."""
    import torch

    if obj is None:
        return {"type": "none", "value": None, "display": "None"}
    if isinstance(obj, bool):
        return {"type": "bool", "value": obj, "display": repr(obj)}
    if isinstance(obj, int):
        return {"type": "int", "value": obj, "display": repr(obj)}
    if isinstance(obj, float):
        return {"type": "float", "value": _json_number(obj), "display": repr(obj)}
    if isinstance(obj, str):
        return {"type": "str", "value": obj, "display": repr(obj)}
    if isinstance(obj, torch.Size):
        return {"type": "shape", "value": list(obj), "display": repr(obj)}
    if isinstance(obj, torch.dtype):
        return {"type": "dtype", "value": str(obj), "display": str(obj)}
    if isinstance(obj, torch.Tensor):
        t = obj.detach()
        if t.numel() > MAX_ELEMENTS:
            raise SnippetFailed(f"the answer is a tensor of {t.numel()} elements; at most {MAX_ELEMENTS}")
        if t.is_complex() or t.layout != torch.strided:
            return {"type": "repr", "value": repr(obj), "display": repr(obj)}
        return {
            "type": "tensor",
            "value": _json_number(t.cpu().tolist()),
            "dtype": str(t.dtype).removeprefix("torch."),
            "shape": list(t.shape),
            "display": repr(obj),
        }
    if isinstance(obj, (list, tuple)) and all(
        isinstance(v, (int, float)) and not isinstance(v, bool) for v in obj
    ):
        return {"type": "list", "value": _json_number(list(obj)), "display": repr(obj)}
    if hasattr(obj, "item") and hasattr(obj, "dtype") and getattr(obj, "shape", None) == ():
        return describe(obj.item())  # numpy scalars
    return {"type": "repr", "value": repr(obj)[:2000], "display": repr(obj)[:2000]}


def _json_number(value: Any) -> Any:
    """NaN and infinities as strings: JSON has no spelling for them."""
    if isinstance(value, list):
        return [_json_number(v) for v in value]
    if isinstance(value, float) and (value != value or value in (float("inf"), float("-inf"))):
        return repr(value)
    return value


def run_job(job: dict[str, Any]) -> dict[str, Any]:
    """Run one job in this worker process; the result is JSON-able."""
    paths = {s["path"] for s in snippets(job)}
    setups = [_compile(s) for s in job.get("setup", [])]
    if job["type"] == "order":
        return _run_order(job, setups, paths)
    ns = _fresh_namespace(setups, paths)
    code = _compile(job["code"])
    result: dict[str, Any] = {"ok": True}
    if job.get("answer"):
        expr = _compile(job["expr"], "eval") if job.get("expr") else None
        try:
            _run(code, ns, paths, "the snippet")
            if expr is None:
                raise SnippetFailed("the snippet finished without raising, and the card has no answer_expr")
            value = eval(expr, ns)
        except SnippetFailed:
            raise
        except BaseException as exc:
            result["value"] = {
                "type": "exception",
                "value": type(exc).__name__,
                "message": str(exc)[:1000],
                "display": "".join(traceback.format_exception_only(type(exc), exc)).strip()[:1000],
            }
        else:
            result["value"] = describe(value)
        return result
    try:
        _run(code, ns, paths, "the snippet")
    except SnippetFailed:
        raise
    except BaseException as exc:
        raise SnippetFailed(_format_exception(exc, paths)) from None
    return result


def snippets(job: dict[str, Any]) -> list[dict[str, Any]]:
    found = list(job.get("setup", []))
    for key in ("code", "expr", "check"):
        if job.get(key):
            found.append(job[key])
    return found + list(job.get("lines", [])) + list(job.get("distractors", []))


def _run_order(job: dict[str, Any], setups: list[Any], paths: set[str]) -> dict[str, Any]:
    from quizgen import orders

    lines = job["lines"]
    distractors = job.get("distractors", [])
    codes = [_compile(s) for s in lines + distractors]
    check = _compile(job["check"])
    repeat = int(job.get("repeat", 1))

    def attempt(order: list[int]) -> BaseException | None:
        ns = _fresh_namespace(setups, paths)
        try:
            for _ in range(repeat):
                for i in order:
                    _run(codes[i], ns, paths, "a line")
            _run(check, ns, paths, "the check")
        except SnippetFailed:
            raise
        except Exception as exc:
            return exc
        return None

    given = list(range(len(lines)))
    failure = attempt(given)
    if failure is not None:
        raise SnippetFailed("the order as written fails the check:\n" + _format_exception(failure, paths))
    predefined = set(_fresh_namespace(setups, paths)) | set(dir(__builtins__))
    before = orders.relax(orders.dependencies([s["code"] for s in lines], predefined), given)
    accepted: list[list[int]] = []
    tried = 0
    for order in orders.candidate_orders(len(lines), before):
        tried += 1
        if tried > orders.MAX_CANDIDATES:
            raise SnippetFailed(
                f"more than {orders.MAX_CANDIDATES} candidate orders: split the puzzle or make "
                "the lines depend on each other"
            )
        if order == given or attempt(order) is None:
            accepted.append(order)
    usable = []
    for d in range(len(lines), len(lines) + len(distractors)):
        for order in accepted:
            hit = next((v for v in orders.distractor_variants(order, d) if attempt(v) is None), None)
            if hit is not None:
                usable.append({"distractor": d - len(lines), "order": hit})
                break
    return {"ok": True, "orders": accepted, "usable_distractors": usable, "tried": tried}


def execute_job(job: dict[str, Any], home: str) -> dict[str, Any]:
    """Run a job with its output captured; `home` is the folder card paths are relative to."""
    for s in snippets(job):
        # Register the card file's lines under the name the code was compiled with, so tracebacks
        # show them although the snippet runs in another folder; mtime None keeps linecache from
        # dropping the entry when it cannot stat that name from here.
        lines = linecache.getlines(os.path.join(home, s["path"]))
        if lines:
            linecache.cache[s["path"]] = (len("".join(lines)), None, lines, s["path"])
    reset_state()
    capture = Capture()
    saved = sys.stdout, sys.stderr
    sys.stdout = sys.stderr = capture
    start = time.perf_counter()
    try:
        result = run_job(job)
    except SnippetFailed as exc:
        result = {"ok": False, "error": exc.message, "retire": exc.retire}
    except MemoryError:
        result = {"ok": False, "error": "ran out of memory (the per-snippet memory cap)", "retire": True}
    finally:
        sys.stdout, sys.stderr = saved
    result["output"] = capture.text()
    result["seconds"] = time.perf_counter() - start
    return result
