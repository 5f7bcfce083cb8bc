"""The shipped deck's cold build against its floor, measured in one run (bench/README.md).

    python bench/cold.py [--cards DIR] [--repeat 3] [--src DIR]

In a temporary copy of the project (its card folder and quizgen.toml: nothing of the checkout changes),
`quizgen build --no-cache --timings` runs cold (no cache, no outputs), and then the floor: one process per
torch version the build runs (the installed torch, and each provisioned version of the project's matrix
under its environment's Python), one after another, each importing torch once and executing every job
that build runs there once (jobs.py says which, and what "once" means for an order card). Each figure is
the median of --repeat runs; the ratios are taken in wall and in CPU time, and again with the order
searches left out (their CPU as the build's workers measured it; the order cards' own in the floor).
The wall ratio is also the median of each run's own (a build, then its floor, minutes apart at most).

A second floor, measured in the same processes, puts in each order card's place its search run there
as a worker runs it (quizgen's own search code, in place: no sandbox, no process per job, no split):
the build's ratio to that one is what the build's machinery adds around the same executions, whatever
the search's own algorithm costs (bench/orders.py and docs/order-search.md measure that).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
TIMINGS_SHOWN = 5  # lines of --timings's list in the report

# quizgen as it runs from the command line, telling its CPU time and that of every process it waited for,
# and the CPU its pools' workers measured for each kind of job (an order search: "search").
MEASURED = """
import atexit, json, os, resource, runpy, sys, threading
from quizgen.execution import pool
spent, counting = {}, threading.Lock()  # (another version's jobs run in a thread of their own)
plain = pool.execute
def execute(work, **kw):
    outcomes = plain(work, **kw)
    with counting:
        for key, outcome in outcomes.items():
            kind = work[key]["type"]
            jobs, cpu = spent.get(kind, (0, 0.0))
            spent[kind] = (jobs + 1, cpu + outcome.cpu)
    return outcomes
pool.execute = execute  # (looked up when a run starts: torch_versions/running.py)
def tell():
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime
    with open(os.environ["BENCH_OUT"], "w") as f:
        json.dump({"cpu": cpu, "parent": me.ru_utime + me.ru_stime, "spent": spent}, f)
atexit.register(tell)
sys.argv = ["quizgen", *sys.argv[1:]]
runpy.run_module("quizgen", run_name="__main__")
"""


def copy_project(cards: Path, root: Path) -> None:
    """The card folder and the project's settings and templates, copied into `root`."""
    shutil.copytree(cards, root / "cards", ignore=shutil.ignore_patterns("quizgen.lock.*"))
    for name in ("quizgen.toml", "templates"):
        source = cards.parent / name
        if source.is_file():
            shutil.copy(source, root / name)
        elif source.is_dir():
            shutil.copytree(source, root / name)


class Shipped:
    """The deck's copy, the environment quizgen runs with there, and the runs measured."""

    def __init__(self, cards: Path, src: Path | None) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="quizgen-bench-shipped-"))
        copy_project(cards, self.root)
        self.env = dict(os.environ)
        self.env.pop("PYTHONDONTWRITEBYTECODE", None)  # quizgen as installed: its bytecode cached
        if src is not None:
            self.env["PYTHONPATH"] = str(src)
        self.env["BENCH_OUT"] = str(self.root / "measured.json")
        state = self.root / "state"  # the build's state: the bench's own, never the user's
        torches = self._run([sys.executable, str(HERE / "jobs.py"), "--torch-dir"]).strip()
        self.env.update(QUIZGEN_CACHE_DIR=str(state), QUIZGEN_TORCH_DIR=torches)
        # Another torch's floor searches with this quizgen, found alone (as its pool finds it).
        self.imports = self._run([sys.executable, str(HERE / "jobs.py"), "--import-path"]).strip()
        self.jobs = self.root / "jobs.json"
        self.jobs.write_text(self._run([sys.executable, str(HERE / "jobs.py"), str(self.root / "cards")]))

    def _run(self, cmd: list[str], env: dict[str, str] | None = None) -> str:
        done = subprocess.run(
            cmd, cwd=self.root, capture_output=True, text=True, env={**self.env, **(env or {})}
        )
        if done.returncode != 0:
            sys.exit(f"{' '.join(cmd)} failed:\n{done.stdout}{done.stderr}")
        return done.stdout

    def build(self) -> dict[str, object]:
        """A cold build: wall and CPU seconds, the order searches' CPU, its --timings lines."""
        shutil.rmtree(self.root / "build", ignore_errors=True)
        start = time.perf_counter()
        out = self._run([sys.executable, "-c", MEASURED, "build", "--no-cache", "--timings"])
        wall = time.perf_counter() - start
        measured = json.loads((self.root / "measured.json").read_text())
        lines = out.splitlines()
        head = next((i for i, line in enumerate(lines) if line.startswith("slowest cards")), len(lines))
        summary = next((line for line in lines if " verified (" in line), "")
        searches = measured["spent"].get("search", (0, 0.0))
        return {
            "wall": wall,
            "cpu": measured["cpu"],
            "parent cpu": measured["parent"],
            "search cpu": searches[1],
            "searches": searches[0],
            "jobs": sum(jobs for jobs, _ in measured["spent"].values()),
            "timings": lines[head + 1 : head + 1 + TIMINGS_SHOWN],
            "summary": summary,
        }

    def floor(self) -> dict[str, float]:
        """Every version's floor process in turn: wall and CPU of both floors (the order cards' own
        runs, or their searches), and the order cards' share of each."""
        runs = json.loads(self.jobs.read_text())
        spent = dict.fromkeys(
            ("wall", "cpu", "orders cpu", "orders wall", "searches cpu", "searches wall"), 0.0
        )
        for python in runs:
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            start = time.perf_counter()
            told = self.root / "floor.json"
            cmd = [
                python or sys.executable,
                str(HERE / "floor.py"),
                str(self.jobs),
                python,
                str(told),
                "--searches",
            ]
            self._run(cmd, {"PYTHONPATH": self.imports} if python else {})
            spent["wall"] += time.perf_counter() - start
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            spent["cpu"] += after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
            for name, seconds in json.loads(told.read_text()).items():
                spent[name] += seconds
        # The floor process ran both: each floor is its total without the other's order cards.
        figures = {
            "wall": spent["wall"] - spent["searches wall"],
            "cpu": spent["cpu"] - spent["searches cpu"],
            "orders cpu": spent["orders cpu"],
            "searched wall": spent["wall"] - spent["orders wall"],
            "searched cpu": spent["cpu"] - spent["orders cpu"],
            "searches cpu": spent["searches cpu"],
        }
        jobs = sum(len(jobs) for jobs in runs.values())
        return {**figures, "jobs": jobs, "versions": len(runs)}

    def close(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)


