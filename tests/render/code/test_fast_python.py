"""The fast highlighter (render/code/fast_python.py) gives Pygments' HTML byte for byte, or None."""

from __future__ import annotations

import pygments
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from quizgen.render.code import fast_python, lexers
from tests.support.paths import REPO


def _pygments(code: str) -> str:
    return pygments.highlight(code, lexers.python_lexer(), lexers.formatter())


def _strings(value: object) -> list[str]:
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return [value] if isinstance(value, str) else []


def _is_code(text: str) -> bool:
    """A snippet that names torch, not prose that does (explanations are not what the fast path is for)."""
    try:
        compile(text, "<card>", "exec")
    except SyntaxError:
        return False
    return "torch" in text and "\n" in text


def test_every_string_of_the_shipped_deck_highlights_as_pygments_does() -> None:
    texts = [
        s
        for path in sorted((REPO / "cards").glob("*.yaml"))
        for s in _strings(yaml.safe_load(path.read_text()))
    ]
    fast = {text: fast_python.tokens_html(text) for text in texts}
    assert {text: html for text, html in fast.items() if html is not None and html != _pygments(text)} == {}
    code = [text for text in texts if _is_code(text)]
    assert sum(fast[text] is not None for text in code) > 0.6 * len(code)  # the fast path is the usual one


def test_everyday_code_takes_the_fast_path() -> None:
    code = (
        "w = torch.tensor([1.0, -2e-3], requires_grad=True)  # a leaf\n"
        "for _ in range(3):\n    (w * w).sum().backward()\n"
        "print(w.grad, x . sum, self.n, 0x1F, .5)\n"
    )
    assert fast_python.tokens_html(code) == _pygments(code)


def test_context_is_left_to_pygments() -> None:
    for code in [
        "def f(x):\n    return x",
        "import torch",
        "@torch.no_grad()\ndef f(): pass",
        "match x:\n    case 1: pass",
        'b"x"',
        '"a\\n"',
        '"""doc"""',
        "x = 1j",
        "#!/usr/bin/env python\nx = 1",
        "s = 'a{b}'",
        "é = 1",
        "x\t= 1",
        "f(",
        "x = 1 $ 2",
        "'%d' % 3",
    ]:
        assert fast_python.tokens_html(code) is None or fast_python.tokens_html(code) == _pygments(code), code
    assert fast_python.tokens_html("import torch") is None


_TOKENS = [
    "x",
    "w",
    "torch",
    "grad",
    "self",
    "cls",
    "print",
    "sum",
    "float",
    "True",
    "None",
    "not",
    "in",
    "is",
    "and",
    "lambda",
    "for",
    "if",
    "else",
    "yield",
    "await",
    "_",
    "__init__",
    "__class__",
    "ValueError",
    "type",
    "match",
    "case",
    "def",
    "class",
    "import",
    "from",
    "as",
    "with",
    "1",
    "0",
    "1.5",
    ".5",
    "1.",
    "1e-3",
    "1_000",
    "0x1F",
    "0o7",
    "0b1",
    "1j",
    "2e5j",
    "'s'",
    '"d"',
    "'it''s'",
    '"{x}"',
    "'%s'",
    "''",
    "=",
    "==",
    "!=",
    "<=",
    ">>",
    ":=",
    "**",
    "*",
    "+=",
    "->",
    "-",
    "~",
    ".",
    "...",
    ",",
    ":",
    ";",
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    "%",
    "|",
    "&",
    "^",
    "<",
    ">",
    "/",
    "//",
    "# note",
    "#!",
    "@",
    "\\",
    "\t",
    "é",
]
_GAPS = ["", " ", "  ", "\n", "\n    ", "\n\n"]


@settings(max_examples=1500, derandomize=True, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(_TOKENS), st.sampled_from(_GAPS)), max_size=30))
def test_token_soup_highlights_as_pygments_does_or_falls_back(parts: list[tuple[str, str]]) -> None:
    code = "".join(token + gap for token, gap in parts)
    fast = fast_python.tokens_html(code)
    assert fast is None or fast == _pygments(code)
