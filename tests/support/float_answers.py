"""A deck of a float32 answer and an exception answer (issue 12), read in the quiz and in Anki."""

from __future__ import annotations

DECK = """\
deck: Answers Shown
setup: |
  import torch
cards:
  - id: float32-answer
    kind: value
    ask: "What is `w.item()`?"
    code: |
      w = torch.tensor(0.9)
    answer_expr: w.item()
    answer: 0.9
    explain: "A float32 0.9 is {{answer}}."
  - id: exception-answer
    kind: value
    ask: "What does `.item()` do on two elements?"
    code: |
      torch.ones(2).item()
    answer: {raises: RuntimeError, match: "2 elements"}
"""
MESSAGE = "raises RuntimeError: a Tensor with 2 elements cannot be converted to Scalar"
