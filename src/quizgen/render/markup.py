"""Card text to safe HTML: Markdown (raw HTML as text), Pygments-highlighted code, math kept as TeX in a
`<span class="math">` (Anki's MathJax renders it; the quiz swaps in MathML, render_math), local images
left for the renderers to copy (image_sources, rewrite_images)."""

from __future__ import annotations

import html
import re
from bisect import bisect_right
from collections.abc import Callable, Container, Iterator
from functools import cache, lru_cache
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote

from quizgen.render.code.highlighting import tokens_html

if TYPE_CHECKING:  # imported where used: an unchanged check renders nothing and should not load them
    from markdown_it import MarkdownIt
    from markdown_it.rules_inline import StateInline
    from markdown_it.token import Token

LIGHT_STYLE = "default"
DARK_STYLE = "github-dark"
_MATH = re.compile(r"\\\((.+?)\\\)|\\\[(.+?)\\\]", re.S)
_MATH_OPEN = re.compile(r"\\[(\[]")
_MATH_CLOSE = {"\\(": "\\)", "\\[": "\\]"}
_TICKS = re.compile(r"`+")
# What Anki's MathJax does not read as text: the math it was meant to read, and code (`tex2jax_ignore`).
_CHECKED = re.compile(r'<span class="math">.*?</span>|<pre[ >].*?</pre>|<code>.*?</code>', re.S)


def highlight(code: str, language: str = "python") -> str:
    """Code as `<pre class="highlight">` with Pygments token classes (no inline styles)."""
    body = tokens_html(code, language)  # memoised: the same code is highlighted once
    return f'<pre class="highlight"><code>{body}</code></pre>'


def _fence(code: str, info: str, _attrs: str) -> str:
    return highlight(code, (info or "python").split()[0])


_REMOTE = re.compile(r"^(?:[a-z][a-z0-9+.-]*:|//)", re.I)
_MATH_SPAN = re.compile(r'<span class="math">(.*?)</span>', re.S)
_IMG_SRC = re.compile(r'(<img src=")([^"]*)(")')
_HEADING = re.compile(r"(<h([1-6])>)(.*?)(</h\2>)", re.S)
# Where a long name may break: after `::`, `.`, `_`, `/`, and before a capitalised word after 3 small letters.
_BREAK = re.compile(r"(::|[._/](?=\w)|(?<=[a-z]{3})(?=[A-Z][a-z]))")


def is_remote(src: str) -> bool:
    """An image source that is not a file of the project (a URL, `//host/...`, `data:`)."""
    return bool(_REMOTE.match(src))


def _image(self: Any, tokens: Any, idx: int, options: Any, env: Any) -> str:
    """A remote image becomes a link: decks and quizzes never load anything from the network."""
    token = tokens[idx]
    src = str(token.attrGet("src") or "")
    if is_remote(src) and not src.lower().startswith("data:"):
        alt = self.renderInlineAsText(token.children or [], options, env) or src
        return f'<a href="{html.escape(src)}">{html.escape(alt)}</a>'
    return str(self.image(tokens, idx, options, env))


@cache
def _md(join: bool = True) -> MarkdownIt:
    """The renderer's parser; with `join` off, each backslash escape stays a token of its own."""
    from markdown_it import MarkdownIt

    # "commonmark" with html=False: a <script> in card text is shown as text, never parsed as HTML.
    md = MarkdownIt("commonmark", {"html": False, "highlight": _fence})
    if not join:
        md.disable("text_join")
    md.enable("table")
    md.enable("strikethrough")
    # Math is a token of the parser's own, tried before a backslash escape: what is math is decided by
    # the one reading that also decides code spans, fences and escapes (a scanner of our own said "code"
    # where Markdown said `\``, and the math in between reached Anki's MathJax unchecked).
    md.inline.ruler.before("escape", "math", _math_token)
    md.add_render_rule("math", _math_html)
    md.add_render_rule("image", _image)
    return md


def _math_token(state: StateInline, silent: bool) -> bool:
    """`\\( ... \\)` or `\\[ ... \\]` at the parser's position: one `math` token, up to the nearest closer."""
    start = state.pos
    opener = state.src[start : start + 2]
    if opener not in _MATH_CLOSE:
        return False
    end = _closer(state, opener, start + 3)  # (at least one character of TeX, as before)
    if end < 0 or end + 2 > state.posMax:
        return False
    if not silent:
        token = state.push("math", "", 0)
        token.content = state.src[start : end + 2]
        token.markup = opener
    state.pos = end + 2
    return True


def _closer(state: StateInline, opener: str, at: int) -> int:
    """Where the nearest closer of `opener` at or after `at` is (-1: none), in time linear in the text
    over all openers (card text is untrusted): each kind remembers the last closer it found, and where
    it looked for it, in the parser's state of this text."""
    known: dict[str, tuple[int, int]] = vars(state).setdefault("_quizgen_closers", {})
    looked, found = known.get(opener, (len(state.src) + 1, -1))
    if not (looked <= at and (found < 0 or found >= at)):
        found = state.src.find(_MATH_CLOSE[opener], at)
        known[opener] = (at, found)
    return found


