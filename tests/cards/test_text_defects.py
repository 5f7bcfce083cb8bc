"""Text a learner or author meets (issue 31): unbalanced math and YAML slips told where they start, in
quizgen's words; long exception options shortened; no doubled period; float32 values read at float32's
precision after `.item()`; card ids written in prose become links."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from quizgen import pipeline
from quizgen.errors import QuizgenError
from quizgen.render.anki.notes import titled_links
from quizgen.render.markup import markdown
from quizgen.render.present import card_view
from quizgen.render.view import CardView
from tests.support.projects import write_project


def _refused(root: Path, options: Callable[..., pipeline.Options]) -> str:
    with pytest.raises(QuizgenError) as caught:
        pipeline.check(options(root))
    return caught.value.format_message()


def _basic(front: str, back: str = "'Fine.'") -> str:
    return f"deck: D\ncards:\n  - id: odds\n    kind: basic\n    front: {front}\n    back: {back}\n"


def test_an_unclosed_math_opener_is_a_located_error(
    tmp_path: Path, options: Callable[..., pipeline.Options]
) -> None:
    # It built silently, and the quiz showed "( \frac{1}{1-p}?".
    root = write_project(tmp_path, {"d.yaml": _basic(r"'What are the odds \( \frac{1}{1-p}?'", r"'Odd \).'")})
    deck = root / "cards" / "d.yaml"
    assert _refused(root, options).splitlines()[:2] == [
        f"{deck}:5:12: card 'odds' -> front: math opened with '\\(' is never closed (no '\\)' after it), "
        "so the quiz would show '(' and the TeX as text: close it with '\\)', or write a plain '('",
        f"{deck}:6:11: card 'odds' -> back: '\\)' closes math that no '\\(' opened, so the quiz would "
        "show ')': open the math with '\\(', or write a plain ')'",
    ]


def test_an_unclosed_double_quote_is_told_where_it_opens(
    tmp_path: Path, options: Callable[..., pipeline.Options]
) -> None:
    # PyYAML told it lines later ("found character that cannot start any token", "unexpected end").
    text = (
        _basic('"What are the odds?', '"Even."')
        + "  - id: two\n    kind: basic\n    front: 'x'\n    back: 'y'\n"
    )
    root = write_project(tmp_path, {"d.yaml": text})
    assert _refused(root, options).splitlines()[0] == (
        f"{root / 'cards' / 'd.yaml'}:5:12: invalid YAML: this double quote is not closed on its line, so "
        "YAML read the lines below as its text and failed at line 6: close it with '\"', or write a text "
        "holding quotes or spanning lines in single quotes or a block scalar (`|`), indented under its key"
    )


def test_a_quoted_text_spanning_lines_is_not_blamed_for_a_slip_below_it(
    tmp_path: Path, options: Callable[..., pipeline.Options]
) -> None:
    text = _basic('"What are\n      the odds?"') + "   tags: [x]\n"
    root = write_project(tmp_path, {"d.yaml": text})
    assert f"{root / 'cards' / 'd.yaml'}:8:4: invalid YAML: did not find expected '-' indicator" in _refused(
        root, options
    )


def test_tex_in_double_quotes_gets_the_quote_style_to_use(
    tmp_path: Path, options: Callable[..., pipeline.Options]
) -> None:
    root = write_project(tmp_path, {"d.yaml": _basic(r'"What are the odds \( \frac{1}{1-p} \)?"')})
    assert _refused(root, options).splitlines()[0] == (
        f"{root / 'cards' / 'd.yaml'}:5:31: invalid YAML: found unknown escape character (in double quotes "
        "a backslash starts an escape (\\n, \\t): write TeX and other backslashes in single quotes "
        "('\\(x^2\\)') or in a block scalar (`|`))"
    )


MESSAGE = (
    "Inference tensors cannot be saved for backward. To work around you can make a clone to get a "
    "normal tensor and use it in autograd."
)
VALUES = f"""\
deck: Values
setup: |
  import torch
cards:
  - id: saved-inference
    kind: value
    ask: "What does it give?"
    code: |
      x = 2
    answer_expr: x
    variants:
      - label: you save an inference tensor for backward
        code: |
          raise RuntimeError("{MESSAGE}")
  - id: f32-difference
    kind: value
    ask: "What does it give?"
    code: |
      a, b = torch.tensor(0.3), torch.tensor(0.2)
      d = (a - b).item()
    answer_expr: d
    variants:
      - label: you subtract the other way
        replace: {{"d = (a - b).item()": "d = (b - a).item()"}}
