"""No card can change another's answer, and nothing a snippet starts outlives its job (issue 9, 4 and 7)."""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from quizgen import pipeline
from quizgen.execution.pool import Pool
from tests.support.paths import REPO

HEADER = "deck: T\nsetup: |\n  import torch\ncards:\n"

PATCHER = """\
  - id: a-patches-zero-grad
    kind: basic
    front: f
    back: b
    code: |
      torch.optim.Optimizer.zero_grad = lambda self, set_to_none=True: None
"""
VICTIM = """\
  - id: b-victim
    kind: value
    ask: "What is `w.grad` after `zero_grad()`?"
    code: |
      w = torch.nn.Parameter(torch.tensor(2.0))
      opt = torch.optim.SGD([w], lr=0.1)
      (w * w).backward()
      opt.zero_grad()
    answer_expr: w.grad
"""


def answers(report: pipeline.Report) -> dict[str, object]:
    return {vc.card.id: vc.answer for d in report.decks for vc in d.cards}


def test_a_patching_card_cannot_change_a_later_card(tmp_path: Path) -> None:
    """The exact attack from the issue: one worker, the patch runs first, the victim must still see None."""
    root = tmp_path / "p"
    (root / "cards").mkdir(parents=True)
    (root / "cards" / "t.yaml").write_text(HEADER + PATCHER + VICTIM)
    with Pool(1) as pool:
        options = pipeline.Options(cards_dir=root / "cards", out_dir=root / "build", jobs=1, pool=pool)
        report = pipeline.check(options)
        assert answers(report)["b-victim"] == {"type": "none", "value": None, "display": "None"}
        # The patching card ran from a clean state: its result is cached (its worker ran nothing after it).
        (root / "cards" / "t.yaml").write_text(
            HEADER + PATCHER + VICTIM.replace("ask:", "tags: [x]\n    ask:")
        )
        again = pipeline.check(options)
        assert again.executed == 0 and again.cached == 2
        assert answers(again)["b-victim"] == {"type": "none", "value": None, "display": "None"}


@pytest.mark.parametrize(
    "patch",
    [
        "import torch.nn.functional as F\nF.relu = lambda x: x * 0",
        "import sys\nsys.modules['math'] = None",
        "torch.Tensor.item = lambda self: 42.0",
        "torch.nn.modules.module.register_module_forward_hook(lambda m, i, o: o * 0)",
        "from torch.optim.optimizer import register_optimizer_step_pre_hook\n"
        "register_optimizer_step_pre_hook(lambda opt, a, k: None)",
        "torch.optim.SGD.step = torch.optim.Optimizer.profile_hook_step(lambda self, closure=None: None)",
    ],
)
def test_no_shared_change_reaches_a_later_card(tmp_path: Path, patch: str) -> None:
    report = _patched_then_probed(tmp_path, patch)
    by_id = {vc.card.id: vc for d in report.decks for vc in d.cards}
    assert by_id["b-probe"].answer is not None
    assert by_id["b-probe"].answer["display"] == "(3.0, 2.0, None, 'torch.float32')"


@pytest.mark.parametrize(
    "patch",
    [
        "import os\nos.environ['QUIZGEN_SNEAKY'] = '1'",
        "torch.autocast('cpu', dtype=torch.bfloat16).__enter__()  # and never left",
        "torch.set_default_dtype(torch.float64)\ntorch.backends.mkldnn.enabled = False",
        "torch.backends.opt_einsum.enabled = torch.backends.opt_einsum.enabled",  # (2.13: no property)
    ],
)
def test_settings_and_the_environment_do_not_reach_a_later_card(tmp_path: Path, patch: str) -> None:
    report = _patched_then_probed(tmp_path, patch)
    by_id = {vc.card.id: vc for d in report.decks for vc in d.cards}
    assert by_id["b-probe"].answer is not None
    assert by_id["b-probe"].answer["display"] == "(3.0, 2.0, None, 'torch.float32')"


