"""Math and images in the .apkg, imported into a real Anki collection: the TeX is in the note for Anki's
MathJax, whole and outside `tex2jax_ignore`, and the image is in the collection's media."""

from __future__ import annotations

import html
import re
from pathlib import Path

from quizgen import pipeline
from quizgen.render.view import card_key
from tests.support import math_images
from tests.support.anki import collection, import_all, note_of
from tests.support.math_images import GRADIENT, image_name, png

math_build = math_images.math_build  # the fixture: the math deck built once for this module


def test_the_note_keeps_the_tex_for_mathjax_and_the_image_is_media(
    math_build: pipeline.Report,
    tmp_path: Path,
) -> None:
    name = image_name()
    with collection(tmp_path / "anki") as col:
        import_all(col, math_build)
        note = col.get_note(note_of(col, "grad-formula"))
        question = note["Question"]
        assert f"\\( {GRADIENT} \\)" in html.unescape(question)  # backslashes, _ and * as written
        assert question.startswith('<p>With <span class="math">\\( \\frac'), question  # in no ignored element
        assert "<em>" not in question
        assert f'<img src="{name}" alt="the graph" />' in question  # the media file's own name
        assert "\\[ \\sum_{i=1}^n x_i^2 \\]" in html.unescape(note["Explain"])
        assert '<code class="tex2jax_ignore">\\(x_1\\)</code>' in note["Explain"]  # MathJax skips code
        assert (Path(col.media.dir()) / name).read_bytes() == png(12, 8)
        assert col.media.check().missing == []  # every image a note names is in the media folder
        card = col.get_card(col.find_cards(f"Id:{card_key('grad-formula')}")[0])
        rendered = card.question()
        assert rendered.index("qg-prompt") < rendered.index("qg-code"), "question first, then the code"
        code_block = re.search(r'<div class="qg-code tex2jax_ignore">', rendered)
        assert code_block is not None
