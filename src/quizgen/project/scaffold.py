"""`quizgen init`: a new card project that builds as it is (an example deck with every kind of card,
the settings file, the JSON Schema editors read, a .gitignore)."""

from __future__ import annotations

import json
from pathlib import Path

from quizgen.errors import UsageError
from quizgen.project import settings

EXAMPLE = """\
# yaml-language-server: $schema=../build/quizgen.schema.json
# One file is one deck. `quizgen build` executes every snippet and fails if a card says something
# the code does not do. docs/cards.md lists every field.
deck: Example::Gradients
description: Why gradients must be cleared between steps.
setup: |
  import torch
cards:
  - id: grad-adds-up
    kind: value
    ask: "No `zero_grad()` between two backward calls. What is `w.grad` after the second?"
    code: |
      w = torch.tensor(2.0, requires_grad=True)
      (w ** 2).backward()
      (3 * w ** 2).backward()
    answer_expr: w.grad.item()
    answer: 16.0
    explain: >-   # math is TeX: \\( inline \\) or \\[ display \\]
      Backward adds into `.grad`: \\( \\frac{d}{dw} w^2 = 2w \\) gives 4, the second call 12,
      so {{answer}}.

  - id: zero-grad-fills-zeros
    kind: myth
    claim: "`optimizer.zero_grad()` fills every `.grad` with zeros."
    proof: |
      w = torch.nn.Parameter(torch.ones(2))
      opt = torch.optim.SGD([w], lr=0.1)
      w.sum().backward()
      opt.zero_grad()
      print(w.grad)
    holds: w.grad is not None and torch.equal(w.grad, torch.zeros(2))
    explain: "After `zero_grad()` the gradient is `{{output}}`."

  - id: order-one-step
    kind: order
    ask: "Put one training step in order."
    setup: |
      torch.manual_seed(0)
      model = torch.nn.Linear(2, 1)
      opt = torch.optim.SGD(model.parameters(), lr=0.1)
      x, y = torch.ones(4, 2), torch.zeros(4, 1)
      ref = torch.nn.Linear(2, 1); ref.load_state_dict(model.state_dict())
      ref_opt = torch.optim.SGD(ref.parameters(), lr=0.1)
      for _ in range(2):
          ref_opt.zero_grad(); ((ref(x) - y) ** 2).mean().backward(); ref_opt.step()
    lines:
      - opt.zero_grad()
      - loss = ((model(x) - y) ** 2).mean()
      - loss.backward()
      - opt.step()
    repeat: 2
    check: |
      assert torch.allclose(model.weight, ref.weight)
    explain: "{{orders}} orders work: `zero_grad()` may also come after the forward pass or the step."

  - id: why-clear
    kind: basic
    front: "Why does `backward()` add into `.grad` instead of replacing it?"
    back: "So that several backward passes can build one update: micro-batches, several losses."
"""

GITIGNORE_LINE = "build/"


def create(folder: Path, title: str | None = None) -> list[str]:
    """Write a new project into `folder`; what was written, for the user. Never overwrites a file."""
    from quizgen.cards.schema import json_schema

    cards = folder / "cards"
    existing = sorted(cards.rglob("*.yaml")) if cards.is_dir() else []
    if existing:
        raise UsageError(f"{folder} already has card files ({existing[0]}): nothing was written")
    toml = settings.path_for(cards)
    written: list[str] = []
    try:
        cards.mkdir(parents=True, exist_ok=True)
        (cards / "example.yaml").write_text(EXAMPLE, encoding="utf-8")
        written.append(f"wrote {cards / 'example.yaml'}")
        if not toml.exists():
            name = title or folder.resolve().name.replace("-", " ").replace("_", " ").title()
            toml.write_text(settings.TEMPLATE.format(title=name.replace('"', "'")), encoding="utf-8")
            written.append(f"wrote {toml}")
        schema = folder / "build" / "quizgen.schema.json"
        schema.parent.mkdir(parents=True, exist_ok=True)
        schema.write_text(json.dumps(json_schema(), indent=2) + "\n", encoding="utf-8")
        written.append(f"wrote {schema} (editors check the cards against it; every build rewrites it)")
        gitignore = folder / ".gitignore"
        lines = gitignore.read_text(encoding="utf-8").splitlines() if gitignore.exists() else []
        if GITIGNORE_LINE not in lines:
            gitignore.write_text("\n".join([*lines, GITIGNORE_LINE]) + "\n", encoding="utf-8")
            written.append(f"wrote {gitignore}")
    except OSError as exc:
        raise UsageError(f"cannot write the new project: {exc}") from None
    written.append(f"next: cd {folder} && quizgen build (then open build/quiz/index.html)")
    return written
