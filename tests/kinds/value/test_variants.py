"""A value card's `variants:` (executed misconceptions): how they are written and read, each run as a job
of its own, its answer a wrong choice with the label as feedback, and the build refusing a variant that a
learner could not tell from the right answer."""

from __future__ import annotations

import json
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

import jsonschema
import pytest
import yaml

from quizgen import pipeline
from quizgen.cards import loader, schema
from quizgen.cards.model import Snippet, Tolerance
from quizgen.errors import CardErrors, Location
from quizgen.execution.protocol import Answer, Outcome
from quizgen.kinds.value import variants
from quizgen.kinds.value.variants import Variant
from quizgen.project import settings
from quizgen.render.present import card_view
from tests.support.variants import CHOICE_DECK, FEEDBACK, FILES, RAISES

HEADER = "deck: T\nsetup: |\n  import torch\ncards:\n"
CARD = """\
  - id: c
    kind: value
    ask: q
    code: |
      w = torch.nn.Parameter(torch.tensor(1.0))
      opt = torch.optim.SGD([w], lr=0.1)
      for _ in range(2):
          opt.zero_grad()
          (2 * w).backward()
    answer_expr: w.grad.item()
    answer: 2.0
    variants:
"""


def check_errors(root: Path, options: Callable[..., pipeline.Options]) -> list[str]:
    with pytest.raises(CardErrors) as info:
        pipeline.check(options(root))
    return [str(p) for p in info.value.problems]


def load_errors(root: Path) -> list[str]:
    return [str(p) for p in loader.load(root / "cards")[1]]


# -- reading: every mistake located at the variant ------------------------------------------------------


def test_a_removed_line_that_is_not_in_the_code_is_a_located_error(project: Callable[..., Path]) -> None:
    root = project(
        {"t.yaml": HEADER + CARD + "      - label: forgot zero_grad\n        remove: opt.zero_grads()\n"}
    )
    path = root / "cards" / "t.yaml"
    assert load_errors(root) == [
        f"{path}:18:17: card 'c' -> variants[0].remove: variant \"forgot zero_grad\": no line of the code "
        "reads `opt.zero_grads()` (did you mean `opt.zero_grad()`?)"
    ]


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        (
            "      - label: x\n",
            "17:9: card 'c' -> variants[0]: a variant has code: (the whole snippet) or remove:/replace: "
            "(some lines)",
        ),
        (
            "      - label: x\n        remove: opt.zero_grad()\n        code: pass\n",
            "17:9: card 'c' -> variants[0]: a variant has code: (the whole snippet) or remove:/replace: "
            "(some lines)",
        ),
        (
            "      - remove: opt.zero_grad()\n",
            "17:9: card 'c' -> variants[0]: missing required field 'label'",
        ),
        (
            "      - label: x\n        removes: opt.zero_grad()\n",
            "18:9: card 'c' -> variants[0].removes: unknown key 'removes'; did you mean 'remove'?",
        ),
        (
            "      - label: x\n        code: 'w = ('\n",
            "18:20: card 'c' -> variants[0].code: Python syntax error: '(' was never closed",
        ),
        (
            "      - label: x\n        replace: {opt.zero_grad(): ''}\n",
            "18:36: card 'c' -> variants[0].replace: to leave a line out, list it under remove:",
        ),
        (
            "      - label: x\n        replace: {'for _ in range(2):': 'opt.step()'}\n",
            "17:9: card 'c' -> variants[0]: variant \"x\": the changed code does not compile: "
            "unexpected indent",
        ),
        (
            "      - label: x\n        replace: {opt.zero_grad(): 'opt.zero_grad()  # again'}\n",
            "17:9: card 'c' -> variants[0]: variant \"x\" leaves the code as it is "
            "(comments and spacing aside)",
        ),
        (
            "      - just a string\n",
            "17:9: card 'c' -> variants[0]: a variant is a mapping: label, then code,",
        ),
    ],
)
def test_a_malformed_variant_is_reported_at_its_entry(
    project: Callable[..., Path], entry: str, message: str
) -> None:
    root = project({"t.yaml": HEADER + CARD + entry})
    error = load_errors(root)[0]
    assert error.startswith(f"{root / 'cards' / 't.yaml'}:{message}"), error


def test_remove_and_replace_match_lines_by_their_text_and_keep_line_numbers(
    project: Callable[..., Path],
) -> None:
    entry = (
        "      - label: the loop forgets to clear\n        remove: [opt.zero_grad()]\n"
        "        replace: {'(2 * w).backward()': '(3 * w).backward()  # bigger'}\n"
    )
    root = project({"t.yaml": HEADER + CARD + entry})
    [deck], problems = loader.load(root / "cards")
    assert problems == []
    [variant] = deck.cards[0].variants  # type: ignore[attr-defined]
    assert variant.label == "the loop forgets to clear"
    assert variant.code.code == (
        "w = torch.nn.Parameter(torch.tensor(1.0))\n"
        "opt = torch.optim.SGD([w], lr=0.1)\n"
        "for _ in range(2):\n"
        "    pass\n"  # a removed line keeps its place, and the loop its body
        "    (3 * w).backward()  # bigger\n"
    )
    assert variant.code.line == deck.cards[0].code.line  # type: ignore[attr-defined]


