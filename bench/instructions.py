"""Instructions a shipped order card's search runs, counted by callgrind: a figure the machine's speed
does not move (bench/README.md, the eighth round of issue 29).

    python bench/instructions.py [CARD ...] [--cards DIR] [--src DIR] [--pinned]

Each card's search runs in place, as bench/orders.py --shipped runs it, in a process under valgrind's
callgrind with instrumentation switched on around the search alone (a client request from a small
library built here with the C compiler and valgrind's headers: Debian's `valgrind` and `gcc`). Printed:
the instructions, the steps the search's trees ran and the instructions a step. A search runs ~50 times
slower under callgrind (the shipped loop: ~4 minutes). Searches that pick by measured cost (copy a state
or rebuild it) may pick a little differently there than natively, so compare the instructions a step
as well as the total, or pin those choices (`--pinned`: always copy, always compare) so that two source
trees run the very same steps.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEFAULT = ["order-accumulation-loop"]

CLIENT = """
#include <valgrind/callgrind.h>
void start(void) { CALLGRIND_ZERO_STATS; CALLGRIND_START_INSTRUMENTATION; }
void stop(void) { CALLGRIND_STOP_INSTRUMENTATION; CALLGRIND_DUMP_STATS_AT("search"); }
"""

# Runs under valgrind: one card's search, instrumented around the search alone.
SEARCH = """
import ctypes, gc, json, sys
from pathlib import Path
sys.path[:0] = [{root!r}, {bench!r}]
import orders
from tests.support.order_puzzles import search, warm
from quizgen.execution.worker.order_search import costs, tree
if {pinned!r}:  # the choices made by measured cost made alike in every run: copy, compare
    costs.Costs.rebuild_is_cheaper = lambda self, steps: False
    costs.Costs.worth_comparing = lambda self, work: True
warm()
job = orders.shipped_jobs(Path({cards!r}))[{card!r}]
steps = []
explore = tree.Tree.explore
def counted(self, threads):
    try:
        return explore(self, threads)
    finally:
        steps.append(self.steps)
tree.Tree.explore = counted
client = ctypes.CDLL({library!r})
gc.collect()
client.start()
search(job, fast=True)
client.stop()
print(json.dumps(steps), file=open({out!r}, "w"))
"""


def _library(folder: Path) -> Path:
    source, library = folder / "client.c", folder / "client.so"
    source.write_text(CLIENT)
    subprocess.run(["gcc", "-O2", "-shared", "-fPIC", "-o", str(library), str(source)], check=True)
    return library


def measure(
    card: str, cards: Path, src: Path | None, folder: Path, library: Path, pinned: bool = False
) -> tuple[int, int]:
    """The instructions the card's search ran, and the steps its trees ran."""
    script, out = folder / f"{card}.py", folder / f"{card}.steps"
    script.write_text(
        SEARCH.format(
            root=str(HERE.parent),
            bench=str(HERE),
            cards=str(cards),
            card=card,
            library=str(library),
            out=str(out),
            pinned=pinned,
        )
    )
    env = dict(os.environ, PYTHONHASHSEED="0")
    if src is not None:
        env["PYTHONPATH"] = f"{src}{os.pathsep}{env.get('PYTHONPATH', '')}"
    dump = folder / f"{card}.callgrind"
    command = ["valgrind", "--tool=callgrind", "--instr-atstart=no", f"--callgrind-out-file={dump}.%p"]
    subprocess.run([*command, sys.executable, str(script)], check=True, env=env, capture_output=True)
    found = [p for p in folder.glob(f"{card}.callgrind.*") if p.name.endswith(".1")]
    if len(found) != 1:
        raise SystemExit(f"{card}: callgrind wrote no dump of the search")
    totals = re.search(r"^totals:\s+(\d+)", found[0].read_text(), re.MULTILINE)
    if totals is None:
        raise SystemExit(f"{card}: no instruction count in {found[0]}")
    return int(totals.group(1)), sum(int(n) for n in re.findall(r"\d+", out.read_text()))


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("card", nargs="*", default=DEFAULT)
    parser.add_argument("--cards", type=Path, default=HERE.parent / "cards", help="the deck's card folder")
    parser.add_argument("--src", type=Path, help="the quizgen source tree to run (default: the installed)")
    parser.add_argument(
        "--pinned",
        action="store_true",
        help="the search copies states and compares them wherever it may, never choosing by measured cost "
        "(so two source trees run the same steps)",
    )
    args = parser.parse_args()
    for tool in ("valgrind", "gcc"):
        if shutil.which(tool) is None:
            raise SystemExit(f"bench/instructions.py needs {tool} (Debian: apt-get install valgrind gcc)")
    folder = Path(tempfile.mkdtemp(prefix="quizgen-bench-instructions-"))
    try:
        library = _library(folder)
        print(f"{'instructions':>16}  {'steps':>7}  {'a step':>10}  card")
        for card in args.card:
            count, steps = measure(card, args.cards.resolve(), args.src, folder, library, args.pinned)
            print(f"{count:>16,}  {steps:>7,}  {count / max(steps, 1):>10,.0f}  {card}", flush=True)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