def _math_html(self: Any, tokens: Any, idx: int, options: Any, env: Any) -> str:
    return f'<span class="math">{html.escape(tokens[idx].content)}</span>'


@lru_cache(maxsize=4096)  # cards share texts ("What is w.grad?"); the Anki and quiz views each ask
def markdown(text: str, inline: bool = False) -> str:
    """Render Markdown; `\\( \\)` and `\\[ \\]` math survive untouched for MathJax (Anki has it)."""
    if not text:
        return ""
    md = _md()
    rendered = md.renderInline(text) if inline else md.render(text)
    return _HEADING.sub(lambda m: m.group(1) + breakable(m.group(3)) + m.group(4), rendered)


def breakable(fragment: str) -> str:
    """HTML with `<wbr>` where a long name may break (`PyTorch::Zeroing<wbr>Gradients`), in text only:
    a narrow screen then wraps a heading between words, not inside one."""
    parts = re.split(r"(<[^>]*>|&[#\w]+;)", fragment)
    return "".join(p if p.startswith(("<", "&")) else _BREAK.sub(r"\g<0><wbr>", p) for p in parts)


def math_in(text: str) -> list[tuple[str, bool]]:
    """The TeX of every `\\( \\)` and `\\[ \\]` the Markdown parser reads as math (never code), each with
    whether it is display math: exactly what `markdown` puts in math spans."""
    if "\\(" not in text and "\\[" not in text:
        return []
    return [(t.content[2:-2], t.markup == "\\[") for t in _inline(text) if t.type == "math"]


def stray_math(text: str) -> list[str]:
    """The math openers (`\\(`, `\\[`) the rendered text holds outside its math and code: Anki's MathJax
    would read what follows as math that no check read (Markdown makes `\\(` of `\\\\(` or `&#92;(`)."""
    if "\\" not in text and "&" not in text:
        return []
    outside = _CHECKED.sub("", markdown(text))
    return _MATH_OPEN.findall(html.unescape(_TAG.sub("", outside)))


_DELIMITERS = ("\\(", "\\)", "\\[", "\\]")


def unbalanced_math(text: str) -> list[str]:
    """The math delimiters the parser read as escaped brackets, not as math: an opener no closer follows,
    a closer no opener opened (Markdown shows a bare bracket, and the TeX after it as text)."""
    if "\\" not in text:
        return []
    escapes = (t for t in _inline(text, join=False) if t.type == "text_special" and t.info == "escape")
    return [t.markup for t in escapes if t.markup in _DELIMITERS]


_BLOCK_START = re.compile(r"\n {0,3}(?:\d{1,9}[.)]|[-*+#>])")
_BLOCKS = {
    "bullet_list_open": "list",
    "ordered_list_open": "list",
    "heading_open": "heading",
    "blockquote_open": "quote",
}


def wrapped_blocks(text: str) -> list[tuple[int, str]]:
    """(line, "list" | "heading" | "quote") where such a block starts right under a paragraph's line,
    as prose wrapped by hand makes it (a line "1. What is ..." under "Both gradients are"), 0-based."""
    if not _BLOCK_START.search(text):
        return []
    tokens = _md().parse(text)
    # (the hidden paragraphs of a tight list item may be followed by a nested list: that one is meant)
    ends = {t.map[1] for t in tokens if t.type == "paragraph_open" and not t.hidden and t.map}
    return [(t.map[0], _BLOCKS[t.type]) for t in tokens if t.type in _BLOCKS and t.map and t.map[0] in ends]


