"""TeX in card text to MathML at build time (latex2mathml), so the quiz shows math with no script and no
network. Anki keeps the TeX: its own MathJax renders `\\( \\)` and `\\[ \\]`.

latex2mathml is lenient (an unknown command becomes a letter, a missing argument an empty box) and
copies `\\text{...}`, `\\href` and `\\style` into its output unescaped, so its tree is checked here and
rebuilt from an allow-list of MathML elements and attributes: card text never adds HTML to a page. Before
it, the TeX itself must pass the allow-list of commands that Anki's MathJax may read (render/math/mathjax.py).
"""

from __future__ import annotations

import html
import re
from functools import cache
from xml.etree.ElementTree import Element, tostring

from quizgen.render.math import mathjax

# MathML Core's elements, and how many children those with a fixed shape need.
_ARITY = {
    "mfrac": 2, "msub": 2, "msup": 2, "mroot": 2, "munder": 2, "mover": 2,
    "msubsup": 3, "munderover": 3,
}  # fmt: skip
_ELEMENTS = {
    *_ARITY, "math", "mrow", "mi", "mn", "mo", "ms", "mtext", "mspace", "msqrt", "mstyle", "mtable",
    "mtr", "mtd", "mpadded", "mphantom", "menclose", "merror", "mmultiscripts", "mprescripts", "none",
}  # fmt: skip
_ATTRIBUTES = {
    "display", "mathvariant", "stretchy", "fence", "form", "separator", "accent", "accentunder",
    "displaystyle", "scriptlevel", "columnalign", "rowalign", "columnspacing", "rowspacing",
    "columnlines", "rowlines", "frame", "width", "height", "depth", "lspace", "rspace", "linethickness",
    "mathcolor", "mathbackground", "mathsize", "movablelimits", "largeop", "symmetric", "minsize",
    "maxsize", "notation", "columnspan", "rowspan", "linebreak",
}  # fmt: skip
_NAMESPACE = "http://www.w3.org/1998/Math/MathML"


class TexError(ValueError):
    """TeX that the quiz cannot show as MathML; the message says why, for the author."""


def _words(name: str) -> str:
    """`MissingSuperScriptOrSubscriptError` -> `missing superscript or subscript`."""
    words = re.findall(r"[A-Z][a-z]*", name.removesuffix("Error"))
    return " ".join(words).lower().replace("super script", "superscript")


def _check_braces(tex: str) -> None:
    depth = 0
    for m in re.finditer(r"\\.|[{}]", tex, re.S):
        if m.group(0) == "{":
            depth += 1
        elif m.group(0) == "}":
            depth -= 1
            if depth < 0:
                raise TexError("a '}' closes no '{'")
    if depth:
        raise TexError(f"{depth} '{{' not closed")


def _clean(element: Element) -> Element:
    """A copy holding only allowed elements and attributes, with text as characters (escaped on output)."""
    tag = element.tag.rpartition("}")[2]
    if tag not in _ELEMENTS:
        raise TexError(f"it makes <{tag}>, which the quiz does not show")
    for name in element.attrib:
        if name not in _ATTRIBUTES and name != "xmlns":
            raise TexError(f"'{name}' is not allowed in math (\\href, \\style and \\class are not)")
    if tag in _ARITY and len(element) != _ARITY[tag]:
        raise TexError(f"a command needs {_ARITY[tag]} arguments and got {len(element)}")
    copy = Element(tag, {k: v for k, v in element.attrib.items() if k in _ATTRIBUTES})
    # latex2mathml writes symbols as character references in the text (`&#x02202;`): decode them here.
    copy.text = html.unescape(element.text) if element.text else None
    copy.tail = html.unescape(element.tail) if element.tail else None
    if tag in ("mi", "mo") and copy.text and copy.text.startswith("\\"):
        raise TexError(f"unknown command {copy.text}")
    copy.extend([_clean(child) for child in element])
    return copy


@cache
def mathml(tex: str, display: bool = False) -> str:
    """`<math>` for a TeX expression (without its delimiters); raises TexError when it is not valid."""
    _check_braces(tex)
    if not tex.strip():
        raise TexError("the math is empty")
    if (why := mathjax.problem(tex)) is not None:
        raise TexError(why)
    from latex2mathml.converter import convert_to_element  # here: a check that renders nothing skips it

    try:
        tree = convert_to_element(tex, display="block" if display else "inline")
    except Exception as exc:  # latex2mathml raises its own exception types, and IndexError on some input
        name = type(exc).__name__
        reason = _words(name) if type(exc).__module__.startswith("latex2mathml") else "cannot be read"
        if name == "NoAvailableTokensError":
            reason = "it ends too early: an argument, superscript or subscript is missing"
        raise TexError(reason) from None
    math = _clean(tree)
    math.set("xmlns", _NAMESPACE)
    return tostring(math, encoding="unicode")


def problem(tex: str, display: bool = False) -> str | None:
    """Why this TeX cannot be shown, or None when it converts."""
    try:
        mathml(tex, display)
    except TexError as exc:
        return str(exc)
    return None
