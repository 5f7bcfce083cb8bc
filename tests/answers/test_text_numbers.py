"""Issue 22: what learners read. A placeholder's value reads as written (never as Markdown), numbers show
as people write them (no float64 noise), the build warns when a snippet prints float noise, and YAML
numbers like `1e-3` are numbers."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from quizgen import pipeline
from quizgen.answers import display, placeholders
from quizgen.execution.pool import Pool
from quizgen.render.markup import markdown
from quizgen.render.view import card_key
from tests.support.projects import write_project
from tests.support.quiz import cards_held, close_tab, open_tab

WARNING = "Detected call of `lr_scheduler.step()` before `optimizer.step()`. *Note* <b>x</b> [a](b) __init__"

TEXT_DECK = f"""\
deck: Text
cards:
  - id: scheduler-warns
    kind: value
    ask: "What is `x`?"
    code: |
      print({WARNING!r})
      x = 4
    answer_expr: x
    answer: 4
    explain: "It prints `{{{{output}}}}`. As text: {{{{output}}}}"
  - id: noisy-sum
    kind: value
    ask: "What is `1 - 0.96`?"
    code: |
      import torch
      print(torch.tensor(0.1).item())
      y = 1 - 0.96
    answer_expr: y
    answer: 0.04
    explain: "It is {{{{answer}}}}."
    variants:
      - label: the subtraction is the other way round
        replace: {{"y = 1 - 0.96": "y = 0.96 - 1"}}
