"""Order puzzles as search jobs, run in this process: random small ones for the fast search's equivalence
test, and the benchmark's larger ones (bench/orders.py uses both)."""

from __future__ import annotations

import random
import time
from typing import Any

from quizgen.execution.protocol import Result, SearchJob, SnippetJob

PATH = "puzzle.yaml"


def snippet(code: str, line: int) -> SnippetJob:
    return {"code": code, "path": PATH, "line": line}


def job(
    setup: str,
    lines: list[str],
    check: str,
    repeat: int = 1,
    distractors: tuple[str, ...] = (),
    levels: list[int] | None = None,
) -> SearchJob:
    """A search job laid out as a card file would be: setup, lines, distractors, check, each on its lines."""
    line = 1
    setup_job = snippet("import torch\n" + setup, line)
    line += setup_job["code"].count("\n") + 1
    blocks = []
    for code in [*lines, *distractors]:
        blocks.append(snippet(code, line))
        line += code.rstrip("\n").count("\n") + 1
    result: SearchJob = {
        "type": "search",
        "setup": [setup_job],
        "lines": blocks[: len(lines)],
        "distractors": blocks[len(lines) :],
        "repeat": repeat,
        "check": snippet(check, line),
    }
    if levels is not None:
        result["indent"] = 4
        result["levels"] = levels
    return result


def warm() -> None:
    """Import torch and make this process look like a warm worker (one thread, optimizers loaded)."""
    import torch

    from quizgen.execution.worker import runner

    torch.set_num_threads(1)
    w = torch.nn.Parameter(torch.ones(2))
    for opt_cls in (torch.optim.SGD, torch.optim.Adam):
        opt = opt_cls([w], lr=0.1)
        (w * w).sum().backward()
        opt.step()
    runner.remember_state()


def search(puzzle: SearchJob, fast: bool) -> tuple[Result, float]:
    """The search's result and the CPU seconds it took, run here as a worker runs it."""
    from quizgen.execution.worker import runner
    from quizgen.execution.worker.order_search import search as order_runs
    from quizgen.execution.worker.snippets import compile_snippet

    runner._register_lines(puzzle)
    runner.reset_state()
    start = time.process_time()
    setups = [compile_snippet(s) for s in puzzle["setup"]]
    result = order_runs.search(puzzle, setups, {PATH}, fast=fast)
    return result, time.process_time() - start


# -- random small puzzles --------------------------------------------------------------------------------

_INT = ["{a} = {k}", "{a} += {k}", "{a} = {a} * {k}", "{a} = {b} + {k}", "{a} -= {b}"]
_TENSOR = ["{a}.add_({k})", "{a}.mul_({k})", "{a} = {a} * {k}", "{a}.add_(torch.rand(2))", "{a} = {a} + {b}"]
_LIST = ["{a}.append({k})", "{a} = {a}[1:] + [{k}]", "{a}.append(len({a}))"]
_GRAD = ["g = (w * {k}).sum()", "g.backward()", "w.grad = None", "with torch.no_grad(): w.sub_(0.5 * w.grad)"]


def random_puzzle(rng: random.Random) -> SearchJob:
    """A few lines over ints, tensors, a list and a leaf tensor's gradient, with a check that holds for
    the order as written (it asserts the values that order computes)."""
    while True:
        lines = _random_lines(rng)
        repeat = rng.choice([1, 1, 2])
        check = _check_for(lines, repeat)
        if check is not None:
            distractors = tuple(d for d in rng.sample(_DISTRACTORS, rng.choice([0, 0, 1])) if d not in lines)
            return job(_SETUP, lines, check, repeat, distractors)


_SETUP = (
    "i0, i1 = 1, 2\nt0, t1 = torch.ones(2), torch.zeros(2)\nxs = []\nw = torch.ones(2, requires_grad=True)\n"
)
_DISTRACTORS = ["i0 = 5", "t0.mul_(5)", "xs.append(9)", "i1 += 5", "t1 = t0 * 0"]


def _random_lines(rng: random.Random) -> list[str]:
    names = {"int": ["i0", "i1"], "tensor": ["t0", "t1"], "list": ["xs"]}
    templates = {"int": _INT, "tensor": _TENSOR, "list": _LIST}
    lines: list[str] = []
    for _ in range(rng.randint(2, 6)):
        kind = rng.choice(["int", "int", "tensor", "tensor", "list", "grad", "fresh"])
        if kind == "grad":
            line = rng.choice(_GRAD).format(k=rng.randint(1, 3))
        elif kind == "fresh":
            source = rng.choice(["i0", "t1", *[f"f{m}" for m in range(len(lines))]])
            line = f"f{len(lines)} = {source} * {rng.randint(1, 3)}"
        else:
            a, b = rng.choice(names[kind]), rng.choice(names[kind])
            line = rng.choice(templates[kind]).format(a=a, b=b, k=rng.randint(1, 3))
        if line not in lines:
            lines.append(line)
    return lines


