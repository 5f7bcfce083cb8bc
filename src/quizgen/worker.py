"""The worker: the only code that imports torch.

`python -m quizgen.worker` imports torch once, warms it up, then reads jobs (JSON lines on stdin)
and forks one child per job from that warm process, so each snippet starts in a fresh copy of an
interpreter that has torch loaded. A child runs in a temporary directory with a memory cap and
captured output; the zygote enforces the wall-clock timeout, notices crashes and exits, and writes
results (JSON lines) to stdout. The zygote itself never runs card code and stays single-threaded,
because forking a process that has started torch's thread pools hangs the child.
"""

from __future__ import annotations

import json
import os
import random
import resource
import selectors
import shutil
import signal
import sys
import tempfile
import time
import traceback
from typing import Any

OUTPUT_LIMIT = 64 * 1024
FILE_LIMIT = 64 * 1024 * 1024
MAX_ELEMENTS = 10_000


def _warm_up() -> str:
    import torch
    import torch.nn
    import torch.optim

    torch.set_num_threads(1)
    torch.set_num_interop_threads(1)
    # The first optimizer pulls in torch._dynamo (seconds): pay that once, here, not in every child.
    w = torch.nn.Parameter(torch.ones(2))
    for opt_cls in (torch.optim.SGD, torch.optim.Adam, torch.optim.AdamW):
        opt = opt_cls([w], lr=0.1)
        (w * w).sum().backward()
        opt.step()
        opt.zero_grad()
    return str(torch.__version__)


# -- inside a child -------------------------------------------------------------------------------


