"""Benchmark `quizgen check` against the floor: one process importing torch once and running every snippet.

    python bench/run.py [--cards 200] [--repeat 3]

Generates N value cards with realistic gradient snippets in a temporary project, then measures in
one run: a cold `quizgen check`, a rerun with nothing changed, a rerun with one card edited, the floor
(one interpreter: import torch, execute every snippet) and the floor for a single card. Each figure is
the median of --repeat runs; the report gives ratios against the floors measured in the same run.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

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


def write_project(root: Path, cards: list[dict]) -> None:
    (root / "cards").mkdir(parents=True, exist_ok=True)
    deck = {"deck": "Bench", "setup": SETUP, "cards": cards}
    (root / "cards" / "bench.yaml").write_text(yaml.safe_dump(deck, sort_keys=False))


FLOOR = """
import sys, time, yaml
deck = yaml.safe_load(open(sys.argv[1]))
import torch
torch.set_num_threads(1)
for card in deck["cards"][: int(sys.argv[2])]:
    torch.manual_seed(0)
    ns = {}
    exec(deck["setup"], ns)
    exec(card["code"], ns)
    eval(card["answer_expr"], ns)
"""


def timed(cmd: list[str], cwd: Path) -> float:
    start = time.perf_counter()
    result = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if result.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{result.stdout}{result.stderr}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--cards", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    quizgen = [sys.executable, "-m", "quizgen", "check"]
    root = Path(tempfile.mkdtemp(prefix="quizgen-bench-"))
    cards = make_cards(args.cards)
    write_project(root, cards)
    deck_file = str(root / "cards" / "bench.yaml")
    results: dict[str, list[float]] = {k: [] for k in ("cold", "unchanged", "edited", "floor", "floor1")}
    try:
        for r in range(args.repeat):
            shutil.rmtree(root / "build", ignore_errors=True)
            results["cold"].append(timed(quizgen, root))
            results["unchanged"].append(timed(quizgen, root))
            cards[0]["code"] += f"w_extra_{r} = 1\n"
            write_project(root, cards)
            results["edited"].append(timed(quizgen, root))
            results["floor"].append(timed([sys.executable, "-c", FLOOR, deck_file, str(args.cards)], root))
            results["floor1"].append(timed([sys.executable, "-c", FLOOR, deck_file, "1"], root))
    finally:
        shutil.rmtree(root, ignore_errors=True)
    med = {k: statistics.median(v) for k, v in results.items()}
    print(f"{args.cards} value cards, median of {args.repeat} runs (seconds)")
    for key, label in [
        ("floor", "floor: one process, import torch, run every snippet"),
        ("floor1", "floor for one card"),
        ("cold", "quizgen check, cold"),
        ("unchanged", "quizgen check, nothing changed"),
        ("edited", "quizgen check, one card edited"),
    ]:
        print(f"  {label:<55} {med[key]:7.2f}")
    print(f"cold / floor                      = {med['cold'] / med['floor']:.2f}x   (target <= 1.0)")
    print(f"unchanged                         = {med['unchanged']:.2f} s  (target <= 0.5 s)")
    print(
        f"edited / (floor for one + 0.3 s)  = {med['edited'] / (med['floor1'] + 0.3):.2f}x   (target <= 1.0)"
    )


if __name__ == "__main__":
    main()
