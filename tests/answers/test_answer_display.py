"""Answers as learners read them (issue 12): floats at their dtype's precision, checked against numpy and
torch; judge.js rounds to a dtype as Python does; and a built deck shows, quotes and judges them."""

from __future__ import annotations

import json
import math
import random
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from quizgen import pipeline
from quizgen.answers.compare import show
from quizgen.answers.display import FORMATS, round_to, shortest
from quizgen.answers.typed import judge
from quizgen.cards.model import Tolerance
from tests.support.paths import REPO
from tests.support.quiz import as_shown
from tests.support.tools import missing

JUDGE = REPO / "src" / "quizgen" / "static" / "judge.js"


def samples(count: int, seed: int) -> list[float]:
    """Floats over every magnitude a float32 holds, of both signs, with powers of two among them."""
    rng = random.Random(seed)
    found = [2.0**e for e in range(-149, 128, 7)] + [0.1, 0.3, 0.9, 1.2, 65504.0, 6e-8]
    found += [rng.choice((-1, 1)) * 10 ** rng.uniform(-44, 38) for _ in range(count)]
    return found


def digits(text: str) -> int:
    """Significant digits of a decimal as Python or numpy writes it."""
    mantissa = text.lstrip("-").split("e")[0].replace(".", "").lstrip("0")
    return len(mantissa.rstrip("0")) or 1


@pytest.mark.parametrize(("dtype", "cast"), [("float32", np.float32), ("float16", np.float16)])
def test_shortest_is_numpys_shortest_round_trip(dtype: str, cast: Any) -> None:
    with np.errstate(over="ignore", under="ignore"):
        values = [float(cast(x)) for x in samples(20_000, 1)]
    for x in [v for v in values if math.isfinite(v) and v != 0]:
        text, reference = shortest(x, dtype), str(cast(x))
        assert float(cast(float(text))) == x, (x, text)
        assert digits(text) == digits(reference), (x, text, reference)


def test_bfloat16_rounds_as_torch_casts_and_shows_the_fewest_digits() -> None:
    torch = pytest.importorskip("torch")
    floats = [x for x in samples(20_000, 2) if abs(x) < 3.4e38]
    cast = torch.tensor(floats, dtype=torch.float32).to(torch.bfloat16).float().tolist()
    exact = torch.tensor(floats, dtype=torch.float32).tolist()  # float32 -> bfloat16 rounds once
    for x, want in zip(exact, cast, strict=True):
        assert round_to(x, "bfloat16") == want, x
        if want in (0.0, math.inf, -math.inf):
            continue
        text = shortest(want, "bfloat16")
        assert round_to(float(text), "bfloat16") == want, (want, text)
        fewer = f"{want:.{digits(text) - 2}e}" if digits(text) > 1 else None
        assert fewer is None or round_to(float(fewer), "bfloat16") != want, (want, text, fewer)


def test_the_issue_s_numbers() -> None:
    assert shortest(0.8999999761581421, "float32") == "0.9"
    assert shortest(1.2000000476837158, "float32") == "1.2"
    assert shortest(0.949999988079071, "float32") == "0.95"
    assert shortest(0.9000000357627869, "float32") == "0.90000004"  # float32 arithmetic missed 0.9
    assert shortest(0.30078125, "bfloat16") == "0.3"
    assert shortest(0.1, None) == shortest(0.1, "float64") == "0.1"
    assert shortest(1 / 3, "float64") == "0.3333333333333333"


def test_judge_js_rounds_to_a_dtype_as_python_does() -> None:
    node = shutil.which("node")
    if node is None:
        missing("node")
    assert node is not None
    ties = [1 + k * 2.0**-bits for bits in (8, 11, 24) for k in (1, 3, -3)] + [2049.0, 2051.0, 65520.0]
    ties += [k * 2.0**e for e in (-25, -134, -150) for k in (1, 3, -1)]  # halfway between subnormals
    values = [x for x in samples(3000, 3) if abs(x) < 1e300] + ties + [0.30078125 + 2**-40, 65519.0]
    script = (
        f"const J = require({json.dumps(str(JUDGE))});"
        f"const xs = {json.dumps(values)}, dtypes = {json.dumps(list(FORMATS))};"
        "const out = dtypes.map((d) => xs.map((x) => J.roundTo(x, d)));"
        "console.log(JSON.stringify(out, (k, v) => (Math.abs(v) === Infinity ? String(v) : v)));"
    )
    done = subprocess.run([node, "-e", script], capture_output=True, text=True, timeout=60, check=True)
    from_js = json.loads(done.stdout)
    for dtype, rounded in zip(FORMATS, from_js, strict=True):
        assert [float(r) for r in rounded] == [round_to(x, dtype) for x in values], dtype


