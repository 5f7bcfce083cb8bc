"""Executing cards in the warm worker pool: every kind, mis-declared answers, hostile snippets."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from quizgen import pipeline
from quizgen.errors import CardErrors
from quizgen.execution.pool import Pool
from tests.support.projects import SAMPLE_DECK

HEADER = "deck: T\nsetup: |\n  import torch\ncards:\n"


def card(text: str) -> str:
    return "\n".join("  " + line for line in text.strip("\n").splitlines()) + "\n"


def problems(options: pipeline.Options) -> list[str]:
    with pytest.raises(CardErrors) as info:
        pipeline.check(options)
    return [str(p) for p in info.value.problems]


def test_sample_deck_verifies(project: Callable[..., Path], options: Callable[..., pipeline.Options]) -> None:
    root = project({"sample.yaml": SAMPLE_DECK})
    report = pipeline.check(options(root))
    answers = {vc.card.id: vc.answer for d in report.decks for vc in d.cards}
    assert answers["value-two-steps"] == {"type": "float", "value": 8.0, "display": "8.0", "dtype": "float32"}
    assert answers["value-grad-none"] == {"type": "none", "value": None, "display": "None"}
    assert answers["value-shape"] == {"type": "shape", "value": [2, 3], "display": "torch.Size([2, 3])"}
    raised = answers["value-raises"]
    assert raised is not None and raised["type"] == "exception" and raised["value"] == "RuntimeError"
    by_id = {vc.card.id: vc for d in report.decks for vc in d.cards}
    assert by_id["myth-zero-grad-zeros"].output == "None\n"
    assert by_id["basic-why-accumulate"].output == "accumulate\n"
    assert by_id["value-two-steps"].torch_version.startswith("2.")
    # zero_grad before the forward pass, between forward and backward, or after the step.
    order = by_id["order-train-step"].outcome
    assert order is not None
    assert sorted(order.orders or []) == [[0, 1, 2, 3], [1, 0, 2, 3], [1, 2, 3, 0]]


def test_tensor_answers(project: Callable[..., Path], options: Callable[..., pipeline.Options]) -> None:
    root = project(
        {
            "t.yaml": HEADER
            + card("""
- id: tensor-grad
  kind: value
  ask: q
  code: |
    w = torch.tensor([1.0, 2.0], requires_grad=True)
    (w * w).sum().backward()
  answer_expr: w.grad
  answer: [2.0, 4.0]
- id: dtype
  kind: value
  ask: q
  code: w = torch.zeros(2)
  answer_expr: w.dtype
  answer: float32
- id: is-none
  kind: value
  ask: q
  code: w = torch.zeros(2, requires_grad=True)
  answer_expr: w.grad is None
  answer: true
- id: expr-raises
  kind: value
  ask: q
  code: w = torch.zeros(2, requires_grad=True)
  answer_expr: w.grad.zero_()
  answer: {raises: AttributeError}
""")
        }
    )
    report = pipeline.check(options(root))
    answers = {vc.card.id: vc.answer for vc in report.decks[0].cards}
    assert answers["tensor-grad"] == {
        "type": "tensor",
        "value": [2.0, 4.0],
        "dtype": "float32",
        "shape": [2],
        "display": "tensor([2., 4.])",
    }
    assert answers["dtype"] is not None and answers["dtype"]["value"] == "torch.float32"
    assert answers["expr-raises"] is not None and answers["expr-raises"]["value"] == "AttributeError"


def test_every_kind_mis_declared_fails_with_both_values(
    project: Callable[..., Path], options: Callable[..., pipeline.Options]
) -> None:
    root = project(
        {
            "bad.yaml": HEADER
            + card("""
- id: wrong-value
  kind: value
  ask: q
  code: |
    w = torch.tensor(2.0, requires_grad=True)
    (0.75 * w**2).backward()
    (1.25 * w**2).backward()
  answer_expr: w.grad.item()
  answer: 5.0
- id: wrong-myth
  kind: myth
  claim: zero_grad fills zeros
  verdict: true
  proof: |
    w = torch.nn.Parameter(torch.ones(2))
    opt = torch.optim.SGD([w], lr=0.1)
    w.sum().backward()
    opt.zero_grad()
    print(w.grad)
  holds: w.grad is not None
- id: wrong-order
  kind: order
  setup: |
    w = torch.nn.Parameter(torch.ones(1))
    opt = torch.optim.SGD([w], lr=1.0)
  lines:
    - opt.step()
    - opt.zero_grad()
    - (w * 3).sum().backward()
  check: |
    assert w.item() == -2.0
- id: wrong-raise
  kind: value
  ask: q
  code: x = 1
  answer_expr: x
  answer: {raises: RuntimeError}
- id: broken-basic
  kind: basic
  front: f
  back: b
  code: print(undefined_name)
