"""A deck of what learners read (issue 22): long order lines, the deck's setup used by helpers, code in
variant labels and order feedback; read in the quiz and in Anki."""

from __future__ import annotations

LEARNER_DECK = """\
deck: Learner::Readable
setup: |
  import torch
  def head_params(n):
      return [torch.nn.Parameter(torch.ones(n)) for _ in range(2)]
cards:
  - id: long-order
    kind: order
    indent: true
    ask: "Order the loop."
    setup: |
      head = torch.nn.Linear(4, 2)
    lines:
      - "optimizer = torch.optim.SGD(head.parameters(), lr=0.1, momentum=0.9, weight_decay=0.0001)"
      - "for step in range(2):"
      - "    loss = head(torch.ones(3, 4)).pow(2).sum() + 0.0 * sum(p.sum() for p in head_params(4))"
      - "    loss.backward()"
    check: |
      assert head.weight.grad is not None and step == 1
  - id: helper-count
    kind: value
    ask: "How many tensors does `head_params(3)` give?"
    code: |
      ps = head_params(3)
    answer_expr: len(ps)
    answer: 2
    variants:
      - label: "`head_params` gives **one** tensor per `n`"
        code: |
          ps = [1, 2, 3]
  - id: helper-is-param
    kind: value
    ask: "Is the first one a `Parameter`?"
    code: |
      ps = head_params(2)
    answer_expr: isinstance(ps[0], torch.nn.Parameter)
    answer: true
  - id: swap-order
    kind: order
    ask: "Order the backward pass."
    lines:
      - w = torch.ones(2, requires_grad=True)
      - loss = (w * 3).sum()
      - loss.backward()
    check: |
      assert w.grad is not None
"""