def test_the_schema_describes_variants_and_the_deck_setting() -> None:
    published = schema.json_schema()
    jsonschema.Draft202012Validator.check_schema(published)
    for text in FILES.values():
        jsonschema.validate(yaml.safe_load(text), published)
    for wrong in ({"label": "x"}, {"label": "x", "code": "a", "remove": "b"}, {"code": "a"}):
        deck = yaml.safe_load(CHOICE_DECK)
        deck["cards"][0]["variants"] = [wrong]
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(deck, published)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({**yaml.safe_load(CHOICE_DECK), "value_answers": "multiple"}, published)


def test_value_answers_is_a_project_setting_and_a_deck_override(project: Callable[..., Path]) -> None:
    root = project(FILES)
    (root / "quizgen.toml").write_text('[quiz]\nvalue_answers = "typed"\n')
    assert settings.load(root / "cards").value_answers == "typed"
    decks, _ = loader.load(root / "cards", value_answers="typed")
    assert [d.cards[0].answers for d in decks] == ["typed", "typed"]  # type: ignore[attr-defined]
    decks, _ = loader.load(root / "cards")
    assert [d.cards[0].answers for d in decks] == ["choice", "typed"]  # type: ignore[attr-defined]
    (root / "cards" / "typed.yaml").write_text(
        FILES["typed.yaml"].replace("value_answers: typed", "value_answers: all")
    )
    assert load_errors(root) == [
        f"{root / 'cards' / 'typed.yaml'}:2:16 -> value_answers: value_answers is choice or typed"
    ]
    (root / "quizgen.toml").write_text('[quiz]\nvalue_answers = "multiple"\n')
    with pytest.raises(CardErrors) as info:
        settings.load(root / "cards")
    assert str(info.value.problems[0]).endswith(
        "quizgen.toml:2 -> quiz.value_answers: expected 'choice' or 'typed'"
    )


# -- execution: each variant runs, its answer becomes a choice ---------------------------------------


def test_each_variant_runs_and_its_answer_is_a_wrong_choice_with_its_feedback(
    project: Callable[..., Path], options: Callable[..., pipeline.Options]
) -> None:
    root = project({"choice.yaml": CHOICE_DECK})
    report = pipeline.check(options(root))
    [vc] = report.decks[0].cards
    assert vc.outcome is not None and vc.outcome.parts is not None
    given = {name: variants_answer(part.value) for name, part in vc.outcome.parts.items()}
    assert given == {
        "variants[0]": 5.0,
        "variants[1]": 3.0,
        "variants[2]": 3.0,
        "variants[3]": "RuntimeError",
    }
    judge = card_view(vc, []).judge
    assert judge["mode"] == "choice"
    choices: Any = judge["choices"]
    assert [c["feedback"] for c in choices] == FEEDBACK
    assert [c["text"] for c in choices] == ["8.0", "5.0", "3.0", RAISES]
    assert choices[0]["answer"] == judge["answer"]
    again = pipeline.check(options(root))  # variants are cached like every job
    assert (again.executed, again.cached) == (0, 5)


def variants_answer(value: Answer | None) -> object:
    assert value is not None
    return value["value"]


def test_a_variant_that_gives_the_right_answer_fails_the_build(
    project: Callable[..., Path], options: Callable[..., pipeline.Options]
) -> None:
    entries = (
        "      - label: the gradient is summed over the loop\n        remove: opt.zero_grad()\n"
        "      - label: forgot zero_grad\n"
        "        replace: {opt.zero_grad(): opt.zero_grad(set_to_none=False)}\n"
    )
    root = project({"t.yaml": HEADER + CARD + entries})
    assert check_errors(root, options) == [
        f"{root / 'cards' / 't.yaml'}:19:9: card 'c' -> variants[1]: variant \"forgot zero_grad\" gives 2.0, "
        "the same as the right answer: the misconception is not distinguishable"
    ]


def test_a_variant_that_raises_a_name_error_is_a_slip(
    project: Callable[..., Path], options: Callable[..., pipeline.Options]
) -> None:
    entry = "      - label: no optimizer\n        remove: opt = torch.optim.SGD([w], lr=0.1)\n"
    root = project({"t.yaml": HEADER + CARD + entry})
    assert check_errors(root, options) == [
        f"{root / 'cards' / 't.yaml'}:17:9: card 'c' -> variants[0]: variant \"no optimizer\" raises "
        "NameError: name 'opt' is not defined: a slip in the variant (a name it no longer defines), "
        "not an answer a learner would give; change what it removes or give its code"
    ]