""")
        }
    )
    errors = problems(options(root))
    path = root / "cards" / "bad.yaml"
    assert len(errors) == 5, errors
    assert (
        errors[0]
        == f"{path}:13:13: card 'wrong-value' -> answer: declared answer 5.0 but execution gives 8.0"
    )
    assert errors[1] == (
        f"{path}:17:14: card 'wrong-myth' -> verdict: declared verdict true, "
        "but `w.grad is not None` is False after the proof"
    )
    assert "card 'wrong-order' -> check: the order as written fails the check" in errors[2]
    assert "declared answer raises RuntimeError but execution gives 1" in errors[3]
    assert "card 'broken-basic' -> code" in errors[4] and "NameError" in errors[4]
    assert f'File "{path}", line 46' in errors[4] and "\n        print(undefined_name)\n" in errors[4]


def test_order_with_several_orders_and_a_usable_distractor(
    project: Callable[..., Path], options: Callable[..., pipeline.Options]
) -> None:
    root = project(
        {
            "o.yaml": HEADER
            + card("""
- id: sums
  kind: order
  setup: |
    total = 0
  lines:
    - a = 1
    - b = 2
    - c = a + b
    - total = total + c
  distractors:
    - c = c * 1
    - total = total - 1
  check: |
    assert total == 3
""")
        }
    )
    [error] = problems(options(root))
    assert "card 'sums' -> distractors: distractor 'c = c * 1' can be used" in error
    assert "total - 1" not in error


def test_order_search_finds_every_valid_order(
    project: Callable[..., Path], options: Callable[..., pipeline.Options]
) -> None:
    root = project(
        {
            "o.yaml": HEADER
            + card("""
- id: sums
  kind: order
  lines:
    - a = 1
    - b = 2
    - c = a + b
  distractors:
    - c = c - 1
  check: |
    assert c == 3
""")
        }
    )
    report = pipeline.check(options(root))
    outcome = report.decks[0].cards[0].outcome
    assert outcome is not None and sorted(outcome.orders or []) == [[0, 1, 2], [1, 0, 2]]


def test_card_code_is_compiled_as_its_own_module(
    project: Callable[..., Path], options: Callable[..., pipeline.Options]
) -> None:
    """quizgen's modules say `from __future__ import annotations`; a card's code must not inherit it
    (compile() does unless told not to): before, a dataclass in a card raised AttributeError and
    annotations were strings, in value cards, answer expressions and order puzzles alike."""
    root = project(
        {
            "a.yaml": HEADER
            + card("""
- id: annotated
  kind: value
  ask: q
  code: |
    from dataclasses import dataclass, fields
    @dataclass
    class Config:
        lr: float = 0.1
        steps: int = 2
    kinds = [f.type for f in fields(Config)]
  answer_expr: "[k.__name__ for k in kinds] + [type(Config.__annotations__['lr']).__name__]"
  answer: "['float', 'int', 'type']"
- id: ordered
  kind: order
  lines:
    - "def scale(x: float) -> float: return 2 * x"
    - "kind = scale.__annotations__['x']"
  check: |
    assert kind is float
