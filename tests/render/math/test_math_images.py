"""Math and images in card text, offline: TeX becomes MathML in the quiz and stays TeX for Anki's MathJax;
images are copied into the quiz and the .apkg under content-hashed names; a bad formula or a missing
image is a located error, a remote image a warning."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from quizgen import pipeline
from quizgen.errors import CardErrors
from quizgen.render import markup
from quizgen.render.math.mathml import mathml, problem
from quizgen.render.view import card_key
from tests.support import math_images
from tests.support.math_images import GRADIENT, MATH_DECK, image_name, math_project, png
from tests.support.quiz import as_shown, axe_source, axe_violations, close_tab, open_tab

math_build = math_images.math_build  # the fixture: the math deck built once for this module

# -- TeX to MathML ---------------------------------------------------------------------------------


def test_tex_becomes_mathml_and_nothing_else() -> None:
    out = mathml(GRADIENT)
    assert out.startswith('<math display="inline" xmlns="http://www.w3.org/1998/Math/MathML"><mrow><mfrac>')
    assert "<mo>∂</mo><msub><mi>w</mi><mn>1</mn></msub>" in out and "<mo>*</mo>" in out
    assert mathml("x", display=True).startswith('<math display="block"')
    # latex2mathml copies \text{} into its output as it is: here it is text, escaped.
    assert "<mtext>&lt;script&gt;alert(1)&lt;/script&gt;</mtext>" in mathml(
        r"\text{<script>alert(1)</script>}"
    )


ACTIVE = "in Anki it links, styles or loads; write a link in Markdown, outside the math"
OWN_MATH = "it opens math of its own, which Anki's MathJax reads (in \\text{} too) and quizgen cannot check"


@pytest.mark.parametrize(
    ("tex", "why"),
    [
        (r"\frac{a", "1 '{' not closed"),
        (r"a}", "a '}' closes no '{'"),
        (r"\frac{a}", "a command needs 2 arguments and got 1"),
        (r"x^", "missing superscript or subscript"),
        (r"\frac", "it ends too early: an argument, superscript or subscript is missing"),
        (
            r"\notacommand x",
            r"unknown command \notacommand (math takes the plain commands listed in docs/cards.md)",
        ),
        (r"\begin{pmatrix} a", "missing end"),
        (r"\begin{equation} a \end{equation}", r"\begin{equation} is not an environment quizgen shows"),
        (r"\href{javascript:alert(1)}{x}", rf"\href is not allowed in math: {ACTIVE}"),
        (r"\style{color:red}{x}", rf"\style is not allowed in math: {ACTIVE}"),
        (r"\text{\htmlId{a}{x}}", rf"\htmlId is not allowed in math: {ACTIVE}"),
        (r"\text{$\href{javascript:alert(1)}{x}$}", rf"'$' in math: {OWN_MATH}; write \$ for a dollar sign"),
        (r"\textsf{\(\class{a}{x}\)}", rf"'\(' in math: {OWN_MATH}"),
        (r"\textrm{a \unicode{x}}", rf"\unicode is not allowed in math: {ACTIVE}"),
        (r"\require{html}", rf"\require is not allowed in math: {ACTIVE}"),
        (r"\text{x}\$5 \\", None),
        ("x \\\\\\", "it ends in a lone '\\'"),
        ("  ", "the math is empty"),
    ],
)
def test_tex_the_quiz_cannot_show_is_named(tex: str, why: str | None) -> None:
    assert problem(tex) == why


def test_markdown_leaves_tex_whole_and_code_alone() -> None:
    text = r"Loss \( \frac{a_1}{b_2} * c_3 \) and \[ x_1 * y_2 \], not `\(code_1\)` *emphasis*"
    out = markup.markdown(text)
    assert r'<span class="math">\( \frac{a_1}{b_2} * c_3 \)</span>' in out
    assert r'<span class="math">\[ x_1 * y_2 \]</span>' in out
    assert r"<code>\(code_1\)</code>" in out and "<em>emphasis</em>" in out
    assert markup.math_in(text) == [(r" \frac{a_1}{b_2} * c_3 ", False), (" x_1 * y_2 ", True)]
    quiz = markup.render_math(out)
    assert "\\(" not in quiz.replace(r"<code>\(code_1\)</code>", "")
    assert quiz.count("<math ") == 2 and '<math display="block"' in quiz


def test_image_sources_and_headings() -> None:
    text = "![a](img/a%20b.png) `![no](code.png)` ![r](https://example.com/r.png) ![c](<c d.png>)"
    assert markup.image_sources(text) == ["img/a%20b.png", "https://example.com/r.png", "c%20d.png"]
    assert markup.image_path("c%20d.png") == "c d.png"
    assert markup.markdown("# PyTorch::ZeroingGradients and `optimizer.zero_grad()`") == (
        "<h1>PyTorch::<wbr>Zeroing<wbr>Gradients and <code>optimizer.<wbr>zero_<wbr>grad()</code></h1>\n"
    )


# -- the build -------------------------------------------------------------------------------------


def test_quiz_has_mathml_and_the_image_copied(math_build: pipeline.Report) -> None:
    quiz = math_build.root / "build" / "quiz"  # type: ignore[attr-defined]
    page = as_shown((quiz / "decks" / "math-images.html").read_text())
    name = image_name()
    assert (quiz / "media" / name).read_bytes() == png(12, 8)
    assert sorted(p.name for p in (quiz / "media").iterdir()) == [name]
    assert page.count(f'<img src="../media/{name}"') == 3  # description, ask, front
    assert f'<img src="media/{name}" alt="the graph" />' in (quiz / "index.html").read_text()
    assert "<mfrac><mrow><mo>∂</mo><mi>L</mi></mrow>" in page
    assert '<math display="block"' in page
    assert "\\frac" not in page and "\\(" not in page.replace(r"<code>\(x_1\)</code>", "")


def test_bad_math_and_images_are_located(tmp_path: Path, options: Any) -> None:
    deck = MATH_DECK.replace(r"\( a_1 * b_2 \)", r"\( a_1^ \)").replace(GRADIENT, r"\frac{\partial L}")
    far = "https://example.com/far.png"
    deck = deck.replace("![the graph again](img/graph.png)", f"![gone](img/gone.png) ![far]({far})")
    root = math_project(tmp_path, deck)
    with pytest.raises(CardErrors) as caught:
        pipeline.check(options(root))
    path = root / "cards" / "math.yaml"
    assert [str(p) for p in caught.value.problems] == [
        rf"{path}:3:1 -> description: math \( a_1^ \) cannot be shown: "
        "it ends too early: an argument, superscript or subscript is missing",
        rf"{path}:9:10: card 'grad-formula' -> ask: math \( \frac{{\partial L}} \) cannot be shown: "
        "a command needs 2 arguments and got 1",
        f"{path}:18:12: card 'graph-basic' -> front: image not found: {path.parent / 'img' / 'gone.png'} "
        "(image paths are relative to the card file)",
    ]
    assert [str(w) for w in caught.value.warnings] == [
        f"{path}:18:12: card 'graph-basic' -> front: image {far} is not offline: "
        "it is shown as a link; save it beside the card file"
    ]


def test_math_and_images_show_in_chromium_with_no_request(browser: Any, math_build: pipeline.Report) -> None:
    page_file = math_build.root / "build" / "quiz" / "decks" / "math-images.html"  # type: ignore[attr-defined]
    tab = open_tab(browser, page_file.as_uri())
    try:
        page = tab.page
        page.wait_for_function("() => [...document.images].every(i => i.complete)")
        shown = page.evaluate(
            """(card) => ({
              math: [...document.querySelectorAll(card + ' .prompt .math > math')].map(m => [
                m.namespaceURI, m.getAttribute('display'), m.getBoundingClientRect().width > 10]),
              fraction: (() => {  // laid out as a fraction: taller than a letter
                const f = document.querySelector(card + ' mfrac');
                const letter = f.querySelector('mi').getBoundingClientRect().height;
                return f.getBoundingClientRect().height / letter;
              })(),
              text: document.querySelector(card + ' .prompt').innerText,
              images: [...document.querySelectorAll('header img, ' + card + ' img')]
                .map(i => [i.getAttribute('src'), i.naturalWidth, i.naturalHeight]),
            })""",
            f"#card-{card_key('grad-formula')}",
        )
        ns = "http://www.w3.org/1998/Math/MathML"
        assert shown["math"] == [[ns, "inline", True], [ns, "inline", True]]
        assert shown["fraction"] > 1.5
        assert "\\frac" not in shown["text"] and "∂" in shown["text"]
        assert shown["images"] == [[f"../media/{image_name()}", 12, 8]] * 2  # the description's, the card's
        assert tab.outside() == [] and tab.errors == []
        assert axe_violations(page, axe_source()) == []
        image = (page_file.parent.parent / "media" / image_name()).as_uri()
        assert [u for u in tab.requests if "media/" in u] == [image]
    finally:
        close_tab(tab)


def test_an_image_must_be_an_image_file_inside_the_project(tmp_path: Path) -> None:
    from quizgen.cards.text import text_problems
    from quizgen.errors import Location

    root = math_project(tmp_path / "project")
    card_file = str(root / "cards" / "math.yaml")
    (tmp_path / "secret.png").write_bytes(png(1, 1))
    where = Location(card_file, 5, 3, "c", "ask")
    text = "![a](../../secret.png) ![b](/etc/passwd) ![c](math.yaml) ![d](img/graph.png) "
    text += "![e](data:image/png;base64,AA==)"
    errors, warnings = text_problems(text, card_file, root, where)
    assert [p.message for p in errors] == [
        f"image '../../secret.png' is outside the project folder {root}",
        "image '/etc/passwd': write its path relative to the card file",
        "image 'math.yaml' is not an image file (.png, .jpg, .jpeg, .gif, .svg, .webp)",
    ]
    assert warnings == [] and all(p.location == where for p in errors)