def _patched_then_probed(tmp_path: Path, patch: str) -> pipeline.Report:
    """A card running `patch`, then one reading what it may have changed, in one worker."""
    body = "\n".join("      " + line for line in patch.splitlines())
    patcher = f"  - id: a-patch\n    kind: basic\n    front: f\n    back: b\n    code: |\n{body}\n"
    probe = (
        "  - id: b-probe\n    kind: value\n    ask: q\n    code: |\n      import math, os\n"
        "      x = torch.nn.functional.relu(torch.tensor(3.0))\n"
        "    answer_expr: (x.item(), math.sqrt(4.0), os.environ.get('QUIZGEN_SNEAKY'), "
        "str((torch.ones(2, 2) @ torch.ones(2, 2)).dtype))\n"
    )
    root = tmp_path / "p"
    (root / "cards").mkdir(parents=True)
    (root / "cards" / "t.yaml").write_text(HEADER + patcher + probe)
    with Pool(1) as pool:
        options = pipeline.Options(cards_dir=root / "cards", out_dir=root / "build", jobs=1, pool=pool)
        return pipeline.check(options)


def _alive(pool: Pool, pid: int) -> bool:
    """Whether process `pid`, as numbered in the pool's PID namespace (the sandbox has its own), runs."""
    namespace = os.readlink(f"/proc/{pool.proc.pid}/ns/pid_for_children")
    for entry in filter(str.isdigit, os.listdir("/proc")):
        try:
            if os.readlink(f"/proc/{entry}/ns/pid") != namespace:
                continue
            with open(f"/proc/{entry}/status") as f:
                fields = dict(line.split(":", 1) for line in f if ":" in line)
        except OSError:
            continue
        if fields["NSpid"].split()[-1] == str(pid) and fields["State"].split()[0] != "Z":
            return True
    return False


