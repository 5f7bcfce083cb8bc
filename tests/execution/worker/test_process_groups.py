"""DDP on gloo in the worker itself (issue 21): a job that makes a process group and destroys it is
cached, keeps its worker, and its namespace is let go without the deadlock a DDP model's Reducer can
start by ending the group while holding the GIL (execution/worker/process_groups.py, docs/execution.md)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from quizgen import pipeline
from quizgen.execution.pool import Pool
from tests.support.paths import REPO
from tests.support.projects import write_project

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="gloo threads are read in /proc")

HEADER = "deck: DDP\nsetup: |\n  import os\n  import torch\n  import torch.nn as nn\ncards:\n"
DDP_JOB = """
import tempfile
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
store = os.path.join(tempfile.mkdtemp(), "store")
dist.init_process_group("gloo", init_method=f"file://{store}", rank=0, world_size=1)
try:
    model = DDP(nn.Linear(3, 1))
    model(torch.ones(2, 3)).sum().backward()
    grad = model.module.bias.grad.item()
finally:
    dist.destroy_process_group()
pid = os.getpid()
# {n}
"""
GLOO_LEFT = """
tasks = os.listdir("/proc/self/task")
names = [open(f"/proc/self/task/{t}/comm").read().strip() for t in tasks]
gloo = sorted(n for n in names if "gloo" in n)
pid = os.getpid()
"""


def value(card_id: str, code: str, expr: str) -> str:
    body = textwrap.indent(code.strip("\n"), "      ")
    return f"  - id: {card_id}\n    kind: value\n    ask: q\n    code: |\n{body}\n    answer_expr: {expr}\n"


def test_ddp_jobs_one_after_another_end_their_groups(tmp_path: Path) -> None:
    """Twenty jobs that each make a gloo group, run a DDP backward and destroy the group, one after
    another in one worker (each in a process of its own): all verified, and no gloo thread left for the
    next card. Before, one such job in ~20 hung as its namespace was freed."""
    cards = "".join(value(f"ddp-{n}", DDP_JOB.replace("{n}", str(n)), "(grad, pid)") for n in range(20))
    cards += value("after", GLOO_LEFT, "(len(gloo), pid)")
    root = write_project(tmp_path / "p", {"d.yaml": HEADER + cards})
    with Pool(1) as pool:
        options = pipeline.Options(cards_dir=root / "cards", out_dir=root / "build", jobs=1, pool=pool)
        report = pipeline.check(options)
        again = pipeline.check(options)
    answers = {vc.card.id: vc.answer["value"] for d in report.decks for vc in d.cards if vc.answer}
    assert answers.pop("after")[0] == 0  # no gloo thread left
    assert {grad for grad, _ in answers.values()} == {2.0}
    assert (again.executed, again.cached) == (0, 21)


SCRIPT = """
import os, sys, tempfile
import torch, torch.nn as nn
import torch.distributed as dist
import torch.distributed.nn  # as the warm zygote does (quizgen.execution.worker.warm)
from torch.nn.parallel import DistributedDataParallel as DDP
from quizgen.execution.worker import process_groups

def job(keep):
    store = os.path.join(tempfile.mkdtemp(), "store")
    dist.init_process_group("gloo", init_method=f"file://{store}", rank=0, world_size=1)
    ns = {"model": DDP(nn.Linear(3, 1))}
    ns["model"](torch.ones(2, 3)).sum().backward()
    ns["self"] = ns  # a cycle: only a collection frees the model
    if keep is not None:
        keep.append(ns["model"].process_group)
    dist.destroy_process_group()
    print(process_groups.gloo_threads() > 0, end=" ")
    process_groups.let_go(ns)
    print(ns == {}, process_groups.gloo_threads(), len(process_groups._kept), end=" ")

job(None)  # the group only the namespace held ends: its threads are gone
held = []
job(held)  # a group held elsewhere is kept for the life of the process, never ended from a Reducer
print(len(held))
"""


def test_let_go_ends_the_groups_only_the_namespace_held() -> None:
    """let_go empties the namespace, frees what it held in cycles, and ends each group from its
    ProcessGroup object (gloo's threads gone); a group something else holds is kept, never ended."""
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, env=env, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["True", "True", "0", "0", "True", "True", "3", "1", "1"]
