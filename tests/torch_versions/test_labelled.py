"""What a learner reads, checked on every torch version the card is labelled with (labelled.py).

The outcomes stand in for two torch versions' runs of the same card (the real torch 1.13.1 runs in
test_matrix.py's slow tests): each sentence false on one version is an error with both values.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from quizgen import pipeline
from quizgen.cards import loader
from quizgen.cards.model import Card, Tolerance
from quizgen.execution.protocol import Answer, Outcome
from quizgen.torch_versions import labelled
from tests.support.projects import write_project
from tests.support.torch_matrix import INSTALLED, OLD, errors_of, make

CARD = """\
deck: Labelled
setup: |
  import torch
cards:
  - id: momentum
    kind: value
    {extra}ask: "What is `w`?"
    code: |
      w = 0.81
      print("w is", w)
    answer_expr: w
    answer: {answer}
    variants:
      - label: the step is skipped
        replace: {{"w = 0.81": "w = 0.9"}}
    cite:
      buf: w
    explain: "The buffer is {{{{buf}}}}."
"""


def card(root: Path, answer: str = "0.81", extra: str = "") -> Card:
    write_project(root, {"deck.yaml": CARD.format(answer=answer, extra=extra)})
    decks, problems = loader.load(root / "cards", Tolerance(), "choice")
    assert not problems, problems
    return decks[0].cards[0]


def number(x: float) -> Answer:
    return {"type": "float", "value": x, "display": str(x)}


def ran(answer: float, output: str, buf: float, variant: Answer) -> Outcome:
    parts = {"variants[0]": Outcome(ok=True, value=variant)}
    return Outcome(ok=True, output=output, value=number(answer), cited={"buf": number(buf)}, parts=parts)


def messages(found: list[labelled.Problem], root: Path) -> list[str]:
    return [str(p).removeprefix(f"{root}/") for p in found]


def test_a_card_true_on_both_versions_has_nothing_to_say(tmp_path: Path) -> None:
    mine = ran(0.81, "w is 0.81\n", 0.9, number(0.9))
    theirs = ran(0.81, "w is 0.81\n", 0.9 + 1e-9, number(0.91))  # float noise; another wrong answer
    assert labelled.problems(card(tmp_path), "1.13.1", "2.13.0", mine, theirs) == []


def test_a_cited_value_and_an_output_false_on_one_version_are_errors_with_both_values(tmp_path: Path) -> None:
    mine = ran(0.81, "w is 0.81\nbuf 0.9\n", 0.9, number(0.9))
    theirs = ran(0.81, "w is 0.81\nbuf 0\n", 0.0, number(0.9))
    assert messages(labelled.problems(card(tmp_path), "1.13.1", "2.13.0", mine, theirs), tmp_path) == [
        "cards/deck.yaml:8:11: card 'momentum' -> code: its printed output reads `buf 0.9` on torch 2.13.0 "
        "but `buf 0` on torch 1.13.1, and learners read it as verified with both: make it true on both, "
        "or narrow the card's `torch` range",
        "cards/deck.yaml:17:7: card 'momentum' -> cite: the cited value {{buf}} reads `0.9` on torch 2.13.0 "
        "but `0.0` on torch 1.13.1, and learners read it as verified with both: make it true on both, or "
        "narrow the card's `torch` range",
    ]


def test_a_variant_equal_to_the_answer_on_one_version_is_the_cards_error_there(tmp_path: Path) -> None:
    mine = ran(0.81, "", 0.9, number(0.9))
    theirs = ran(0.81, "", 0.9, number(0.81))  # (1.13.1's default zero_grad() gives zeros, not None)
    assert messages(labelled.problems(card(tmp_path), "1.13.1", "2.13.0", mine, theirs), tmp_path) == [
        "cards/deck.yaml:14:9: card 'momentum' -> variants[0]: on torch 1.13.1, which the card is verified "
        'with: variant "the step is skipped" gives 0.81, the same as the right answer: the misconception is '
        "not distinguishable"
    ]


def test_an_error_message_the_card_matches_is_checked_on_each_version(tmp_path: Path) -> None:
    declared = '{raises: ValueError, match: "Tried to step 4 times"}'
    found = card(tmp_path, answer=declared)
    message = "Tried to step 5 times. The specified number of total steps is 3"
    raised: Answer = {"type": "exception", "value": "ValueError", "display": "", "message": message}
    theirs = Outcome(ok=True, value=raised)
    mine = Outcome(ok=True, value={**raised, "message": "Tried to step 4 times."})
    assert messages(labelled.problems(found, "1.13.1", "2.13.0", mine, theirs), tmp_path) == [
        "cards/deck.yaml:12:13: card 'momentum' -> answer: on torch 1.13.1, which the card is verified with: "
        "declared answer raises ValueError matching 'Tried to step 4 times' but execution gives raises "
        "ValueError: Tried to step 5 times. The specified number of total steps is 3"
    ]


def test_a_variant_that_raises_on_one_version_only_is_an_error(tmp_path: Path) -> None:
    missing: Answer = {"type": "exception", "value": "AttributeError", "display": "", "message": "no hook"}
    mine, theirs = ran(0.81, "", 0.9, number(0.9)), ran(0.81, "", 0.9, missing)
    found = messages(labelled.problems(card(tmp_path), "1.13.1", "2.13.0", mine, theirs), tmp_path)
    assert len(found) == 1
    assert "-> variants: the answer of variants[0] reads `0.9` on torch 2.13.0 but `raises" in found[0]


def test_a_card_whose_answer_varies_says_which_version_its_text_is_from(tmp_path: Path) -> None:
    found = card(tmp_path, extra="varies_with_torch: true\n    ")
    mine, theirs = ran(0.81, "a\n", 0.9, number(0.9)), ran(0.5, "b\n", 0.0, number(0.9))
    assert labelled.problems(found, "1.13.1", "2.13.0", mine, theirs) == []


SHIPPED_BEFORE = """\
deck: Before
setup: |
  import torch
