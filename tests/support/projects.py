"""Small card projects on disk: the sample deck (one card of each kind), decks of many basic cards,
written into a folder or copied from a build with its cache."""

from __future__ import annotations

import shutil
import textwrap
from pathlib import Path

from quizgen import pipeline
from quizgen.project import state

SAMPLE_DECK = """\
deck: Sample::Gradients
description: A small deck with every kind of card.
tags: [sample]
setup: |
  import torch
cards:
  - id: value-two-steps
    kind: value
    tags: [accumulation]
    ask: "No `zero_grad` between the two backward calls. What is `w.grad` after the second?"
    code: |
      w = torch.tensor(2.0, requires_grad=True)
      (0.75 * w**2).backward()
      (1.25 * w**2).backward()
    answer_expr: w.grad.item()
    answer: 8.0
    explain: "Gradients add up: 3.0 + 5.0 = 8.0."
  - id: value-grad-none
    kind: value
    ask: "What is `w.grad` before any backward call?"
    code: |
      w = torch.tensor([1.0, 2.0], requires_grad=True)
    answer_expr: w.grad
    answer: null
  - id: value-shape
    kind: value
    ask: "What is the shape of `w.grad`?"
    code: |
      w = torch.ones(2, 3, requires_grad=True)
      w.sum().backward()
    answer_expr: w.grad.shape
    answer: {shape: [2, 3]}
  - id: value-raises
    kind: value
    ask: "What happens on the second backward through the same graph?"
    code: |
      w = torch.tensor(1.0, requires_grad=True)
      y = (w * w).exp()
      y.backward()
      y.backward()
    answer: {raises: RuntimeError}
  - id: myth-zero-grad-zeros
    kind: myth
    claim: "`optimizer.zero_grad()` fills every `.grad` with zeros."
    verdict: false
    explain: "Since torch 2.0 it sets them to `None`."
    proof: |
      w = torch.nn.Parameter(torch.ones(2))
      opt = torch.optim.SGD([w], lr=0.1)
      w.sum().backward()
      opt.zero_grad()
      print(w.grad)
      assert w.grad is None
    holds: w.grad is not None and bool((w.grad == 0).all())
  - id: order-train-step
    kind: order
    ask: "Put one training step in order."
    setup: |
      model = torch.nn.Linear(2, 1)
      opt = torch.optim.SGD(model.parameters(), lr=0.1)
      x = torch.ones(4, 2)
      y = torch.zeros(4, 1)
      ref = torch.nn.Linear(2, 1)
      ref.load_state_dict(model.state_dict())
      ref_opt = torch.optim.SGD(ref.parameters(), lr=0.1)
      for _ in range(2):
          ref_opt.zero_grad()
          ((ref(x) - y) ** 2).mean().backward()
          ref_opt.step()
    lines:
      - opt.zero_grad()
      - loss = ((model(x) - y) ** 2).mean()
      - loss.backward()
      - opt.step()
    distractors:
      - x = x * 2
    repeat: 2
    check: |
      assert torch.allclose(model.weight, ref.weight)
  - id: basic-why-accumulate
    kind: basic
    front: "Why does PyTorch accumulate gradients instead of overwriting them?"
    back: "So that several backward passes can add into one update (micro-batches)."
    code: |
      print("accumulate")
"""


def write_project(root: Path, files: dict[str, str]) -> Path:
    """Write card files (name -> YAML text) under root/cards and return root."""
    cards = root / "cards"
    cards.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (cards / name).write_text(textwrap.dedent(text), encoding="utf-8")
    return root


def basic_decks(decks: int, cards: int) -> dict[str, str]:
    """`decks` card files of `cards` basic cards each (no code: nothing to execute)."""
    files = {}
    for d in range(decks):
        lines = [f"deck: Scale::Part {d + 1}", "cards:"]
        for i in range(cards):
            n = d * cards + i
            lines += [
                f"  - id: basic-{n}",
                "    kind: basic",
                f"    front: Question {n}?",
                f"    back: Answer {n}.",
            ]
        files[f"part-{d + 1}.yaml"] = "\n".join(lines) + "\n"
    return files


def copy_project(report: pipeline.Report, dest: Path) -> Path:
    """A copy of a built project (cards, lock, build and cache), to change without touching the original."""
    root: Path = report.root  # type: ignore[attr-defined]
    shutil.copytree(root, dest)
    copy_state(root / "build", dest / "build")
    return dest


def copy_state(out_dir: Path, to: Path) -> None:
    """Give the project building into `to` the cache of the one building into `out_dir` (build state is
    kept by output folder, in the user's cache directory); the manifest and journal stay the original's."""
    source = state.where(out_dir)
    if source.is_dir():
        ignore = shutil.ignore_patterns("outputs.json*", ".quizgen-commit.json*")
        shutil.copytree(source, state.folder(to), ignore=ignore, dirs_exist_ok=True)