"""


@pytest.fixture(scope="module")
def checked(tmp_path_factory: pytest.TempPathFactory, pool: object) -> pipeline.Report:
    root = write_project(tmp_path_factory.mktemp("values"), {"values.yaml": VALUES})
    report = pipeline.check(pipeline.Options(cards_dir=root / "cards", out_dir=root / "build", pool=pool))  # type: ignore[arg-type]
    report.root = root  # type: ignore[attr-defined]
    return report


@pytest.fixture(scope="module")
def values(checked: pipeline.Report) -> dict[str, CardView]:
    return {vc.card.id: card_view(vc, d.deck.tags, d.deck) for d in checked.decks for vc in d.cards}


def test_a_lone_exception_option_shows_its_type_its_feedback_the_message(values: dict[str, CardView]) -> None:
    # A 300-character RuntimeError was offered whole as an option; the only option raising its type now
    # shows the type alone (its message restated the set-up: variants._option_text).
    right, wrong = values["saved-inference"].judge["choices"]  # type: ignore[misc]
    assert right["text"] == "2"
    assert wrong["text"] == "raises RuntimeError"
    label = "that is what you get if you save an inference tensor for backward"
    assert wrong["feedback"] == f"{label} (it raises RuntimeError: {MESSAGE})"


def test_an_answer_ending_its_sentence_gets_no_second_period() -> None:
    ends = CardView("c", "value", "D", [], "", answer_text="raises RuntimeError: call `inference_mode()`.")
    assert ends.answer_stop == ""
    assert CardView("c", "value", "D", [], "", answer_text="8.0").answer_stop == "."


def test_a_float32_value_after_item_is_warned_where_it_is_computed(checked: pipeline.Report) -> None:
    # `(t1 - t2).item()` of float32 tensors showed 0.10000000894069672 as the answer and in the choices,
    # unwarned (only printed output was checked for noise).
    deck = checked.root / "cards" / "values.yaml"  # type: ignore[attr-defined]
    fix = "as learners would see it: answer with the tensor (drop `.item()`) or round it (`round(x, 4)`)"
    assert [str(w) for w in checked.warnings if "float noise" in w.message] == [
        f"{deck}:21:18: card 'f32-difference' -> answer_expr: the answer shows float noise: "
        f"0.10000000894069672 (reads 0.10000001), {fix}",
        f"{deck}:23:9: card 'f32-difference' -> variants[0]: variant \"you subtract the other way\" shows "
        f"float noise: -0.10000000894069672 (reads -0.10000001), {fix}",
    ]


def test_a_card_id_written_as_code_is_a_link_to_it() -> None:
    # `zero-grad-default-leaves-none` in an explanation showed as raw text (and named the lesson).
    from quizgen.render.markup import link_card_ids

    html = markdown("See `zero-grad-first` and `not-a-card`.")
    linked = link_card_ids(html, {"zero-grad-first"})
    assert linked == '<p>See <a href="#card:zero-grad-first"></a> and <code>not-a-card</code>.</p>\n'
    titles = {"zero-grad-first": ("D", "Why call zero_grad()?")}
    assert titled_links(html, titles) == "<p>See “Why call zero_grad()?” and <code>not-a-card</code>.</p>\n"


WRAPPED = """\
deck: D
cards:
  - id: wrapped
    kind: basic
    front: |
      Both gradients are
      1. What is `b` after one step?
    back: |
      It moves by the group's lr, which is
      # the default only where a group sets none.

      A list meant as one, after a blank line:

      - first
      - second
"""


def test_a_wrapped_line_that_starts_a_list_or_heading_is_warned_at_its_line(
    tmp_path: Path, options: Callable[..., pipeline.Options]
) -> None:
    # `param-group-lr-overrides-default` wrapped "... Both gradients are" / "1. What is `b` ...?", and the
    # quiz and Anki showed a numbered list in the middle of the question; nothing warned.
    root = write_project(tmp_path, {"d.yaml": WRAPPED})
    deck = root / "cards" / "d.yaml"
    report = pipeline.check(options(root))
    assert [str(w) for w in report.warnings if "Markdown" in w.message] == [
        f"{deck}:7: card 'wrapped' -> front: the line '1. What is `b` after one step?' starts a Markdown "
        "list inside a paragraph: rewrap the text so no line starts with '1.' (or put a blank line before "
        "a list you mean)",
        f"{deck}:10: card 'wrapped' -> back: the line '# the default only where a gro' starts a Markdown "
        "heading inside a paragraph: rewrap the text so no line starts with '#' (or put a blank line "
        "before a heading you mean)",
    ]
