"""The shipped deck's cold-build bench (bench/cold.py): its two floors, and the report that sets the build
against each."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import quizgen
from tests.support.jobs import answering
from tests.support.order_puzzles import job
from tests.support.paths import REPO, bench_module


def _floor(tmp_path: Path, *flags: str) -> dict[str, float]:
    search = job(
        "x = []\n", ["x.append(1)\n", "x.append(2)\n"], "assert x == [1, 2]\n", distractors=("x.append(3)\n",)
    )
    run = answering("import torch\ny = torch.ones(2).sum()\n", "y", "c.yaml")
    jobs = tmp_path / "jobs.json"
    jobs.write_text(json.dumps({"": [run, search]}))
    out = tmp_path / "floor.json"
    env = {**os.environ, "PYTHONPATH": str(Path(quizgen.__file__).resolve().parent.parent)}
    cmd = [sys.executable, str(REPO / "bench" / "floor.py"), str(jobs), "", str(out), *flags]
    subprocess.run(cmd, check=True, env=env, capture_output=True)
    spent: dict[str, float] = json.loads(out.read_text())
    return spent


def test_the_floor_runs_each_order_cards_search_in_place_only_when_asked(tmp_path: Path) -> None:
    strict = _floor(tmp_path)
    assert set(strict) == {"orders cpu", "orders wall", "searches cpu", "searches wall"}
    assert strict["searches cpu"] == strict["searches wall"] == 0.0
    searched = _floor(tmp_path, "--searches")
    assert searched["searches cpu"] > 0.0 and searched["searches wall"] > 0.0


def test_the_report_sets_the_build_against_both_floors() -> None:
    cold = bench_module("cold")
    measured = {
        "build jobs": 432, "build searches": 20, "build wall": 60.0, "build cpu": 70.0,
        "build search cpu": 56.0, "build parent cpu": 1.2, "floor versions": 2, "floor wall": 8.0,
        "floor cpu": 7.0, "floor orders cpu": 0.1, "floor searched wall": 40.0, "floor searched cpu": 35.0,
        "floor searches cpu": 28.1, "ratio wall": 7.0,
    }  # fmt: skip
    rows = cold.table(measured, {"summary": "108 cards", "timings": []}, 1).splitlines()

    def value(label: str) -> str:
        [row] = [row for row in rows if row.strip().startswith(label)]
        return row.split()[-1]

    assert value("cold build / floor, wall") == "7.50x"
    assert value("the same, the median of each run's own ratio") == "7.00x"  # (not the medians' ratio)
    assert value("cold build / floor, CPU") == "10.00x"
    assert value("the same without the order searches, CPU") == f"{14.0 / 6.9:.2f}x"
    assert value("cold build / searched floor, wall") == "1.50x"
    assert value("cold build / searched floor, CPU") == "2.00x"
    assert value("the order searches: in the build / in place, CPU") == f"{56.0 / 28.1:.2f}x"


@pytest.mark.parametrize("flag", ["--torch-dir", "--import-path"])
def test_the_jobs_helper_tells_where_torches_and_quizgen_are(flag: str, tmp_path: Path) -> None:
    env = {**os.environ, "QUIZGEN_TORCH_DIR": str(tmp_path)}
    cmd = [sys.executable, str(REPO / "bench" / "jobs.py"), flag]
    done = subprocess.run(cmd, capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    told = Path(done.stdout.strip())
    assert told.is_relative_to(tmp_path) and (flag == "--torch-dir" or (told / "quizgen").is_dir())
