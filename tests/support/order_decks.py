"""Order puzzles the quiz, Anki and settings tests share (issue 11): an indented loop with a distractor,
a puzzle whose accepted orders are exactly those of a set of before-pairs, and a one-card deck maker."""

from __future__ import annotations

DECK = """\
deck: Order puzzles
setup: |
  import torch
cards:
  - id: sum-positives
    kind: order
    ask: "Sum the positive numbers."
    indent: true
    setup: |
      xs = [3, -1, 4]
    lines:
      - total = 0
      - "for x in xs:"
      - "    if x > 0:"
      - "        total += x"
      - print(total)
    distractors:
      - "        total = x"
    check: |
      assert total == 7
  - id: graph-sum
    kind: order
    ask: "Compute d."
    lines:
      - a = 1
      - b = 2
      - c = a + b
      - d = c * 2
    check: |
      assert d == 6
"""

# The indented puzzle's lines and their levels, in the order as written.
LOOP = [("total = 0", 0), ("for x in xs:", 0), ("if x > 0:", 1), ("total += x", 2), ("print(total)", 0)]

PUZZLE = """\
  - id: {id}
    kind: order
    lines:
      - a = 1
      - b = a + 1
    check: |
      assert b == 2
"""


def deck(name: str, card: str, header: str = "") -> str:
    """A deck of one two-line puzzle, `header` (e.g. "attempts: 1\\n") among its top-level keys."""
    return f"deck: {name}\n{header}cards:\n" + PUZZLE.format(id=card)


# A puzzle read on a phone: a long line two levels in, and a distractor that reads as it does up to its
# last characters (issue 31).
PHONE = """\
deck: Order puzzles::Phone
setup: |
  import torch
cards:
  - id: eval-preds
    kind: order
    ask: "Collect the predictions as lists."
    indent: true
    setup: |
      model = torch.nn.Linear(2, 1)
      batches = [torch.ones(1, 2), torch.zeros(1, 2)]
      preds = []
    lines:
      - model.eval()
      - "with torch.no_grad():"
      - "    for batch_of_inputs in batches:"
      - "        preds.append(model(batch_of_inputs).squeeze(-1).tolist())"
    distractors:
      - "        preds.append(model(batch_of_inputs).squeeze(-1))"
    check: |
      assert not model.training
      assert len(preds) == 2 and all(isinstance(p, list) for p in preds)
"""

# Its lines and their levels, in the order as written.
PHONE_LINES = [
    ("model.eval()", 0),
    ("with torch.no_grad():", 0),
    ("for batch_of_inputs in batches:", 1),
    ("preds.append(model(batch_of_inputs).squeeze(-1).tolist())", 2),
]