def test_cards_json_carries_each_variants_answer(
    project: Callable[..., Path], options: Callable[..., pipeline.Options]
) -> None:
    root = project({"choice.yaml": CHOICE_DECK})
    pipeline.build(options(root))
    [card] = json.loads((root / "build" / "cards.json").read_text())["decks"][0]["cards"]
    assert [v["label"] for v in card["variants"]] == [
        "backward overwrites .grad",
        "the second backward is forgotten",
        "only the first loss counts",
        "w lost requires_grad",
    ]
    assert card["outcome"]["parts"]["variants[0]"]["value"]["value"] == 5.0
    assert "seconds" not in card["outcome"]["parts"]["variants[0]"]  # same sources, same bytes


# -- comparing answers as the card does --------------------------------------------------------------


@pytest.mark.parametrize(
    ("a", "b", "same"),
    [
        (
            {"type": "float", "value": 2.0, "display": "2.0"},
            {"type": "float", "value": 2.0001, "display": ""},
            True,
        ),
        (
            {"type": "float", "value": 2.0, "display": "2.0"},
            {"type": "float", "value": 2.1, "display": ""},
            False,
        ),
        (
            {"type": "tensor", "value": 2.0, "display": "tensor(2.)", "dtype": "float32", "shape": []},
            {"type": "float", "value": 2.0, "display": "2.0"},
            True,
        ),
        (
            {"type": "float", "value": "nan", "display": "nan"},
            {"type": "float", "value": "nan", "display": ""},
            True,
        ),
        (
            {"type": "shape", "value": [2, 3], "display": ""},
            {"type": "shape", "value": [3, 2], "display": ""},
            False,
        ),
        (
            {"type": "exception", "value": "RuntimeError", "message": "a (b)", "display": ""},
            {"type": "exception", "value": "RuntimeError", "message": "a (b)", "display": ""},
            True,
        ),
        (
            {"type": "exception", "value": "RuntimeError", "message": "a", "display": ""},
            {"type": "exception", "value": "RuntimeError", "message": "b", "display": ""},
            False,
        ),
        (
            {"type": "none", "value": None, "display": "None"},
            {"type": "bool", "value": False, "display": ""},
            False,
        ),
    ],
)
def test_two_answers_are_the_same_when_one_declared_would_pass_for_the_other(
    a: Any, b: Any, same: bool
) -> None:
    assert variants.same(a, b, Tolerance()) is same


def test_reading_a_variant_prints_no_python_warning(project: Callable[..., Path]) -> None:
    # `1if` compiles with a SyntaxWarning; the loader compiles the changed code to locate a syntax error,
    # and Python would print the warning with the YAML file's line of the same number.
    entry = '      - label: odd\n        replace: {"opt.zero_grad()": "y = 1if True else 0"}\n'
    root = project({"t.yaml": HEADER + CARD + entry})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert load_errors(root) == []
    assert [str(w.message) for w in caught] == []


def _raised(error: str, message: str) -> Answer:
    return cast(Answer, {"type": "exception", "value": error, "message": message})


def test_an_option_raising_what_no_other_raises_shows_its_type_alone_and_its_feedback_the_message() -> None:
    """The message often restates the question ("can't optimize a non-leaf Tensor"); two options raising
    the same type keep their first clauses, or the learner could not tell them apart."""
    here = Location("cards/x.yaml", 1)
    wrong = [Variant(f"belief {n}", Snippet("x = 1", "cards/x.yaml", 1), here) for n in range(3)]
    right = _raised("ValueError", "can't optimize a non-leaf Tensor")
    number = cast(Answer, {"type": "float", "value": 2.0, "display": "2.0"})
    parts = {
        "variants[0]": Outcome(ok=True, value=number),
        "variants[1]": Outcome(ok=True, value=_raised("RuntimeError", "element 0 does not require grad")),
        "variants[2]": Outcome(ok=True, value=_raised("RuntimeError", "Trying to backward a second time")),
    }
    judged: Any = variants.judge(wrong, Outcome(ok=True, value=right, parts=parts), Tolerance(), "choice")
    assert [c["text"] for c in judged["choices"]] == [
        "raises ValueError",
        "2.0",
        "raises RuntimeError: element 0 does not require grad",
        "raises RuntimeError: Trying to backward a second time",
    ]
    assert judged["choices"][0]["feedback"] == ""  # the right one: the back shows the answer whole
    assert [c["feedback"] for c in judged["choices"][2:]] == [
        "that is what you get if belief 1",
        "that is what you get if belief 2",
    ]
