"""Benchmark quizgen against the floor: one process importing torch once and running every snippet.

    python bench/run.py [--cards 200,2000] [--repeat 3] [--src DIR] [--no-page] [--corpus 400]

For each size, generates N value cards with realistic gradient snippets in a temporary project: one deck,
in files of at most 2000 cards (a card file holds at most 1 MiB; the rest `continues:` the deck), then
measures in one run:

- check and build, each cold (empty cache), unchanged, and with one card edited;
- the floor (one interpreter: import torch, execute every snippet) and the floor for one card;
- the deck page's time to its first question in Chromium (Playwright, /usr/bin/chromium), and the index
  page's time to its deck list for a project of N/10 decks of 10 basic cards;
- peak RSS of the quizgen process and of its worker pool (the largest process it waited for).

Each figure is the median of --repeat runs; ratios are against figures of the same run. --src runs
another quizgen source tree (e.g. one exported from git) for a before/after comparison.

Then the shipped deck's cold build against its floor (bench/cold.py: one warm process per torch version
the build runs, each job once), in wall and CPU time, with and without the order searches.

Then, on cards it was not tuned on (bench/corpus_cards.py: --corpus N realistic cards from its own seed,
CORPUS_SEED) and on the shipped deck (cards/), the share of jobs an unchanged check runs again (target 0)
(each job runs in a process of its own: no card changes what a later one sees).
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

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
import cold  # bench/ is not a package: found through the path above
import corpus_cards

TEMPLATES = [
    # (code, answer_expr)
    (
        "w = torch.tensor({a}, requires_grad=True)\nfor _ in range({k}):\n    (w * w * {b}).backward()\n",
        "w.grad.item()",
    ),
    (
        "model = torch.nn.Linear({k}, 1)\nopt = torch.optim.SGD(model.parameters(), lr={lr})\n"
        "x = torch.ones(4, {k}) * {a}\nfor _ in range(2):\n    opt.zero_grad()\n"
        "    model(x).pow(2).mean().backward()\n    opt.step()\n",
        "model.weight.grad.sum().item()",
    ),
    (
        "w = torch.nn.Parameter(torch.ones({k}) * {a})\nopt = torch.optim.Adam([w], lr={lr})\n"
        "for _ in range(3):\n    opt.zero_grad()\n    (w * {b}).sum().backward()\n    opt.step()\n",
        "w.detach().sum().item()",
    ),
    (
        "w = torch.nn.Parameter(torch.ones(3) * {a})\nopt = torch.optim.SGD([w], lr={lr}, momentum=0.9)\n"
        "for i in range({k}):\n    (w.pow(2).sum() / {k}).backward()\nopt.step()\n",
        "w.detach().tolist()",
    ),
]
SETUP = "import torch\n"
DECK_SIZE = 2000  # cards per card file: 2000 bench cards are about 0.5 MiB and 22,000 YAML nodes
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run"]


def make_cards(n: int) -> list[dict]:
    cards = []
    for i in range(n):
        code, expr = TEMPLATES[i % len(TEMPLATES)]
        params = {"a": 1.0 + i / 100, "b": 0.5 + (i % 7) / 10, "k": 2 + i % 4, "lr": 0.1}
        cards.append(
            {
                "id": f"bench-{i}",
                "kind": "value",
                "ask": "What is it?",
                "code": code.format(**params),
                "answer_expr": expr,
            }
        )
    return cards


def deck_files(root: Path, n_cards: int) -> list[Path]:
    count = -(-n_cards // DECK_SIZE)
    return [root / "cards" / f"bench-{d + 1}.yaml" for d in range(count)]


def write_project(root: Path, cards: list[dict], only: int | None = None) -> None:
    """The card files (all, or only the `only`-th): decks of DECK_SIZE cards."""
    (root / "cards").mkdir(parents=True, exist_ok=True)
    files = deck_files(root, len(cards))
    for d, path in enumerate(files):
        if only is None or d == only:
            part = cards[d * DECK_SIZE : (d + 1) * DECK_SIZE]
            deck = {"deck": "Bench", "setup": SETUP} if d == 0 else {"continues": "Bench"}
            path.write_text(yaml.safe_dump({**deck, "cards": part}, sort_keys=False))


FLOOR = """
import sys, yaml
decks = [yaml.safe_load(open(path)) for path in sys.argv[2:]]
import torch
torch.set_num_threads(1)
cards = [(decks[0]["setup"], card) for deck in decks for card in deck["cards"]]  # one deck, continued
for setup, card in cards[: int(sys.argv[1])]:
    torch.manual_seed(0)
    ns = {}
    exec(setup, ns)
    exec(card["code"], ns)
    eval(card["answer_expr"], ns)
