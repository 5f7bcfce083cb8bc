"""`build/qti/<deck>.zip`: the cards an LMS can grade itself (render/lms/items.py) as a QTI 2.1 content
package, one assessmentItem per card (its explanation a modalFeedback shown after any answer, its math
MathML; a wrong choice's misconception a modalFeedback shown when it is picked), the cards' images in
media/, and a manifest listing each item with the images it shows (quizgen.toml's [export] qti), for the
LMSs that import QTI 2.1 (Blackboard, Canvas's New Quizzes, ...). Same bytes for the same cards: entries
sorted and dated 1980 (render/zipped.py)."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from html import escape
from html.parser import HTMLParser
from pathlib import Path

from quizgen.render import zipped
from quizgen.render.base import Project, Rendered
from quizgen.render.lms import items
from quizgen.render.lms.question import Question
from quizgen.render.markup import render_math
from quizgen.render.stage import Stage

QTI = "http://www.imsglobal.org/xsd/imsqti_v2p1"
CP = "http://www.imsglobal.org/xsd/imscp_v1p1"
XSI = "http://www.w3.org/2001/XMLSchema-instance"
MATHML = "http://www.w3.org/1998/Math/MathML"  # QTI 2.1 items hold math as MathML in its own namespace
SCHEMA = "http://www.imsglobal.org/xsd/qti/qtiv2p1/imsqti_v2p1.xsd"
EXPLAIN = "EXPLAIN"  # the modalFeedback showing the card's explanation, whatever the answer
CHOSEN = "CHOSEN"  # the choice picked: a wrong one's modalFeedback names its misconception
MEDIA = "media"  # the package's folder of the cards' images
_VOID = {"br", "hr", "img", "col"}
_KEPT = {"class", "href", "src", "alt"}  # attributes of the cards' HTML that QTI's XHTML subset has


def _q(name: str) -> str:
    return f"{{{QTI}}}{name}"


class _Builder(HTMLParser):
    """The cards' HTML (sanitized, from the quiz's Markdown, its math as MathML) as elements in QTI's
    namespace, the math in MathML's."""

    def __init__(self, root: ET.Element) -> None:
        super().__init__(convert_charrefs=True)
        self.open = [root]

    def _name(self, tag: str) -> str:
        inside = tag == "math" or self.open[-1].tag.startswith(f"{{{MATHML}}}")
        return f"{{{MATHML}}}{tag}" if inside else _q(tag)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        name = self._name(tag)
        math = name.startswith(f"{{{MATHML}}}")  # its attributes passed render/math/mathml.py's allow-list
        kept = {k: v for k, v in attrs if (k in _KEPT or (math and k != "xmlns")) and v is not None}
        node = ET.SubElement(self.open[-1], name, kept)
        if tag not in _VOID:
            self.open.append(node)

    def handle_endtag(self, tag: str) -> None:
        if tag not in _VOID and len(self.open) > 1 and self.open[-1].tag == self._name(tag):
            self.open.pop()

    def handle_data(self, data: str) -> None:
        node = self.open[-1]
        if len(node):
            node[-1].tail = (node[-1].tail or "") + data
        else:
            node.text = (node.text or "") + data


def _html(parent: ET.Element, text: str) -> None:
    """Append `text` (HTML) to `parent`, inside a div."""
    builder = _Builder(ET.SubElement(parent, _q("div")))
    builder.feed(text)
    builder.close()


def _value(parent: ET.Element, text: str) -> None:
    ET.SubElement(parent, _q("value")).text = text


def _declare(item: ET.Element, q: Question) -> ET.Element:
    """The response's declaration with its correct response, and the SCORE outcome."""
    base = {"numerical": "float", "short": "string"}.get(q.type, "identifier")
    cardinality = "ordered" if q.type == "ordering" else "single"
    attributes = {"identifier": "RESPONSE", "cardinality": cardinality, "baseType": base}
    declared = ET.SubElement(item, _q("responseDeclaration"), attributes)
    correct = ET.SubElement(declared, _q("correctResponse"))
    if q.type in ("numerical", "short"):
        _value(correct, q.answer)
    elif q.type == "ordering":
        for n in range(len(q.order)):
            _value(correct, f"L{n}")
    else:
        _value(correct, "C0")  # the right choice is listed first
    outcome = {"identifier": "SCORE", "cardinality": "single", "baseType": "float"}
    _value(ET.SubElement(ET.SubElement(item, _q("outcomeDeclaration"), outcome), _q("defaultValue")), "0")
    for name, used in (("FEEDBACK", bool(q.explain_html)), (CHOSEN, _told(q) != [])):
        if used:
            feedback = {"identifier": name, "cardinality": "single", "baseType": "identifier"}
            ET.SubElement(item, _q("outcomeDeclaration"), feedback)
    return declared


def _told(q: Question) -> list[tuple[str, str]]:
    """(identifier, feedback) of each choice with feedback: the misconception a wrong choice stands for."""
    return [(f"C{n}", c.feedback_sentence) for n, c in enumerate(q.choices) if c.feedback_sentence]