"""


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory, pool: Pool) -> pipeline.Report:
    root = write_project(tmp_path_factory.mktemp("text"), {"text.yaml": TEXT_DECK})
    report = pipeline.build(pipeline.Options(cards_dir=root / "cards", out_dir=root / "build", pool=pool))
    report.root = root  # type: ignore[attr-defined]
    return report


def page_of(report: pipeline.Report) -> Path:
    return report.root / "build" / "quiz" / "decks" / "text.html"  # type: ignore[attr-defined,no-any-return]


# -- filled values are text ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "written, value, codes, text",
    [
        ("`{{o}}`", "a `b` c", ["a `b` c"], "a `b` c"),
        ("``{{o}}``", "`b`", ["`b`"], "`b`"),
        ("see {{o}} here", "*a* _b_ <i>c</i> [d](e) &amp;", [], "see *a* _b_ <i>c</i> [d](e) &amp; here"),
        ("{{o}}", "1. first\n- second\n# third\n---", [], "1. first\n- second\n# third\n---"),
        ("```\n{{o}}\n```", "x\n```\ny", ["x\n```\ny\n"], "x\n```\ny"),
        ("a \\{{o}} b {{o}}", "`", [], "a {{o}} b `"),
    ],
)
def test_a_value_reads_as_written_wherever_it_lands(
    written: str, value: str, codes: list[str], text: str
) -> None:
    rendered = markdown(placeholders.fill(written, {"o": value}))
    found = [_text(c) for c in re.findall(r"<code>(.*?)</code>", rendered, re.S)]
    assert found == codes, rendered
    assert _text(rendered).strip() == text, rendered
    assert not re.search(r"<(em|strong|i|a|h1|li|hr)\b", rendered), rendered


def test_tex_in_math_stays_tex() -> None:
    assert placeholders.fill("\\( {{x}} \\)", {"x": "\\frac{1}{2}"}) == "\\( \\frac{1}{2} \\)"
    assert placeholders.fill("it is {{x}}", {"x": "\\(a_1\\) *b*"}) == "it is \\(a_1\\) \\*b\\*"


def _text(fragment: str) -> str:
    import html

    return html.unescape(re.sub(r"<[^>]+>", "", fragment))


def test_a_printed_warning_reads_as_written_in_the_quiz(browser: Any, site: pipeline.Report) -> None:
    tab = open_tab(browser, page_of(site).as_uri() + f"#card-{card_key('scheduler-warns')}", width=1280)
    try:
        page = tab.page
        page.fill(f"#answer-{card_key('scheduler-warns')}", "4")
        page.press(f"#answer-{card_key('scheduler-warns')}", "Enter")
        explain = page.locator(f"#card-{card_key('scheduler-warns')} .explain")
        explain.wait_for(state="visible")
        assert explain.locator("code").all_inner_texts() == [WARNING]
        assert explain.inner_text().strip() == f"It prints {WARNING}. As text: {WARNING}"
        assert explain.locator("em, strong, b, a").count() == 0
        assert tab.errors == []
    finally:
        close_tab(tab)


def test_anki_shows_filled_values_and_numbers_as_written(site: pipeline.Report, tmp_path: Path) -> None:
    import html

    from tests.support.anki import collection, import_all, note_of

    with collection(tmp_path / "anki") as col:
        import_all(col, site)
        explain = col.get_note(note_of(col, "scheduler-warns"))["Explain"]
        noisy = col.get_note(note_of(col, "noisy-sum"))
        answer, noisy_explain = noisy["Answer"], noisy["Explain"]
    codes = [html.unescape(c) for c in re.findall(r"<code[^>]*>(.*?)</code>", explain, re.S)]
    assert codes == [WARNING], explain
    assert not re.search(r"<(em|strong|b|a)\b", explain), explain
    assert answer == "0.04" and "It is 0.04." in noisy_explain, (answer, noisy_explain)


# -- numbers as people write them ----------------------------------------------------------------


@pytest.mark.parametrize(
    "x, shown",
    [
        (1 - 0.96, "0.04"),
        (0.1 + 0.2, "0.3"),
        (1e-3 * (1 + 2**-52), "0.001"),
        (sum([0.1] * 10), "1.0"),
        (1 / 3, "0.3333333333333333"),  # no short decimal is near: every digit shown
        (0.8999999761581421, "0.8999999761581421"),  # a float32 in a float64: meaningful digits
        (2.5e-10, "2.5e-10"),
    ],
)
def test_a_float64_shows_without_decimal_noise(x: float, shown: str) -> None:
    assert display.shortest(x) == shown
    assert display.shortest(x, "float64") == shown
    assert abs(float(shown) - x) <= display.NOISE_ULPS * __import__("math").ulp(x)


def test_lists_of_float64_show_without_noise() -> None:
    from quizgen.execution.worker.describe import describe

    assert describe([0.1 + 0.2, 1 - 0.96])["display"] == "[0.3, 0.04]"
    assert describe((1 / 3, 2.0))["display"] == "(0.3333333333333333, 2.0)"
    assert describe([1, 2])["display"] == "[1, 2]" and describe((True,))["display"] == "(True,)"


def test_answers_and_choices_show_no_noise(site: pipeline.Report) -> None:
    held = cards_held(page_of(site).read_text(encoding="utf-8"))
    card = _text(held[card_key("noisy-sum")])
    assert "0.040000000000000036" not in card and "-0.040000000000000036" not in card
    assert "It is 0.04." in card
    assert "-0.04" in card  # the variant's choice


def test_the_build_warns_of_float_noise_a_snippet_prints(site: pipeline.Report) -> None:
    found = [str(w) for w in site.warnings if "float noise" in w.message]
    assert len(found) == 1, found
    assert "noisy-sum" in found[0] and "text.yaml:" in found[0]
    assert "0.10000000149011612 (reads 0.1)" in found[0] and "set_printoptions" in found[0]


def test_noise_is_found_in_what_was_printed() -> None:
    printed = "[0.10000002384185791, 0.009999990463256836] 0.3333333333333333 tensor([0.1000]) 2.5"
    printed += " 0.30000000000000004"
    assert display.noise(printed) == [
        ("0.10000002384185791", "0.100000024"),
        ("0.009999990463256836", "0.00999999"),
        ("0.30000000000000004", "0.3"),
    ]


# -- YAML numbers --------------------------------------------------------------------------------


def test_exponent_numbers_in_yaml_are_numbers(tmp_path: Path, options: Any) -> None:
    deck = """\
    deck: Numbers
    cards:
      - id: small-step
        kind: value
        ask: What is the step?
        code: |
          x = 1 - 0.999
        answer_expr: x
        answer: 1e-3
        tolerance: {rtol: 1e-6, atol: 5E-12}
        explain: "It is {{answer}}."
    """
    root = write_project(tmp_path / "project", {"deck.yaml": deck})
    report = pipeline.build(options(root))
    (vc,) = report.decks[0].cards
    card = vc.card
    assert card.declared.value == 1e-3 and card.tolerance.atol == 5e-12  # type: ignore[attr-defined]
    assert vc.card.explain == "It is 0.001."  # type: ignore[attr-defined]


def test_a_quoted_number_is_told_to_lose_its_quotes_without_noise(tmp_path: Path, options: Any) -> None:
    deck = """\
    deck: Numbers
    cards:
      - id: small-step
        kind: value
        ask: What is the step?
        code: |
          x = 1 - 0.999
        answer_expr: x
        answer: "1e-3"
    """
    root = write_project(tmp_path / "project", {"deck.yaml": deck})
    with pytest.raises(Exception) as caught:
        pipeline.build(options(root))
    message = str(caught.value)
    assert "deck.yaml:9" in message and "write 0.001 without quotes" in message, message
    assert "0.0010000000000000002" not in message.split("but execution gives")[-1], message


# -- links between cards -------------------------------------------------------------------------

LINKED_DECKS = {
    "first.yaml": """\
    deck: Links::First
    cards:
      - id: two-backwards
        kind: basic
        front: "What does a second `backward()` do to `.grad`? It adds to what the first one left there."
        back: It adds to it.
      - id: points-on
        kind: basic
        front: Where is the other deck's card?
        back: "See [the zeroing card](#card:zero-first), [](#card:two-backwards) and [](#card:math-title)."
    """,
    "second.yaml": """\
    deck: Links::Second
    cards:
      - id: zero-first
        kind: basic
        front: Why call `zero_grad()`?
        back: Gradients add up.
        explain: "As [before](#card:two-backwards)."
      - id: math-title
        kind: basic
        front: 'What is \\( \\partial L / \\partial w \\) after two calls?'
        back: Their sum.
    """,
}


@pytest.fixture(scope="module")
def linked(tmp_path_factory: pytest.TempPathFactory, pool: Pool) -> pipeline.Report:
    root = write_project(tmp_path_factory.mktemp("links"), LINKED_DECKS)
    report = pipeline.build(pipeline.Options(cards_dir=root / "cards", out_dir=root / "build", pool=pool))
    report.root = root  # type: ignore[attr-defined]
    return report


def test_a_link_to_no_card_is_a_located_error_with_a_guess(tmp_path: Path, options: Any) -> None:
    files = dict(LINKED_DECKS)
    files["second.yaml"] = files["second.yaml"].replace("#card:two-backwards", "#card:two-backward")
    root = write_project(tmp_path / "project", files)
    with pytest.raises(Exception) as caught:
        pipeline.build(options(root))
    message = str(caught.value)
    assert "second.yaml:7" in message and "card 'zero-first' -> explain" in message, message
    assert "link to card 'two-backward'" in message and "did you mean 'two-backwards'" in message
    assert not (root / "build" / "quiz").exists()


def test_a_link_opens_the_card_in_the_quiz(browser: Any, linked: pipeline.Report) -> None:
    quiz = linked.root / "build" / "quiz"  # type: ignore[attr-defined]
    tab = open_tab(
        browser, (quiz / "decks" / "links-first.html").as_uri() + f"#card-{card_key('points-on')}", width=1280
    )
    try:
        page = tab.page
        held = cards_held((quiz / "decks" / "links-first.html").read_text(encoding="utf-8"))[
            card_key("points-on")
        ]
        assert f'href="../decks/links-second.html#card-{card_key("zero-first")}"' in held
        assert f'href="../decks/links-first.html#card-{card_key("two-backwards")}"' in held
        assert "What does a second backward() do to .grad?" in held  # an empty link shows the title
        assert "#card:" not in held
        titled = re.search(
            rf'<a class="card-ref" href="[^"]*#card-{card_key("math-title")}"[^>]*>(.*?)</a>', held, re.S
        )
        assert titled is not None and "<math" in titled.group(1) and "\\partial" not in titled.group(1)
        page.click(f"#card-{card_key('points-on')} button.reveal")
        link = page.locator(f"#card-{card_key('points-on')} .back a.card-ref").first
        assert link.inner_text() == "the zeroing card"
        assert link.get_attribute("title") == "Why call zero_grad()?"
        link.click()
        page.wait_for_selector(f"#card-{card_key('zero-first')}", state="visible")
        assert page.url.endswith(f"links-second.html#card-{card_key('zero-first')}")
        assert tab.errors == []
    finally:
        close_tab(tab)


def test_a_link_names_the_card_in_anki(linked: pipeline.Report, tmp_path: Path) -> None:
    from tests.support.anki import collection, import_all, note_of

    with collection(tmp_path / "anki") as col:
        import_all(col, linked)
        back = col.get_note(note_of(col, "points-on"))["Back"]
        explain = col.get_note(note_of(col, "zero-first"))["Explain"]
    assert "<a" not in back and "#card" not in back, back
    assert "(“What is \\( \\partial L / \\partial w \\) after two calls?”)" not in back  # an empty link...
    assert "“What is \\( \\partial L / \\partial w \\) after two calls?”." in back  # ... is the title
    assert "the zeroing card (“Why call zero_grad()?”)" in back, back
    assert "(“What does a second" in explain and "…”)" in explain, explain