""")
        }
    )
    report = pipeline.check(options(root))
    by_id = {vc.card.id: vc for d in report.decks for vc in d.cards}
    outcome = by_id["ordered"].outcome
    assert outcome is not None and outcome.orders == [[0, 1]]


HOSTILE = {
    "allocates": "chunks = []\nwhile True:\n  chunks.append(bytearray(1 << 30))",
    "torch-allocates": "x = torch.empty(1 << 40)",
    "segfaults": "import ctypes\nctypes.string_at(0)",
    "os-exit": "import os\nos._exit(3)",
    "sys-exit": "import sys\nsys.exit(2)",
    "writes-a-huge-file": "with open('big.bin', 'wb') as f:\n  f.write(b'x' * (200 << 20))",
}


def test_hostile_snippets_are_contained(
    project: Callable[..., Path], options: Callable[..., pipeline.Options]
) -> None:
    cards = ""
    for name, code in HOSTILE.items():
        body = "\n".join("    " + line for line in code.splitlines())
        cards += f"- id: {name}\n  kind: basic\n  front: f\n  back: b\n  code: |\n{body}\n"
    cards += (
        "- id: floods\n  kind: basic\n  front: f\n  back: b\n  code: |\n"
        "    for _ in range(200000):\n      print('spam spam spam')\n"
        "- id: writes-a-file\n  kind: basic\n  front: f\n  back: b\n  code: |\n"
        "    open('stray.txt', 'w').write('x')\n    print(open('stray.txt').read())\n"
        "- id: still-checked\n  kind: value\n  ask: q\n  code: x = 2\n  answer_expr: x * 2\n  answer: 5\n"
    )
    root = project({"h.yaml": HEADER + card(cards)})
    errors = problems(options(root, timeout=30.0))
    by_card = {e.split("card '")[1].split("'")[0]: e for e in errors}
    assert set(by_card) == {*HOSTILE, "still-checked"}
    assert "ran out of memory" in by_card["allocates"]
    assert "ran out of memory" in by_card["torch-allocates"]
    assert "crashed the worker process (SIGSEGV)" in by_card["segfaults"]
    assert "ended the worker process (exit status 3)" in by_card["os-exit"]
    assert "called sys.exit(2)" in by_card["sys-exit"]
    assert "File too large" in by_card["writes-a-huge-file"]
    assert "declared answer 5 but execution gives 4" in by_card["still-checked"]
    assert not (root / "stray.txt").exists() and not (Path.cwd() / "stray.txt").exists()


def test_a_snippet_that_loops_is_stopped(
    project: Callable[..., Path], options: Callable[..., pipeline.Options]
) -> None:
    root = project(
        {
            "l.yaml": HEADER
            + card(
                "- id: loops\n  kind: basic\n  front: f\n  back: b\n  code: |\n    while True:\n      pass\n"
            )
        }
    )
    [error] = problems(options(root, timeout=1.0))
    first, reached, limit = error.split("\n")
    assert "card 'loops' -> code: the snippet did not finish within 1 s (timeout): it was at " in first
    assert reached in ("    10 | while True:", "    11 | pass")
    assert limit == "    the limit is --timeout 1: give a larger one (--timeout 2)"


def test_flooding_output_is_cut_and_files_stay_in_a_temporary_folder(
    project: Callable[..., Path], options: Callable[..., pipeline.Options]
) -> None:
    root = project(
        {
            "f.yaml": HEADER
            + card("""
- id: floods
  kind: basic
  front: f
  back: b
  code: |
    for _ in range(200000):
        print('spam spam spam')
- id: writes-a-file
  kind: basic
  front: f
  back: b
  code: |
    open('stray.txt', 'w').write('kept')
    print(open('stray.txt').read())
""")
        }
    )
    report = pipeline.check(options(root))
    flood, writer = report.decks[0].cards
    assert len(flood.output) < 70_000 and flood.output.endswith("characters of output cut]")
    assert writer.output == "kept\n"
    assert not (root / "stray.txt").exists() and not (Path.cwd() / "stray.txt").exists()


def test_fail_fast_stops_at_the_first_failure(
    project: Callable[..., Path], options: Callable[..., pipeline.Options]
) -> None:
    slow = "- id: slow-{}\n  kind: basic\n  front: f\n  back: b\n  code: |\n    __import__('time').sleep(1)\n"
    cards = "".join(slow.format(i) for i in range(6))
    cards = "- id: fails\n  kind: basic\n  front: f\n  back: b\n  code: raise ValueError('no')\n" + cards
    root = project({"ff.yaml": HEADER + card(cards)})
    errors = problems(options(root, fail_fast=True, jobs=1))
    assert len(errors) == 1 and "ValueError: no" in errors[0]
    # The pool was cancelled cleanly: it serves the next run.
    assert len(problems(options(root, use_cache=False))) == 1


def test_one_worker_runs_jobs_in_isolation_and_is_replaced_when_it_dies(
    project: Callable[..., Path], options: Callable[..., pipeline.Options]
) -> None:
    root = project(
        {
            "s.yaml": HEADER
            + card("""
- id: changes-globals
  kind: basic
  front: f
  back: b
  code: |
    torch.set_default_dtype(torch.float64)
    torch.set_grad_enabled(False)
    torch.use_deterministic_algorithms(True)
    leaked = 1
- id: sees-defaults
  kind: value
  ask: q
  code: |
    x = torch.zeros(1, requires_grad=True) * 2
    strict = torch.are_deterministic_algorithms_enabled()
  answer_expr: (str(x.dtype), x.requires_grad, strict, "leaked" in globals())
- id: kills-its-worker
  kind: basic
  front: f
  back: b
  code: __import__("os")._exit(0)
- id: after-the-crash
  kind: value
  ask: q
  code: x = torch.ones(2).sum()
  answer_expr: x
  answer: 2.0
""")
        }
    )
    with Pool(1) as single:
        errors = problems(options(root, pool=single))
        assert len(errors) == 1 and "card 'kills-its-worker'" in errors[0]
        deck = root / "cards" / "s.yaml"
        deck.write_text(deck.read_text().replace('__import__("os")._exit(0)', "pass"))
        report = pipeline.check(options(root, pool=single))
    answers = {vc.card.id: vc.answer for vc in report.decks[0].cards}
    assert answers["sees-defaults"] == {
        "type": "repr",
        "value": "('torch.float32', True, False, False)",
        "display": "('torch.float32', True, False, False)",
    }
