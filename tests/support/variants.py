"""A deck whose value card lists variants (executed misconceptions), for the loader, quiz and Anki tests."""

from __future__ import annotations

CARD = """\
  - id: {id}
    kind: value
    ask: "No `zero_grad` between the two backward calls. What is `w.grad` after the second?"
    code: |
      w = torch.tensor(2.0, requires_grad=True)
      (0.75 * w**2).backward()   # d/dw = 1.5 * w
      (1.25 * w**2).backward()
    answer_expr: w.grad.item()
    answer: 8.0
    variants:
      - label: backward overwrites .grad
        code: |
          w = torch.tensor(2.0, requires_grad=True)
          (1.25 * w**2).backward()
      - label: the second backward is forgotten
        remove: (1.25 * w**2).backward()
      - label: only the first loss counts
        replace: {{"(1.25 * w**2).backward()": "loss = 1.25 * w**2"}}
      - label: w lost requires_grad
        replace: {{"(0.75 * w**2).backward()": "w = w.detach()"}}
"""

# Choices in data order: the right answer, then one per distinct variant answer (two variants give 3.0).
FEEDBACK = [
    "",
    "that is what you get if backward overwrites .grad",
    "that is what you get if the second backward is forgotten, or if only the first loss counts",
    "that is what you get if w lost requires_grad (it raises RuntimeError: element 0 of tensors does not "
    "require grad and does not have a grad_fn)",
]
# the one option raising its type shows the type alone: a message restates the set-up (variants._option_text)
RAISES = "raises RuntimeError"

CHOICE_DECK = "deck: Variants::Choice\nsetup: |\n  import torch\ncards:\n" + CARD.format(id="two-backward")
TYPED_DECK = "deck: Variants::Typed\nvalue_answers: typed\nsetup: |\n  import torch\ncards:\n" + CARD.format(
    id="two-backward-typed"
)
FILES = {"choice.yaml": CHOICE_DECK, "typed.yaml": TYPED_DECK}
CHOICE_PAGE = "decks/variants-choice.html"
TYPED_PAGE = "decks/variants-typed.html"