@pytest.mark.parametrize(
    "code",
    [
        "import subprocess, sys\np = subprocess.Popen(['sleep', '300'])\nprint(p.pid)",
        "import os, time\npid = os.fork()\nif pid == 0:\n    time.sleep(300)\nprint(pid)",
        "import subprocess\np = subprocess.Popen(['setsid', 'sleep', '300'])\nprint(p.pid)",
    ],
)
def test_no_process_a_snippet_starts_outlives_its_job(
    project: Callable[..., Path], options: Callable[..., pipeline.Options], pool: Pool, code: str
) -> None:
    body = "\n".join("      " + line for line in code.splitlines())
    root = project(
        {
            "t.yaml": HEADER
            + f"  - id: starts\n    kind: basic\n    front: f\n    back: b\n    code: |\n{body}\n"
        }
    )
    report = pipeline.check(options(root))
    output = report.decks[0].cards[0].output
    pid = int(output.split()[-1])
    deadline = time.monotonic() + 5
    while _alive(pool, pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(pool, pid), f"process {pid} started by the snippet is still running"


def test_a_forked_child_holding_the_result_pipe_is_a_timeout_within_its_limit(
    project: Callable[..., Path], options: Callable[..., pipeline.Options]
) -> None:
    """The issue measured 26 s for a 5 s timeout, and forever for a child that never exits."""
    code = "import os, time\nif os.fork() == 0:\n    time.sleep(300)\nwhile True:\n    time.sleep(0.1)"
    body = "\n".join("      " + line for line in code.splitlines())
    root = project(
        {
            "t.yaml": HEADER
            + f"  - id: hangs\n    kind: basic\n    front: f\n    back: b\n    code: |\n{body}\n"
        }
    )
    start = time.monotonic()
    with pytest.raises(Exception) as info:
        pipeline.check(options(root, timeout=2.0))
    # Not a speed bound: the forked child sleeps 300 s, and waiting for it (the bug) would take that long.
    assert time.monotonic() - start < 60
    assert "did not finish within 2 s (timeout)" in str(info.value)


def test_workers_keep_torch_to_one_thread(
    project: Callable[..., Path], options: Callable[..., pipeline.Options]
) -> None:
    """Two threads change the last bits of answers; the pin must hold (a test fails without it)."""
    card = (
        "  - id: threads\n    kind: value\n    ask: q\n    code: x = 1\n"
        "    answer_expr: (torch.get_num_threads(), torch.get_num_interop_threads())\n"
    )
    root = project({"t.yaml": HEADER + card})
    report = pipeline.check(options(root))
    assert answers(report)["threads"] == {"type": "list", "value": [1, 1], "display": "(1, 1)"}
    assert os.cpu_count() is not None


def _executed(report: pipeline.Report) -> dict[str, object]:
    out: dict[str, object] = {}
    for deck in report.decks:
        for vc in deck.cards:
            o = vc.outcome
            out[vc.card.id] = None if o is None else (o.value, o.orders, o.output)
    return out


def _reversed_copy(src: Path, dest: Path, extra: str = "") -> Path:
    """The same cards with every deck's cards in reverse order (and `extra` cards first)."""
    import yaml

    def cards_of(root: yaml.Node) -> yaml.SequenceNode:
        [node] = [v for k, v in root.value if k.value == "cards"]
        return node

    (dest / "cards").mkdir(parents=True)
    files = sorted(src.glob("*.yaml"))
    for path in files:
        # Node by node, so every scalar is written back as it was (`off:` stays a name, not False).
        root = yaml.compose(path.read_text())
        cards = cards_of(root)
        cards.value.reverse()
        if extra and path == files[0]:
            cards.value[:0] = cards_of(yaml.compose("cards:\n" + extra)).value
        (dest / "cards" / path.name).write_text(yaml.serialize(root))
    # the torch matrix (a card is judged on 1.13.1) and the lock, whose records stand in for it unprovisioned
    shutil.copy(src.parent / "quizgen.toml", dest / "quizgen.toml")
    shutil.copy(src / "quizgen.lock", dest / "cards" / "quizgen.lock")
    return dest


@pytest.mark.slow
def test_answers_do_not_depend_on_order_or_parallelism(tmp_path: Path) -> None:
    """The shipped deck plus a patching card, with -j 1, -j 2 and every deck's cards reversed."""
    shipped = REPO / "cards"
    forward = _reversed_copy(shipped, tmp_path / "once", extra=PATCHER)  # reversed once ...
    backward = _reversed_copy(forward / "cards", tmp_path / "twice")  # ... and back
    results = []
    for root, jobs in ((forward, 1), (forward, 2), (backward, 2)):
        with Pool(jobs) as pool:
            options = pipeline.Options(
                cards_dir=root / "cards",
                out_dir=root / f"build-{jobs}",
                jobs=jobs,
                pool=pool,
                use_cache=False,
            )
            results.append(_executed(pipeline.check(options)))
    assert results[0] == results[1] == results[2]
    assert len(results[0]) > 50


def test_a_card_that_breaks_torchs_setters_is_named_not_a_quizgen_bug(tmp_path: Path) -> None:
    report = _patched_then_probed(tmp_path, "torch.set_default_dtype = None")
    by_id = {vc.card.id: vc for d in report.decks for vc in d.cards}
    assert by_id["b-probe"].answer is not None
    assert by_id["b-probe"].answer["display"] == "(3.0, 2.0, None, 'torch.float32')"


def test_a_card_that_sets_a_variable_and_breaks_unsetenv_leaves_the_environment_clean(tmp_path: Path) -> None:
    report = _patched_then_probed(
        tmp_path, "import os\nos.environ['QUIZGEN_SNEAKY'] = '1'\nos.unsetenv = None"
    )
    by_id = {vc.card.id: vc for d in report.decks for vc in d.cards}
    assert by_id["b-probe"].answer is not None
    assert by_id["b-probe"].answer["display"] == "(3.0, 2.0, None, 'torch.float32')"