class _Capture:
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
    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def _format_exception(exc: BaseException, paths: set[str]) -> str:
    """A traceback reduced to the frames in card files, ending with the exception itself."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename in paths]
    lines = ["Traceback (most recent call last):\n"] if frames else []
    lines += traceback.format_list(frames)
    lines += traceback.format_exception_only(type(exc), exc)
    return "".join(lines).rstrip()


def _exception_name(exc: BaseException) -> str:
    return type(exc).__name__


def _run(code: Any, ns: dict[str, Any], paths: set[str], what: str) -> None:
    try:
        exec(code, ns)
    except SystemExit as exc:
        raise SnippetFailed(f"{what} called sys.exit({exc.code!r})") from None
    except MemoryError:
        raise SnippetFailed(f"{what} ran out of memory (the per-snippet memory cap)") from None
    except RuntimeError as exc:
        # torch's allocator reports an exhausted memory cap as a RuntimeError, not MemoryError.
        if "can't allocate memory" in str(exc) or "not enough memory" in str(exc):
            raise SnippetFailed(f"{what} ran out of memory (the per-snippet memory cap)") from None
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
    """Run one job in this (child) process; the result is JSON-able."""
    paths = {s["path"] for s in _snippets(job)}
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
            value = None
            result["value"] = {
                "type": "exception",
                "value": _exception_name(exc),
                "message": str(exc)[:1000],
                "display": "".join(traceback.format_exception_only(type(exc), exc)).strip()[:1000],
            }
        if "value" not in result:
            result["value"] = describe(value)
        return result
    try:
        _run(code, ns, paths, "the snippet")
    except SnippetFailed:
        raise
    except BaseException as exc:
        raise SnippetFailed(_format_exception(exc, paths)) from None
    return result


def _snippets(job: dict[str, Any]) -> list[dict[str, Any]]:
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


def _limit_resources(memory: int) -> None:
    with open("/proc/self/statm") as f:
        vsize = int(f.read().split()[0]) * resource.getpagesize()
    cap = vsize + memory
    resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
    resource.setrlimit(resource.RLIMIT_FSIZE, (FILE_LIMIT, FILE_LIMIT))
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # an oversized write raises instead of killing


def _die_with_parent() -> None:
    """Ask Linux to kill this child when the zygote goes, so no snippet outlives a build."""
    try:
        import ctypes

        ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):  # pragma: no cover - not Linux
        pass


def _child(job: dict[str, Any], write_fd: int, workdir: str, memory: int) -> None:
    """Runs in the forked child; never returns."""
    status = 0
    try:
        _die_with_parent()
        # Card files are read now, before leaving the caller's folder, so tracebacks show their lines.
        import linecache

        for s in _snippets(job):
            lines = linecache.getlines(s["path"])
            if lines:
                linecache.cache[s["path"]] = (len("".join(lines)), None, lines, s["path"])
        devnull = os.open(os.devnull, os.O_RDWR)
        os.dup2(devnull, 0)
        sink = os.open(os.path.join(workdir, ".quizgen-fd-output"), os.O_WRONLY | os.O_CREAT, 0o600)
        os.dup2(sink, 1)
        os.dup2(sink, 2)
        os.chdir(workdir)
        _limit_resources(memory)
        capture = _Capture()
        sys.stdout = sys.stderr = capture
        start = time.perf_counter()
        try:
            result = run_job(job)
        except SnippetFailed as exc:
            result = {"ok": False, "error": exc.message}
        except MemoryError:
            result = {"ok": False, "error": "ran out of memory (the per-snippet memory cap)"}
        result["output"] = capture.text()
        result["seconds"] = time.perf_counter() - start
        data = (json.dumps(result) + "\n").encode()
        view = memoryview(data)
        while view:
            written = os.write(write_fd, view)
            view = view[written:]
    except BaseException:
        status = 70
    finally:
        os._exit(status)


# -- the zygote -----------------------------------------------------------------------------------


class _Running:
    def __init__(self, job_id: Any, pid: int, fd: int, workdir: str, deadline: float) -> None:
        self.job_id = job_id
        self.pid = pid
        self.fd = fd
        self.workdir = workdir
        self.deadline = deadline
        self.data = bytearray()
        self.timed_out = False
        self.cancelled = False
        self.limit = deadline - time.monotonic()


def _describe_exit(status: int, running: _Running) -> str:
    if running.timed_out:
        return f"the snippet did not finish within {running.limit:.3g} s (timeout) and was stopped"
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        name = signal.Signals(sig).name if sig in signal.Signals._value2member_map_ else str(sig)
        if sig == signal.SIGKILL:
            return "the snippet was killed (SIGKILL), most likely for using too much memory"
        return f"the snippet crashed the worker process ({name})"
    code = os.WEXITSTATUS(status)
    return f"the snippet ended the worker process (exit status {code}) before finishing"


def serve(jobs: int, timeout: float, memory: int) -> None:
    torch_version = _warm_up()
    out = sys.stdout.buffer

    def send(message: dict[str, Any]) -> None:
        out.write((json.dumps(message) + "\n").encode())
        out.flush()

    send({"ready": True, "torch_version": torch_version, "pid": os.getpid()})
    sel = selectors.DefaultSelector()
    stdin_fd = sys.stdin.fileno()
    os.set_blocking(stdin_fd, False)
    sel.register(stdin_fd, selectors.EVENT_READ, None)
    pending: list[dict[str, Any]] = []
    running: dict[int, _Running] = {}
    inbuf = bytearray()
    stdin_open = True

    def start(message: dict[str, Any]) -> None:
        job = message["job"]
        limit = float(message.get("timeout", timeout)) * (10 if job["type"] == "order" else 1)
        workdir = tempfile.mkdtemp(prefix="quizgen-")
        read_fd, write_fd = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(read_fd)
            _child(job, write_fd, workdir, memory)
        os.close(write_fd)
        os.set_blocking(read_fd, False)
        r = _Running(message["id"], pid, read_fd, workdir, time.monotonic() + limit)
        running[read_fd] = r
        sel.register(read_fd, selectors.EVENT_READ, r)

    def finish(r: _Running) -> None:
        sel.unregister(r.fd)
        os.close(r.fd)
        del running[r.fd]
        _, status = os.waitpid(r.pid, 0)
        shutil.rmtree(r.workdir, ignore_errors=True)
        result: dict[str, Any] | None = None
        if r.data.endswith(b"\n") and not r.timed_out:
            try:
                result = json.loads(r.data)
            except ValueError:
                result = None
        if result is None:
            result = {"ok": False, "error": _describe_exit(status, r), "output": ""}
        result["torch_version"] = torch_version
        if not r.cancelled:
            send({"id": r.job_id, "result": result})

    cancel_pending = False
    while stdin_open:
        if cancel_pending and not running:
            send({"cancelled": True})
            cancel_pending = False
        while pending and len(running) < jobs:
            start(pending.pop(0))
        now = time.monotonic()
        wait = min((r.deadline for r in running.values()), default=now + 1.0) - now
        for key, _ in sel.select(timeout=max(0.0, min(wait, 1.0))):
            if key.data is None:
                chunk = os.read(stdin_fd, 1 << 16)
                if not chunk:
                    stdin_open = False  # the parent is done or gone: stop everything
                    break
                inbuf += chunk
                while b"\n" in inbuf:
                    line, _, rest = inbuf.partition(b"\n")
                    inbuf = bytearray(rest)
                    if not line.strip():
                        continue
                    message = json.loads(line)
                    if message.get("cancel"):
                        # The parent stopped early (--fail-fast): drop what is queued and running.
                        pending.clear()
                        for r in list(running.values()):
                            os.kill(r.pid, signal.SIGKILL)
                            r.cancelled = True
                        cancel_pending = True
                    else:
                        pending.append(message)
                continue
            r = key.data
            try:
                chunk = os.read(r.fd, 1 << 16)
            except BlockingIOError:
                continue
            if chunk:
                r.data += chunk
            else:
                finish(r)
        now = time.monotonic()
        for r in list(running.values()):
            if now >= r.deadline and not r.timed_out:
                r.timed_out = True
                os.kill(r.pid, signal.SIGKILL)
    for r in list(running.values()):
        os.kill(r.pid, signal.SIGKILL)
        os.waitpid(r.pid, 0)
        shutil.rmtree(r.workdir, ignore_errors=True)


def main() -> None:
    import argparse

    parser = argparse.ArgumentParser(prog="quizgen.worker")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--timeout", type=float, default=30.0)
    parser.add_argument("--memory", type=int, default=2 << 30)
    args = parser.parse_args()
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides when the pool stops
    serve(max(1, args.jobs), args.timeout, args.memory)
    sys.stdout.flush()
    os._exit(0)  # skip torch's slow interpreter teardown: nothing is left to clean up


if __name__ == "__main__":
    main()