def _interaction(body: ET.Element, q: Question) -> None:
    if q.type in ("numerical", "short"):
        interaction = ET.SubElement(ET.SubElement(body, _q("p")), _q("textEntryInteraction"))
        interaction.set("responseIdentifier", "RESPONSE")
        interaction.set("expectedLength", str(max(8, len(q.answer) + 2)))
        return
    kind = "orderInteraction" if q.type == "ordering" else "choiceInteraction"
    attributes = {"responseIdentifier": "RESPONSE", "shuffle": "true"}
    interaction = ET.SubElement(
        body, _q(kind), attributes | ({} if q.type == "ordering" else {"maxChoices": "1"})
    )
    texts = q.order if q.type == "ordering" else [c.text for c in q.choices]
    prefix = "L" if q.type == "ordering" else "C"
    for n, text in enumerate(texts):
        choice = ET.SubElement(interaction, _q("simpleChoice"), {"identifier": f"{prefix}{n}"})
        ET.SubElement(choice, _q("pre" if q.type == "ordering" else "code")).text = text  # a line: a block


def _set(parent: ET.Element, outcome: str, base: str, value: str) -> None:
    node = ET.SubElement(parent, _q("setOutcomeValue"), {"identifier": outcome})
    ET.SubElement(node, _q("baseValue"), {"baseType": base}).text = value


def _processing(item: ET.Element, q: Question) -> None:
    """SCORE 1 for the answer the quiz would accept (the right choice or order; a number within the
    card's tolerance; text regardless of case), then the explanation shown whatever the answer and the
    choice picked, for its own feedback (written out rather than QTI's match_correct template, which sets
    SCORE alone)."""
    processing = ET.SubElement(item, _q("responseProcessing"))
    found = ET.SubElement(ET.SubElement(processing, _q("responseCondition")), _q("responseIf"))
    if q.type == "numerical":
        within = {"toleranceMode": "absolute", "tolerance": f"{q.tolerance!r} {q.tolerance!r}"}
        compare = ET.SubElement(found, _q("equal"), within)
    elif q.type == "short":
        compare = ET.SubElement(found, _q("stringMatch"), {"caseSensitive": "false"})
    else:
        compare = ET.SubElement(found, _q("match"))
    ET.SubElement(compare, _q("variable"), {"identifier": "RESPONSE"})
    ET.SubElement(compare, _q("correct"), {"identifier": "RESPONSE"})
    _set(found, "SCORE", "float", "1")
    if q.explain_html:
        _set(processing, "FEEDBACK", "identifier", EXPLAIN)
    if _told(q):
        chosen = ET.SubElement(processing, _q("setOutcomeValue"), {"identifier": CHOSEN})
        ET.SubElement(chosen, _q("variable"), {"identifier": "RESPONSE"})


def item_xml(q: Question) -> tuple[bytes, dict[str, bytes]]:
    """One assessmentItem, and the images it shows by their path in the package (which the item names)."""
    text, shown = items.images(q.text_html, q, lambda name: f"{MEDIA}/{name}")
    explain, explained = items.images(q.explain_html, q, lambda name: f"{MEDIA}/{name}")
    attributes = {
        "identifier": identifier(q),
        "title": q.title,
        "adaptive": "false",
        "timeDependent": "false",
    }
    item = ET.Element(_q("assessmentItem"), attributes)
    item.set(f"{{{XSI}}}schemaLocation", f"{QTI} {SCHEMA}")
    _declare(item, q)
    body = ET.SubElement(item, _q("itemBody"))
    _html(body, render_math(text))
    _interaction(body, q)
    _processing(item, q)
    feedback = [(CHOSEN, choice, f"<p>{escape(told)}</p>") for choice, told in _told(q)]
    for outcome, shown_for, content in [*feedback, ("FEEDBACK", EXPLAIN, render_math(explain))]:
        if content:
            attributes = {"outcomeIdentifier": outcome, "identifier": shown_for, "showHide": "show"}
            _html(ET.SubElement(item, _q("modalFeedback"), attributes), content)
    written = zipped.xml(item, {"": QTI, "xsi": XSI, "m": MATHML}, indent=False)  # (indenting: <pre>'s text)
    return written, {f"{MEDIA}/{name}": data for name, data in (shown | explained).items()}


def identifier(q: Question) -> str:
    """The item's identifier: an XML name (a card id may start with a digit)."""
    return f"card-{q.id}"


def manifest(slug: str, found: dict[str, list[str]]) -> bytes:
    """The package's imsmanifest.xml: one resource per item (by card id), its files the item and the
    images it shows."""
    root = ET.Element(f"{{{CP}}}manifest", {"identifier": f"quizgen-{slug}"})
    ET.SubElement(root, f"{{{CP}}}organizations")
    resources = ET.SubElement(root, f"{{{CP}}}resources")
    for card, images in found.items():
        attributes = {"identifier": f"item-{card}", "type": "imsqti_item_xmlv2p1", "href": f"{card}.xml"}
        resource = ET.SubElement(resources, f"{{{CP}}}resource", attributes)
        for href in [f"{card}.xml", *sorted(images)]:
            ET.SubElement(resource, f"{{{CP}}}file", {"href": href})
    return zipped.xml(root, {"": CP})


class QtiBank:
    """build/qti/: each deck's gradable cards as a QTI 2.1 package."""

    name = "qti"

    def render(self, project: Project, stage: Stage) -> Rendered:
        return items.banks(project, stage, self.name, "QTI 2.1", _write)


def _write(folder: Path, slug: str, deck: str, found: list[Question]) -> None:
    contents: dict[str, bytes] = {}
    listed: dict[str, list[str]] = {}
    for q in found:
        contents[f"{q.id}.xml"], images = item_xml(q)
        contents |= images  # an image two cards show is one file
        listed[q.id] = list(images)
    contents["imsmanifest.xml"] = manifest(slug, listed)
    zipped.write(folder / f"{slug}.zip", contents)
