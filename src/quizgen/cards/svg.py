"""Whether a card's SVG image could run script or load anything when opened as a page.

An image is published as it is beside the quiz (`media/`) and in the Anki package. Shown by `<img>`, an
SVG runs nothing, but the file is also a page of the quiz's site: a link in card text (or any visitor)
that opens it runs its script with the site's rights (the learner's saved progress, the host's cookies).
So an SVG is refused unless it is plain drawing: no script or event handler, no HTML inside, no link or
reference leaving the file (a `#fragment` or an embedded raster image only), no DTD (entities), no
processing instruction (`<?xml-stylesheet?>` runs XSLT, script and all), no CSS that could load anything.
It is read as the browser reads it: UTF-8 only, since a file in UTF-16 is not the text a UTF-8 check saw.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

from quizgen.constants import MAX_IMAGE_BYTES
from quizgen.project import files

# Elements that run or embed a document of their own; HTML's namespace brings <script> and <iframe>.
_ACTIVE = frozenset({"script", "foreignobject", "iframe", "embed", "object", "handler", "listener"})
_HTML = "{http://www.w3.org/1999/xhtml}"
_ANIMATION = frozenset({"set", "animate", "animatemotion", "animatetransform", "animatecolor"})
_LOCAL_REFERENCE = re.compile(r"#|data:image/(png|jpeg|gif|webp)[;,]", re.I)
_DECLARATION = re.compile(r"""<\?xml\s[^>]*?encoding\s*=\s*["']([^"']*)["'][^>]*\?>|<\?xml\s[^>]*\?>()""")
# CSS functions a drawing uses: colours, lengths, transforms, and url(#...) to the file's own parts.
_CSS_FUNCTIONS = frozenset({
    "url", "rgb", "rgba", "hsl", "hsla", "hwb", "lab", "lch", "oklab", "oklch", "calc", "min", "max",
    "clamp", "var", "translate", "translatex", "translatey", "scale", "scalex", "scaley", "rotate",
    "skew", "skewx", "skewy", "matrix",
})  # fmt: skip
_AT_RULE = re.compile(r"@([-\w]*)")
_FUNCTION = re.compile(r"([-\w]+)\(")  # a CSS function is a name and "(" with nothing between
# Attributes that hold names, text or path data, never CSS.
_NOT_CSS = frozenset({"id", "class", "d", "points", "viewbox", "title", "lang", "version", "baseprofile"})


def problem(path: Path) -> str | None:
    """Why the SVG at `path` is not plain drawing (None when it is)."""
    try:
        data = files.read_bytes(path, MAX_IMAGE_BYTES, follow=True)
    except OSError as exc:
        return f"cannot read it: {exc.strerror or exc}"
    text, why = _text(data)
    if text is None:
        return why
    if re.search(r"<!(DOCTYPE|ENTITY)", text, re.I):
        return "it has a DTD"
    declaration = _DECLARATION.match(text)
    if declaration and (declaration.group(1) or "utf-8").lower() not in ("utf-8", "utf8"):
        return f"it declares the encoding {declaration.group(1)} (save it as UTF-8)"
    at = text.find("<?", declaration.end() if declaration else 0)
    if at >= 0:  # an `<?xml-stylesheet?>` makes the file a page of XSLT's making, script and all
        line = text.count("\n", 0, at) + 1
        name = re.match(r"<\?[^\s?>]{0,40}", text[at:])
        shown = name.group(0) if name else "<?"
        only = "only the XML declaration may open with <?"
        return f"it has a processing instruction ({shown}) at line {line}: {only}"
    try:
        root = ET.fromstring(text)
    except ET.ParseError as exc:
        return f"it is not well-formed XML ({exc})"
    if str(root.tag).rpartition("}")[2] != "svg":
        return "its root element is not <svg>"
    for element in root.iter():
        found = _element_problem(element)
        if found:
            return found
    return None


def _text(data: bytes) -> tuple[str | None, str]:
    """The file as text, read as a browser reads it, or None and why it is refused: only UTF-8 (a BOM or a
    declaration naming UTF-16 makes the browser read other characters than a UTF-8 check does)."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff", b"\x00\x00\xfe\xff")):
        return None, "it is not UTF-8 (it starts with a UTF-16 or UTF-32 byte order mark): save it as UTF-8"
    try:
        text = data.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as exc:
        return None, f"it is not UTF-8 (byte {exc.start}): save it as UTF-8"
    if "\x00" in text:
        return None, "it is not UTF-8 text (it holds NUL bytes, as UTF-16 does): save it as UTF-8"
    return text, ""


def _element_problem(element: ET.Element) -> str | None:
    tag = str(element.tag)
    name = tag.rpartition("}")[2].lower()
    if name in _ACTIVE or tag.startswith(_HTML):
        return f"it has a <{name}> element"
    if name == "style" and (why := _css_problem(element.text or "")) is not None:
        return f"its stylesheet {why}"
    for key, value in element.attrib.items():
        attribute = key.rpartition("}")[2].lower()
        if attribute.startswith("on"):
            return f"it has an event handler ({attribute})"
        if attribute == "href":
            if not _LOCAL_REFERENCE.match(value.strip()):
                return f"it refers outside itself (href {value[:80]!r})"
        elif attribute not in _NOT_CSS and (why := _css_problem(value)) is not None:  # (fill="url(...)")
            return f"its {attribute} attribute {why}"
        if name in _ANIMATION and attribute == "attributename" and re.match(r"(.*:)?(href|on)", value, re.I):
            return f"an animation sets {value}"
    return None


def _css_problem(css: str) -> str | None:
    """Why this CSS (a stylesheet, a style or presentation attribute) could load something, or None.

    Checked on the text as written, so nothing may hide a word from the check: no escapes (`@\\69mport`
    is `@import` to the browser), no at-rule that loads (only @media, @supports, @keyframes), and no
    function but the drawing ones, `url()` only to a `#fragment` of the file itself."""
    if "\\" in css:
        return "has a CSS escape ('\\'): write the characters themselves"
    for rule in _AT_RULE.findall(css):
        if rule.lower() not in ("media", "supports", "keyframes"):
            return f"has the at-rule @{rule} (only @media, @supports and @keyframes are allowed)"
    for m in _FUNCTION.finditer(css):
        function = m.group(1).lower()
        if function == "url" and not css[m.end() :].lstrip(" \t\n'\"").startswith("#"):
            return "loads something (url() to other than a #fragment of the file)"
        if function not in _CSS_FUNCTIONS:
            return f"has a CSS function {function}() (only drawing ones and url(#...) are allowed)"
    return None
