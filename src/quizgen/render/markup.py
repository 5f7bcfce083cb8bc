"""Card text to safe HTML: Markdown (raw HTML as text), Pygments-highlighted code, math left for MathJax."""

from __future__ import annotations

import html
import re
from functools import cache
from typing import Any

from markdown_it import MarkdownIt
from pygments import highlight as _pygments_highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import PythonLexer, get_lexer_by_name
from pygments.util import ClassNotFound

LIGHT_STYLE = "default"
DARK_STYLE = "github-dark"
_MATH = re.compile(r"\\\((.+?)\\\)|\\\[(.+?)\\\]", re.S)
_CODE_SPAN = re.compile(r"(`+)(.+?)\1", re.S)
_FENCE = re.compile(r"^(\s*)(```|~~~).*?^\1\2", re.S | re.M)


def highlight(code: str, language: str = "python") -> str:
    """Code as `<pre class="highlight">` with Pygments token classes (no inline styles)."""
    try:
        lexer = PythonLexer() if language in ("", "python", "py") else get_lexer_by_name(language)
    except ClassNotFound:
        lexer = get_lexer_by_name("text")
    body = _pygments_highlight(code, lexer, HtmlFormatter(nowrap=True))
    return f'<pre class="highlight"><code>{body}</code></pre>'


def _fence(code: str, info: str, _attrs: str) -> str:
    return highlight(code, (info or "python").split()[0])


_REMOTE = re.compile(r"^(?:[a-z][a-z0-9+.-]*:|//)", re.I)


def _image(self: Any, tokens: Any, idx: int, options: Any, env: Any) -> str:
    """A remote image becomes a link: decks and quizzes never load anything from the network."""
    token = tokens[idx]
    src = str(token.attrGet("src") or "")
    if _REMOTE.match(src) and not src.lower().startswith("data:"):
        alt = self.renderInlineAsText(token.children or [], options, env) or src
        return f'<a href="{html.escape(src)}">{html.escape(alt)}</a>'
    return str(self.image(tokens, idx, options, env))


@cache
def _md() -> MarkdownIt:
    # "commonmark" with html=False: a <script> in card text is shown as text, never parsed as HTML.
    md = MarkdownIt("commonmark", {"html": False, "highlight": _fence})
    md.enable("table")
    md.enable("strikethrough")
    md.add_render_rule("image", _image)
    return md


def markdown(text: str, inline: bool = False) -> str:
    """Render Markdown; `\\( \\)` and `\\[ \\]` math survive untouched for MathJax (Anki has it)."""
    if not text:
        return ""
    stash: list[str] = []

    def keep(match: re.Match[str]) -> str:
        stash.append(match.group(0))
        return f"\ue000{len(stash) - 1}\ue001"

    protected = _protect_math(text, keep)
    md = _md()
    rendered = md.renderInline(protected) if inline else md.render(protected)
    return re.sub(
        "\ue000(\\d+)\ue001",
        lambda m: f'<span class="math">{html.escape(stash[int(m.group(1))])}</span>',
        rendered,
    )


def _protect_math(text: str, keep: object) -> str:
    """Replace math outside code with placeholders, leaving code spans and fences alone."""
    out = []
    pos = 0
    code = sorted(
        [(m.start(), m.end()) for m in _FENCE.finditer(text)]
        + [(m.start(), m.end()) for m in _CODE_SPAN.finditer(text)]
    )
    for m in _MATH.finditer(text):
        if any(a <= m.start() < b for a, b in code):
            continue
        out.append(text[pos : m.start()])
        out.append(keep(m))  # type: ignore[operator]
        pos = m.end()
    out.append(text[pos:])
    return "".join(out)


@cache
def pygments_css() -> str:
    """Highlighting palettes: light by default, dark under `.nightMode` (Anki) and `.dark` (quiz)."""
    light = HtmlFormatter(style=LIGHT_STYLE).get_style_defs(".highlight")
    dark = HtmlFormatter(style=DARK_STYLE).get_style_defs(
        [".nightMode .highlight", ".night_mode .highlight", ".dark .highlight"]
    )
    return f"{light}\n{dark}\n"
