"""What an author reads when a declared answer does not match: the kinds of value on both sides, the
tolerance used, and what to write instead."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from quizgen import pipeline
from quizgen.errors import CardErrors

HEADER = "deck: T\nsetup: |\n  import torch\ncards:\n"


def value_card(code: str, answer: str) -> str:
    return f"  - id: c\n    kind: value\n    ask: q\n    code: {code}\n    answer_expr: x\n    answer: {answer}\n"  # noqa: E501


@pytest.mark.parametrize(
    ("code", "answer", "message"),
    [
        (
            "x = 2.0",
            '"2.0"',
            "declared answer '2.0' but execution gives 2.0: a string was declared, execution gives a float: "
            "write 2.0 without quotes",
        ),
        (
            "x = 1 / 3",
            "0.33",
            "declared answer 0.33 but execution gives 0.3333333333333333: |0.33 - 0.333333| = 0.00333 "
            "is more than the tolerance allows (atol 1e-06 + rtol 0.001 x |0.333333| = 0.000334): "
            "declare the computed value, or set `tolerance: {rtol: ..., atol: ...}` "
            "if the difference is noise",
        ),
        (
            "x = torch.ones(2)",
            "true",
            "declared answer True but execution gives tensor([1., 1.]): a boolean was declared, execution "
            "gives a float32 tensor of shape [2]",
        ),
        ("x = 8.0", "5.0", "declared answer 5.0 but execution gives 8.0"),  # simply another number
        (
            "x = torch.tensor(0.9)",
            '"0.9"',
            "declared answer '0.9' but execution gives tensor(0.9): a string was declared, execution gives "
            "a float32 tensor of shape []: write 0.9 without quotes",
        ),
        (
            "x = torch.tensor(True)",
            '"True"',
            "declared answer 'True' but execution gives tensor(True): a string was declared, execution gives "
            "a bool tensor of shape []: write true without quotes",
        ),
        (
            "x = torch.tensor([1.0, 2.0])",
            "[1.0, 2.01]",
            "declared answer [1.0, 2.01] but execution gives tensor([1., 2.]): element 1: |2.01 - 2| = 0.01 "
            "is more than the tolerance allows (atol 1e-06 + rtol 0.001 x |2| = 0.002): declare the computed "
            "value, or set `tolerance: {rtol: ..., atol: ...}` if the difference is noise",
        ),
        (
            "x = torch.tensor([1.0, 2.0])",
            "[[1.0], [2.0]]",
            "declared answer [[1.0], [2.0]] but execution gives tensor([1., 2.]): a nested list of shape "
            "[2, 1] was declared, execution gives a float32 tensor of shape [2]",
        ),
        (
            "x = torch.tensor([1.0, 2.0])",
            '"tensor([1., 2., 3.])"',
            "declared answer 'tensor([1., 2., 3.])' but execution gives tensor([1., 2.]): the string is read "
            "as a learner's typed answer: expected 2 numbers",
        ),
        (
            "x = 2 + 4j",
            "2",
            "declared answer 2 but execution gives (2+4j): a number was declared, execution gives a complex "
            'number: YAML has no complex numbers, quote one (answer: "2+4j")',
        ),
        (
            "x = torch.ones(2, 3).shape",
            "6",
            "declared answer 6 but execution gives torch.Size([2, 3]): a number was declared, execution "
            "gives a torch.Size: declare a shape as {shape: [2, 3]}",
        ),
    ],
)
def test_a_mismatch_says_what_was_declared_what_ran_and_what_to_write(
    project: Callable[..., Path],
    options: Callable[..., pipeline.Options],
    code: str,
    answer: str,
    message: str,
) -> None:
    root = project({"t.yaml": HEADER + value_card(code, answer)})
    with pytest.raises(CardErrors) as info:
        pipeline.check(options(root))
    [problem] = info.value.problems
    assert problem.message == message


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "deck: T\ncards:\n  - id: a\n    kind: basic\n   front: f\n    back: b\n",
            "t.yaml:5:4: invalid YAML: did not find expected '-' indicator (`front:` at line 5 is indented "
            "1 space less than `kind:` at line 4: line it up with it)",
        ),
        (
            "deck: T\ncards:\n  - id: a\n    kind: basic\n    front: f: g\n    back: b\n",
            "t.yaml:5:13: invalid YAML: mapping values are not allowed in this context "
            "(a value holding ': ' needs quotes, e.g. front: \"Why: this?\")",
        ),
        (
            "deck: T\ncards:\n  - id: a\n\tkind: basic\n",
            "t.yaml:4:1: invalid YAML: found a tab character that violates indentation "
            "(indent with spaces, not tabs)",
        ),
    ],
)
def test_yaml_slips_come_with_a_hint(
    project: Callable[..., Path], options: Callable[..., pipeline.Options], text: str, message: str
) -> None:
    root = project({"t.yaml": text})
    with pytest.raises(CardErrors) as info:
        pipeline.check(options(root))
    assert [str(p) for p in info.value.problems] == [f"{root / 'cards'}/{message}"]