def measure(cards: Path, repeat: int, src: Path | None) -> tuple[dict[str, float], dict[str, object]]:
    """Medians of `repeat` cold builds and floors, and the last build's own report."""
    shipped = Shipped(cards, src)
    figures: dict[str, list[float]] = {}
    last: dict[str, object] = {}
    try:
        for _ in range(repeat):
            last = shipped.build()
            floor = shipped.floor()
            for name, value in [*last.items()]:
                if isinstance(value, (int, float)):
                    figures.setdefault(f"build {name}", []).append(float(value))
            for name, value in floor.items():
                figures.setdefault(f"floor {name}", []).append(value)
            # (each run's own ratio: the machine's pace moves by a third within minutes here, and the
            # medians of builds and floors may come from different runs)
            figures.setdefault("ratio wall", []).append(figures["build wall"][-1] / floor["wall"])
    finally:
        shipped.close()
    return {k: statistics.median(v) for k, v in figures.items()}, last


def table(m: dict[str, float], last: dict[str, object], repeat: int) -> str:
    outside = m["build cpu"] - m["build search cpu"]
    floor_outside = m["floor cpu"] - m["floor orders cpu"]
    rows = [
        (f"shipped deck, cold `quizgen build --no-cache` (median of {repeat})", ""),
        (
            "  jobs run (all torch versions) / of them order searches",
            f"{m['build jobs']:.0f} / {m['build searches']:.0f}",
        ),
        ("  cold build: wall (s)", f"{m['build wall']:.2f}"),
        ("  cold build: CPU, quizgen and every process it started (s)", f"{m['build cpu']:.2f}"),
        ("    of it the order searches, as the workers measured them (s)", f"{m['build search cpu']:.2f}"),
        ("    of it quizgen's own process (s)", f"{m['build parent cpu']:.2f}"),
        (
            f"  floor: {m['floor versions']:.0f} warm processes, each job once: wall (s)",
            f"{m['floor wall']:.2f}",
        ),
        ("  floor: CPU (s)", f"{m['floor cpu']:.2f}"),
        ("    of it the order cards' (s)", f"{m['floor orders cpu']:.2f}"),
        ("  cold build / floor, wall (target <= 1.5)", f"{m['build wall'] / m['floor wall']:.2f}x"),
        ("    the same, the median of each run's own ratio", f"{m['ratio wall']:.2f}x"),
        ("  cold build / floor, CPU", f"{m['build cpu'] / m['floor cpu']:.2f}x"),
        ("  the same without the order searches, CPU", f"{outside / floor_outside:.2f}x"),
        (
            "  searched floor: each order card's search run in place instead, wall (s)",
            f"{m['floor searched wall']:.2f}",
        ),
        ("  searched floor: CPU (s)", f"{m['floor searched cpu']:.2f}"),
        ("    of it the searches, in place (s)", f"{m['floor searches cpu']:.2f}"),
        (
            "  cold build / searched floor, wall (the build's machinery)",
            f"{m['build wall'] / m['floor searched wall']:.2f}x",
        ),
        ("  cold build / searched floor, CPU", f"{m['build cpu'] / m['floor searched cpu']:.2f}x"),
        (
            "  the order searches: in the build / in place, CPU",
            f"{m['build search cpu'] / m['floor searches cpu']:.2f}x",
        ),
    ]
    width = max(len(label) for label, _ in rows)
    lines = [f"{label:<{width}} {value:>12}" for label, value in rows]
    lines += [f"  {last['summary']}", "  slowest cards (--timings, the last run):"]
    lines += [f"  {line}" for line in last["timings"]]  # type: ignore[union-attr]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--cards", type=Path, default=HERE.parent / "cards", help="the deck's card folder")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--src", type=Path, help="the quizgen source tree to run (default: the installed)")
    args = parser.parse_args()
    print(table(*measure(args.cards.resolve(), args.repeat, args.src), args.repeat))


if __name__ == "__main__":
    main()
