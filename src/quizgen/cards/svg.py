"""Whether a card's SVG image could run script or load anything when opened as a page.

An image is published as it is beside the quiz (`media/`) and in the Anki package. Shown by `<img>`, an
SVG runs nothing, but the file is also a page of the quiz's site: a link in card text (or any visitor)
that opens it runs its script with the site's rights (the learner's saved progress, the host's cookies).
So an SVG is refused unless it is plain drawing: no script or event handler, no HTML inside, no link or
reference leaving the file (a `#fragment` or an embedded raster image only), no DTD (entities).
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

from quizgen import files
from quizgen.constants import MAX_IMAGE_BYTES

# Elements that run or embed a document of their own; HTML's namespace brings <script> and <iframe>.
_ACTIVE = frozenset({"script", "foreignobject", "iframe", "embed", "object", "handler", "listener"})
_HTML = "{http://www.w3.org/1999/xhtml}"
_ANIMATION = frozenset({"set", "animate", "animatemotion", "animatetransform", "animatecolor"})
_LOCAL_REFERENCE = re.compile(r"#|data:image/(png|jpeg|gif|webp)[;,]", re.I)
_CSS_LOAD = re.compile(r"@import|url\(\s*['\"]?\s*(?!#)", re.I)  # a stylesheet fetching something


def problem(path: Path) -> str | None:
    """Why the SVG at `path` is not plain drawing (None when it is)."""
    try:
        data = files.read_bytes(path, MAX_IMAGE_BYTES, follow=True)
    except OSError as exc:
        return f"cannot read it: {exc.strerror or exc}"
    if re.search(rb"<!(DOCTYPE|ENTITY)|<\?xml-stylesheet", data, re.I):
        return "it has a DTD or a stylesheet instruction"
    try:
        root = ET.fromstring(data)
    except ET.ParseError as exc:
        return f"it is not well-formed XML ({exc})"
    if str(root.tag).rpartition("}")[2] != "svg":
        return "its root element is not <svg>"
    for element in root.iter():
        found = _element_problem(element)
        if found:
            return found
    return None


def _element_problem(element: ET.Element) -> str | None:
    tag = str(element.tag)
    name = tag.rpartition("}")[2].lower()
    if name in _ACTIVE or tag.startswith(_HTML):
        return f"it has a <{name}> element"
    if name == "style" and _CSS_LOAD.search(element.text or ""):
        return "its stylesheet loads something (@import or url(...))"
    for key, value in element.attrib.items():
        attribute = key.rpartition("}")[2].lower()
        if attribute.startswith("on"):
            return f"it has an event handler ({attribute})"
        if attribute == "href" and not _LOCAL_REFERENCE.match(value.strip()):
            return f"it refers outside itself (href {value[:80]!r})"
        if attribute == "style" and _CSS_LOAD.search(value):
            return "a style attribute loads something (url(...))"
        if name in _ANIMATION and attribute == "attributename" and re.match(r"(.*:)?(href|on)", value, re.I):
            return f"an animation sets {value}"
    return None