cards:
  - id: sgd-momentum
    kind: value
    ask: "What is `w`?"
    code: |
      w = torch.nn.Parameter(torch.tensor([1.0]))
      opt = torch.optim.SGD([w], lr=0.1, momentum=0.9)
      w.grad = torch.ones(1); opt.step()
      opt.zero_grad(set_to_none=False); opt.step()
    answer_expr: round(w.item(), 4)
    answer: 0.81
    variants:
      - label: a zeroed gradient skips the step, as None does
        replace: {"opt.zero_grad(set_to_none=False); opt.step()": "opt.zero_grad(); opt.step()"}
  - id: onecycle
    kind: value
    ask: "What happens?"
    code: |
      opt = torch.optim.SGD([torch.nn.Parameter(torch.ones(1))], lr=0.1)
      sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=0.1, total_steps=3)
      for i in range(12):
          opt.step()
          sched.step()
    answer: {raises: ValueError, match: "Tried to step 4 times"}
"""


@pytest.mark.slow
def test_real_torch_113_finds_the_shipped_cards_sentences_false_there(
    tmp_path: Path,
    torch_113: str,
    options: Callable[..., pipeline.Options],
) -> None:
    root = make(tmp_path, SHIPPED_BEFORE, [OLD, INSTALLED])
    found = errors_of(options(root, matrix=True, jobs=1)).replace(f"{root}/", "")
    assert found.splitlines() == [
        "cards/deck.yaml:16:9: card 'sgd-momentum' -> variants[0]: on torch 1.13.1, which the card is "
        'verified with: variant "a zeroed gradient skips the step, as None does" gives 0.81, the same as '
        "the right answer: the misconception is not distinguishable",
        "cards/deck.yaml:27:13: card 'onecycle' -> answer: on torch 1.13.1, which the card is verified with: "
        "declared answer raises ValueError matching 'Tried to step 4 times' but execution gives raises "
        "ValueError: Tried to step 5 times. The specified number of total steps is 3",
    ]