def random_loop_puzzle(rng: random.Random) -> SearchJob:
    """A random puzzle with indentation: a few lines, a loop (or an `if`) holding some of them, and
    lines after it; its check holds for the order as written."""
    while True:
        lines = _random_lines(rng)
        head = rng.choice(["for k in range(2):", "for k in range(rng_n):", "if i0 > 1:"])
        start = rng.randint(0, max(0, len(lines) - 2))
        levels = [0] * start + [0] + [1] * (len(lines) - start)
        lines = [*lines[:start], head, *lines[start:]]
        if rng.random() < 0.5 and len(lines) - start > 2:  # a line after the loop
            levels[-1] = 0
        check = _check_for(lines, 1, levels)
        if check is not None:
            return job(_SETUP + "rng_n = 2\n", lines, check, levels=levels)


_TESTS = [
    "k > 5",
    "k == 1",
    "i0 > 100",
    "k < 5",
    "len(xs) > 1",
]  # never, sometimes, never, always, it depends


def random_suite_puzzle(rng: random.Random) -> SearchJob:
    """A random loop whose body holds an `if` (some never true, some now and then), perhaps with an
    `elif`, an `else:` or an `if` nested in it: suites control may never enter, tests that read only
    numbers (order.routes)."""
    while True:
        body = _random_lines(rng)[:2]  # (six blocks at most: ~10,000 candidates at every level)
        inner = 1
        lines = ["for k in range(3):", *body[:-inner], f"if {rng.choice(_TESTS)}:", *body[-inner:]]
        levels = [0, *[1] * (len(body) - inner), 1, *[2] * inner]
        extra = rng.choice(["", "else", "nested", "elif"])
        if extra == "elif":
            lines, levels = [*lines, f"elif {rng.choice(_TESTS)}:", "i1 -= k"], [*levels, 1, 2]
        elif extra == "else":
            lines, levels = [*lines, "else:", "xs.append(k)"], [*levels, 1, 2]
        elif extra == "nested":
            lines, levels = [*lines, f"if {rng.choice(_TESTS)}:", "i1 += k"], [*levels, 2, 3]
        if len(set(lines)) < len(lines):
            continue
        check = _check_for(lines, 1, levels)
        if check is not None:
            return job(_SETUP, lines, check, levels=levels)


def _check_for(lines: list[str], repeat: int, levels: list[int] | None = None) -> str | None:
    """Asserts of every variable's value after the order as written (None when that order raises)."""
    import torch

    torch.manual_seed(0)
    ns: dict[str, Any] = {}
    levels = levels or [0] * len(lines)
    program = "\n".join("    " * level + line for line, level in zip(lines, levels, strict=True))
    try:
        exec("import torch\n" + _SETUP + "rng_n = 2\n", ns)
        for _ in range(repeat):
            exec(program, ns)
    except Exception:
        return None
    asserts = []
    for name, value in sorted(ns.items()):
        if isinstance(value, torch.Tensor) and value.grad_fn is None:
            asserts.append(f"assert {name}.tolist() == {value.tolist()!r}")
        elif not name.startswith("_") and name != "rng_n" and isinstance(value, (int, list)):
            asserts.append(f"assert {name} == {value!r}")
    return "\n".join(asserts) + "\n"


def recording(
    monkeypatch: Any, owner: type, name: str, seen: list[str], called: str = "", raised: str = ""
) -> None:
    """Wrap `owner.name` so that each call appends `called` to `seen` (when given), and each call that
    raises the search's Thawed appends `raised` (when given); and search every puzzle fast."""
    from quizgen.execution.worker.order_search import search as order_runs
    from quizgen.execution.worker.order_search.frozen import Thawed

    monkeypatch.setattr(order_runs, "SMALL", 0.0)
    monkeypatch.setattr(order_runs, "_unmerged", lambda runs, orders: False)
    method = getattr(owner, name)

    def recorded(self: object, *args: object) -> object:
        if called:
            seen.append(called)
        try:
            return method(self, *args)
        except Thawed:
            if raised:
                seen.append(raised)
            raise

    monkeypatch.setattr(owner, name, recorded)