DECK = """\
deck: Shown
setup: |
  import torch
cards:
  - id: f32-item
    kind: value
    ask: q
    code: |
      w = torch.tensor(0.9)
    answer_expr: w.item()
    answer: 0.9
    cite:
      w: w
      noisy: w.item() * 1.0
    explain: "`w` is {{w}}; as a float64 expression {{noisy}}; the answer {{answer}}."
  - id: f32-tolist
    kind: value
    ask: q
    code: |
      w = torch.tensor([0.9, 1.2])
    answer_expr: w.tolist()
    answer: [0.9, 1.2]
  - id: f32-tensor
    kind: value
    ask: q
    code: |
      w = torch.tensor([[0.9, 2.0]], requires_grad=True) * 1
    answer_expr: w
    answer: [[0.9, 2.0]]
  - id: bf16
    kind: value
    ask: q
    code: |
      w = torch.tensor(0.3, dtype=torch.bfloat16)
    answer_expr: float(w)
    answer: 0.3
  - id: mask
    kind: value
    ask: q
    code: |
      m = torch.tensor([1.0, -1.0]) > 0
    answer_expr: m
    answer: [1, 0]
  - id: bools
    kind: value
    ask: q
    code: |
      t = (False, True)
    answer_expr: t
    answer: "False, True"
  - id: cplx
    kind: value
    ask: q
    code: |
      z = torch.tensor(2 + 4j)
    answer_expr: z
    answer: 2+4j
  - id: raises
    kind: value
    ask: q
    code: |
      torch.ones(2).item()
    answer: {raises: RuntimeError}
  - id: raises-in-expr
    kind: value
    ask: q
    code: |
      w = torch.ones(2)
    answer_expr: w.item()
    answer: {raises: RuntimeError}
"""
SHOWN = {
    "f32-item": "0.9",
    "f32-tolist": "[0.9, 1.2]",
    "f32-tensor": "tensor([[0.9, 2.]])",
    "bf16": "0.3",
    "mask": "tensor([True, False])",
    "bools": "(False, True)",
    "cplx": "tensor(2.+4.j)",
    "raises": "raises RuntimeError: a Tensor with 2 elements cannot be converted to Scalar",
    # raised by the answer expression as rewritten to note the tensor's dtype: still placed in it
    "raises-in-expr": "raises RuntimeError: a Tensor with 2 elements cannot be converted to Scalar",
}


def test_a_built_deck_shows_quotes_and_judges_answers_at_their_precision(
    project: Callable[..., Path], options: Callable[..., pipeline.Options]
) -> None:
    root = project({"shown.yaml": DECK})
    report = pipeline.build(options(root))
    cards = {vc.card.id: vc for deck in report.decks for vc in deck.cards}
    assert {i: show(vc.answer) for i, vc in cards.items() if vc.answer} == SHOWN
    for vc in cards.values():  # what an answer shows, typed back, is right
        assert vc.answer is not None and judge(show(vc.answer), vc.answer, Tolerance())[0], vc.card.id
    explain = cards["f32-item"].card.explain  # type: ignore[attr-defined]
    assert explain == "`w` is tensor(0.9); as a float64 expression 0.8999999761581421; the answer 0.9."
    data = json.loads((root / "build" / "cards.json").read_text(encoding="utf-8"))
    [value] = [c["outcome"]["value"] for d in data["decks"] for c in d["cards"] if c["id"] == "f32-item"]
    assert value == {"type": "float", "value": 0.8999999761581421, "display": "0.9", "dtype": "float32"}
    [page] = [
        as_shown(p.read_text(encoding="utf-8")) for p in (root / "build" / "quiz" / "decks").glob("*.html")
    ]
    assert "The answer is <code>0.9</code>." in page
    assert "raises RuntimeError: a Tensor with 2 elements cannot be converted to Scalar" in page


ANSWERS: list[dict[str, Any]] = [
    {"type": "float", "value": 0.8999999761581421, "dtype": "float32"},
    {"type": "int", "value": 3},
    {"type": "complex", "value": {"re": 2.0, "im": -4.0}},
    {"type": "list", "value": [False, True], "dtype": "bool"},
    {"type": "list", "value": [[1, 2], [3, 4]]},
    {"type": "tensor", "value": [True, False], "dtype": "bool", "shape": [2]},
    {"type": "tensor", "value": [[0.5, 2.0]], "dtype": "bfloat16", "shape": [1, 2]},
    {"type": "tensor", "value": {"re": 1.0, "im": 0.5}, "dtype": "complex64", "shape": []},
]
PIECES = [
    "0.9", "3", "2", "-4j", "+4j", "2.", "4.j", "1", "0", "0.5", "True", "false", "none", "nan", "-inf",
    "1/2", "(", ")", "[", "]", ",", " ", " ", "tensor(", "torch.Size(", "dtype=torch.bfloat16",
    "requires_grad=True", "j", "e", "-", "+", "yes", "x", ";", "1e-3", ".5", "grad_fn=<AddBackward0>",
]  # fmt: skip


def test_random_spellings_are_judged_alike_in_python_and_judge_js() -> None:
    """Beyond the table: judge.js and quizgen.answers.typed agree on a few thousand random spellings."""
    node = shutil.which("node")
    if node is None:
        missing("node")
    assert node is not None
    rng = random.Random(4)
    trials = [
        ("".join(rng.choices(PIECES, k=rng.randint(1, 9))), rng.randrange(len(ANSWERS))) for _ in range(4000)
    ]
    trials += [
        (spelled, k) for k in range(len(ANSWERS)) for spelled in ("2-4j", "(False, True)", "[[1,2],[3,4]]")
    ]
    script = (
        f"const J = require({json.dumps(str(JUDGE))});"
        f"const answers = {json.dumps(ANSWERS)}, trials = {json.dumps(trials)};"
        "console.log(JSON.stringify(trials.map(([t, k]) => J.judgeValue(t, answers[k]))));"
    )
    done = subprocess.run([node, "-e", script], capture_output=True, text=True, timeout=60, check=True)
    from_js = json.loads(done.stdout)
    for (typed, k), verdict in zip(trials, from_js, strict=True):
        ok, reason = judge(typed, ANSWERS[k], Tolerance())  # type: ignore[arg-type]
        assert (ok, reason) == (verdict["ok"], verdict["reason"]), (typed, ANSWERS[k])
    assert sum(v["ok"] for v in from_js) >= 3  # the right spellings among them are judged right