def math_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of every `\\( \\)` and `\\[ \\]` in the text, code or not, in order."""
    return [m.span() for m in _math(text)]


def code_spans(text: str) -> list[tuple[int, int, int, int]]:
    """(opener start, opener end, closer start, closer end) of every code span: a run of backticks up to
    the next run of as many (fenced blocks aside, which the caller knows)."""
    runs = list(_TICKS.finditer(text))
    heads = [(m.start(), m.end(), m.group(0)) for m in runs]
    ends = {m.end(): m.start() for m in runs}
    starts = {m.start(): m.end() for m in runs}
    return [(a, starts[a], ends[b], b) for a, b in _pairs(heads)]


def image_sources(text: str) -> list[str]:
    """The `src` of every Markdown image in the text (as Markdown normalised it), in order."""
    found: list[str] = []
    if "![" not in text:
        return found
    return [str(t.attrGet("src") or "") for t in _inline(text) if t.type == "image"]


CARD_LINK = "#card:"  # `[the other card](#card:some-id)`: a link to another card of the project
_CARD_ANCHOR = re.compile(r'<a href="#card:([^"]*)"(?: title="[^"]*")?>(.*?)</a>', re.S)
_TAG = re.compile(r"<[^>]*>")


def card_links(text: str) -> list[str]:
    """The card ids the text links to (`[text](#card:id)`), in order, each once."""
    found: list[str] = []
    if CARD_LINK not in text:
        return found
    for token in _inline(text):
        href = str(token.attrGet("href") or "") if token.type == "link_open" else ""
        if href.startswith(CARD_LINK) and unquote(href[len(CARD_LINK) :]) not in found:
            found.append(unquote(href[len(CARD_LINK) :]))
    return found


def _inline(text: str, join: bool = True) -> Iterator[Token]:
    """Every inline token of the text as the renderer reads it (images' alt text included)."""
    stack = [t for block in _md(join).parse(text) for t in block.children or []][::-1]
    while stack:
        token = stack.pop()
        yield token
        stack += (token.children or [])[::-1]


def rewrite_card_links(fragment: str, new: Callable[[str, str], str]) -> str:
    """Rendered HTML with each link to a card replaced by `new(card id, the link's inner HTML)`."""
    if 'href="#card:' not in fragment:
        return fragment
    return _CARD_ANCHOR.sub(lambda m: new(unquote(html.unescape(m.group(1))), m.group(2)), fragment)


_CODE_ID = re.compile(r"<code>([a-z0-9]+(?:-[a-z0-9]+)*)</code>")  # a code span holding a slug


def link_card_ids(fragment: str, ids: Container[str]) -> str:
    """Rendered HTML whose code spans that are exactly a card's id (`zero-grad-first` in prose) are links
    to that card, as `[](#card:zero-grad-first)` is: shown by the card's title, never by its id."""
    if "<code>" not in fragment:
        return fragment
    return _CODE_ID.sub(lambda m: f'<a href="#card:{m[1]}"></a>' if m[1] in ids else m[0], fragment)


def plain(fragment: str) -> str:
    """Rendered HTML as the text it shows, on one line."""
    return " ".join(html.unescape(_TAG.sub("", fragment)).split())


def image_path(src: str) -> str:
    """The file name an image's (percent-encoded) src stands for."""
    return unquote(html.unescape(src))


def rewrite_images(fragment: str, new_src: Callable[[str], str | None]) -> str:
    """Rendered HTML with each `<img src>` replaced by `new_src(src)` (kept when it gives None)."""

    def swap(m: re.Match[str]) -> str:
        src = new_src(m.group(2))
        return m.group(0) if src is None else m.group(1) + html.escape(src) + m.group(3)

    return _IMG_SRC.sub(swap, fragment)


def render_math(fragment: str) -> str:
    """HTML with every math span's TeX replaced by MathML (the TeX was checked when the cards loaded)."""
    from quizgen.render.math.mathml import TexError, mathml

    def convert(m: re.Match[str]) -> str:
        tex = html.unescape(m.group(1))
        display = tex.startswith("\\[")
        try:
            return f'<span class="math">{mathml(tex[2:-2], display)}</span>'
        except TexError:  # shown as written, as it was before the check (a template may add math)
            return m.group(0)

    return _MATH_SPAN.sub(convert, fragment)


def _math(text: str) -> Iterator[re.Match[str]]:
    """What `_MATH.finditer(text)` finds, each opener looking for its closer once: an opener with no
    closer after it means no later opener of its kind has one either."""
    pos, unclosed = 0, set()
    while (opener := _MATH_OPEN.search(text, pos)) is not None:
        start, kind = opener.start(), opener.group(0)
        if kind not in unclosed and text.find(_MATH_CLOSE[kind], start + 3) >= 0:
            found = _MATH.match(text, start)  # the nearest closer: the `find` above was as far
            assert found is not None
            yield found
            pos = found.end()
        else:
            unclosed.add(kind)
            pos = start + 1


def _pairs(heads: list[tuple[int, int, str]]) -> list[tuple[int, int]]:
    """(start, end) of each opener and the next head of the same text after it, left to right."""
    later: dict[str, list[int]] = {}
    for i, (_, _, key) in enumerate(heads):
        later.setdefault(key, []).append(i)
    spans, i = [], 0
    while i < len(heads):
        same = later[heads[i][2]]
        k = bisect_right(same, i)
        if k < len(same):
            spans.append((heads[i][0], heads[same[k]][1]))
            i = same[k] + 1
        else:
            i += 1
    return spans


@cache
def pygments_css() -> str:
    """Highlighting palettes: light by default, dark under `.nightMode` (Anki) and `.dark` (quiz)."""
    from pygments.formatters import HtmlFormatter

    light = HtmlFormatter(style=LIGHT_STYLE).get_style_defs(".highlight")
    dark = HtmlFormatter(style=DARK_STYLE).get_style_defs(
        [".nightMode .highlight", ".night_mode .highlight", ".dark .highlight"]
    )
    return f"{light}\n{dark}\n"