"""

# quizgen as it runs from the command line, telling the peak RSS of itself and of what it waited for,
# and the CPU time of both (steadier than wall time on a shared machine).
MEASURED = """
import atexit, json, os, resource, runpy, sys
def tell():
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime
    with open(os.environ["BENCH_RSS"], "w") as f:
        json.dump({"parent": me.ru_maxrss, "pool": kids.ru_maxrss, "cpu": cpu}, f)
atexit.register(tell)
sys.argv = ["quizgen", *sys.argv[1:]]
runpy.run_module("quizgen", run_name="__main__")
"""


class Runner:
    """Runs commands in the project, timing them and keeping the peak RSS of the last quizgen run."""

    def __init__(self, root: Path, src: Path | None) -> None:
        self.root = root
        self.env = dict(os.environ)
        # quizgen as installed: its bytecode cached (this sandbox sets PYTHONDONTWRITEBYTECODE, which makes
        # every run compile quizgen's ~80 modules again: +0.08 s on each unchanged check)
        self.env.pop("PYTHONDONTWRITEBYTECODE", None)
        if src is not None:
            self.env["PYTHONPATH"] = str(src)
        self.rss_file = root / "rss.json"
        self.env["BENCH_RSS"] = str(self.rss_file)
        self.state = root / "state"  # the build state (cache, manifest): the bench's own, never the user's
        self.env["QUIZGEN_CACHE_DIR"] = str(self.state)
        self.rss: dict[str, int] = {"parent": 0, "pool": 0}
        self.cpu = 0.0  # of the last quizgen run

    def timed(self, cmd: list[str]) -> float:
        start = time.perf_counter()
        result = subprocess.run(cmd, cwd=self.root, capture_output=True, text=True, env=self.env)
        elapsed = time.perf_counter() - start
        if result.returncode != 0:
            sys.exit(f"{' '.join(cmd)} failed:\n{result.stdout}{result.stderr}")
        return elapsed

    def quizgen(self, command: str) -> float:
        elapsed = self.timed([sys.executable, "-c", MEASURED, command])
        rss = json.loads(self.rss_file.read_text())
        self.rss = {k: max(self.rss[k], rss[k]) for k in self.rss}
        self.cpu = rss["cpu"]
        return elapsed

    def floor(self, cards: int, files: list[Path]) -> float:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        elapsed = self.timed([sys.executable, "-c", FLOOR, str(cards), *map(str, files)])
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        self.cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
        return elapsed


def first_question(page_file: Path, selector: str = "article.card:visible .card-title") -> float:
    """Seconds from asking Chromium for a page to `selector` (by default the deck page's first question)
    being visible."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page()
            page.goto("about:blank")
            start = time.perf_counter()
            page.goto(page_file.as_uri(), wait_until="commit")
            page.wait_for_selector(selector, timeout=120_000)
            return time.perf_counter() - start
        finally:
            browser.close()


def index_page(decks: int) -> float:
    """Seconds to the last deck of a `decks`-deck project's index page being visible, with its due count
    filled in (the page's script has run over every deck)."""
    root = Path(tempfile.mkdtemp(prefix=f"quizgen-bench-index-{decks}-"))
    try:
        (root / "cards").mkdir()
        for d in range(decks):
            cards = [
                {"id": f"i-{d}-{i}", "kind": "basic", "front": f"Q {i}?", "back": "A."} for i in range(10)
            ]
            text = yaml.safe_dump({"deck": f"Index::Deck {d:05d}", "cards": cards}, sort_keys=False)
            (root / "cards" / f"deck-{d:05d}.yaml").write_text(text)
        env = {**os.environ, "QUIZGEN_CACHE_DIR": str(root / "state")}  # not the user's cache directory
        build = [sys.executable, "-m", "quizgen", "build"]
        subprocess.run(build, cwd=root, check=True, capture_output=True, env=env)
        last = f"index-deck-{decks - 1:05d}"
        return first_question(root / "build" / "quiz" / "index.html", f'[data-due-for="{last}"]:visible')
    finally:
        shutil.rmtree(root, ignore_errors=True)


def measure(n: int, repeat: int, src: Path | None, page: bool) -> dict[str, float]:
    root = Path(tempfile.mkdtemp(prefix=f"quizgen-bench-{n}-"))
    cards = make_cards(n)
    write_project(root, cards)
    files = deck_files(root, n)
    run = Runner(root, src)
    results: dict[str, list[float]] = {}

    def note(key: str, value: float) -> None:
        results.setdefault(key, []).append(value)

    try:
        for r in range(repeat):
            for command in ("check", "build"):
                shutil.rmtree(root / "build", ignore_errors=True)
                shutil.rmtree(run.state, ignore_errors=True)  # cold: no cache either
                (root / "cards" / "quizgen.lock").unlink(missing_ok=True)
                note(f"{command} cold", run.quizgen(command))
                note(f"{command} cold cpu", run.cpu)
                note(f"{command} unchanged", run.quizgen(command))
                note(f"{command} unchanged cpu", run.cpu)
                cards[0]["code"] += f"w_extra_{command}_{r} = 1\n"
                write_project(root, cards, only=0)
                note(f"{command} edited", run.quizgen(command))
            if page:
                note("page", first_question(root / "build" / "quiz" / "decks" / "bench.html"))
                note("index", index_page(max(n // 10, 1)))
            note("floor", run.floor(n, files))
            note("floor cpu", run.cpu)
            note("floor1", run.floor(1, files))
    finally:
        shutil.rmtree(root, ignore_errors=True)
    out = {k: statistics.median(v) for k, v in results.items()}
    out["rss parent"], out["rss pool"] = run.rss["parent"] / 1024, run.rss["pool"] / 1024
    return out


def _edited(m: dict[str, float]) -> float:
    return m["check edited"] / (m["floor1"] + 0.3)


ROWS = [
    # (label, how to compute from a size's figures, format)
    ("floor: one process, import torch, run every snippet (s)", lambda m: m["floor"], "{:.2f}"),
    ("floor for one card (s)", lambda m: m["floor1"], "{:.2f}"),
    ("check, cold (s)", lambda m: m["check cold"], "{:.2f}"),
    ("check, nothing changed (s)", lambda m: m["check unchanged"], "{:.2f}"),
    ("check, one card edited (s)", lambda m: m["check edited"], "{:.2f}"),
    ("build, cold (s)", lambda m: m["build cold"], "{:.2f}"),
    ("build, nothing changed (s)", lambda m: m["build unchanged"], "{:.2f}"),
    ("build, one card edited (s)", lambda m: m["build edited"], "{:.2f}"),
    ("check, nothing changed: CPU time (s)", lambda m: m["check unchanged cpu"], "{:.2f}"),
    ("build, nothing changed: CPU time (s)", lambda m: m["build unchanged cpu"], "{:.2f}"),
    ("deck page: first question in Chromium (s)", lambda m: m.get("page", float("nan")), "{:.2f}"),
    ("index page of N/10 decks: last deck shown (s)", lambda m: m.get("index", float("nan")), "{:.2f}"),
    ("peak RSS, quizgen process (MB)", lambda m: m["rss parent"], "{:.0f}"),
    ("peak RSS, worker pool (MB)", lambda m: m["rss pool"], "{:.0f}"),
    ("cold check / floor (target <= 1.0)", lambda m: m["check cold"] / m["floor"], "{:.2f}x"),
    ("  the same in CPU time (all cores)", lambda m: m["check cold cpu"] / m["floor cpu"], "{:.2f}x"),
    ("cold build / cold check (target <= 1.3)", lambda m: m["build cold"] / m["check cold"], "{:.2f}x"),
    ("  the same in CPU time", lambda m: m["build cold cpu"] / m["check cold cpu"], "{:.2f}x"),
    (
        "edited check / (floor for one + 0.3 s) (<= 1.0)",
        lambda m: m["check edited"] / (m["floor1"] + 0.3),
        "{:.2f}x",
    ),
]


def table(sizes: list[int], figures: dict[int, dict[str, float]], repeat: int) -> str:
    width = max(len(label) for label, _, _ in ROWS)
    head = f"{'value cards (median of ' + str(repeat) + ')':<{width}} " + " ".join(f"{n:>9,}" for n in sizes)
    lines = [head, "-" * len(head)]
    for label, value, fmt in ROWS:
        cells = " ".join(f"{fmt.format(value(figures[n])):>9}" for n in sizes)
        lines.append(f"{label:<{width}} {cells}")
    return "\n".join(lines)


def reruns(cards: Path, src: Path | None) -> tuple[int, int]:
    """(jobs an unchanged check ran again, jobs in all) for a copy of the `cards` folder, checked cold
    and then again unchanged (a cache of its own)."""
    root = Path(tempfile.mkdtemp(prefix="quizgen-bench-reruns-"))
    try:
        shutil.copytree(cards, root / "cards")
        settings = cards.parent / "quizgen.toml"  # the project's torch matrix (judged cards need it)
        if settings.is_file():
            shutil.copy(settings, root / "quizgen.toml")
        run = Runner(root, src)
        counts = []
        for _ in range(2):
            cmd = [sys.executable, "-m", "quizgen", "check"]
            done = subprocess.run(cmd, cwd=root, capture_output=True, text=True, env=run.env)
            if done.returncode != 0:
                sys.exit(f"quizgen check of {cards} failed:\n{done.stdout}{done.stderr}")
            executed, cached = done.stdout.split("(")[-1].split(" executed, ")
            counts.append((int(executed), int(cached.split()[0])))
        (again, cached) = counts[1]
        return again, again + cached
    finally:
        shutil.rmtree(root, ignore_errors=True)


def corpus_table(n: int, src: Path | None) -> str:
    """The re-run shares of the corpus and the shipped deck, one line each."""
    lines = []
    project = Path(tempfile.mkdtemp(prefix="quizgen-bench-corpus-"))
    try:
        corpus_cards.write_project(project, corpus_cards.make_cards(n))
        sources = {f"corpus of {n} cards (seed {corpus_cards.CORPUS_SEED})": project / "cards"}
        shipped = Path(__file__).resolve().parent.parent / "cards"
        if shipped.is_dir():
            sources["shipped deck (cards/)"] = shipped
        for label, cards in sources.items():
            again, jobs = reruns(cards, src)
            share = f"{again / max(jobs, 1):.1%}"
            lines.append(f"{label}: an unchanged check ran {again} of {jobs} jobs again ({share}, target 0)")
    finally:
        shutil.rmtree(project, ignore_errors=True)
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--cards", default="200,2000", help="sizes, comma-separated (e.g. 200,2000,10000)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--src", type=Path, help="the quizgen source tree to run (default: the installed)")
    parser.add_argument("--no-page", action="store_true", help="skip the Chromium measurement")
    parser.add_argument(
        "--corpus", type=int, default=400, help="realistic cards for the re-run share (0: none)"
    )
    parser.add_argument("--no-shipped", action="store_true", help="skip the shipped deck's cold build")
    args = parser.parse_args()
    sizes = [int(s) for s in args.cards.split(",")]
    load = os.getloadavg()
    figures = {n: measure(n, args.repeat, args.src, not args.no_page) for n in sizes}
    print(table(sizes, figures, args.repeat))
    shipped = Path(__file__).resolve().parent.parent / "cards"
    if not args.no_shipped and shipped.is_dir():
        print(cold.table(*cold.measure(shipped, args.repeat, args.src), args.repeat))
    if args.corpus:
        print(corpus_table(args.corpus, args.src))
    after = os.getloadavg()
    print(
        f"load average (1 and 5 min) before {load[0]:.2f} {load[1]:.2f}, after {after[0]:.2f} {after[1]:.2f}"
    )


if __name__ == "__main__":
    main()
