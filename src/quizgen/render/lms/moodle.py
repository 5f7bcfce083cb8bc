"""`build/moodle/<deck>.xml`: the cards an LMS can grade itself (render/lms/items.py) as Moodle XML, one
file per deck, its questions in a category named for the deck (quizgen.toml's [export] moodle).

Moodle imports it under Question bank → Import → Moodle XML format. An order puzzle is an `ordering`
question (standard from Moodle 4.4, a plugin before), all or nothing as the quiz judges it; the rest are
Moodle's core types. A card's images travel inside the file, each a base64 `<file>` of the text showing it."""

from __future__ import annotations

import base64
import xml.etree.ElementTree as ET
from html import escape
from pathlib import Path

from quizgen.render import zipped
from quizgen.render.base import Project, Rendered
from quizgen.render.lms import items
from quizgen.render.lms.question import Question
from quizgen.render.stage import Stage

TYPES = {
    "truefalse": "truefalse",
    "choice": "multichoice",
    "numerical": "numerical",
    "short": "shortanswer",
    "ordering": "ordering",
}
PLUGINFILE = "@@PLUGINFILE@@"  # how a Moodle text names a file of its own


def _text(parent: ET.Element, tag: str, value: str, html: bool = False) -> ET.Element:
    """`<tag><text>value</text></tag>` (format="html" where the value is HTML)."""
    node = ET.SubElement(parent, tag, {"format": "html"} if html else {})
    ET.SubElement(node, "text").text = value
    return node


def _shown(parent: ET.Element, tag: str, q: Question, value: str) -> None:
    """`<tag format="html">` holding the card's HTML, each image it shows as a `<file>` of that text (Moodle
    keeps a text's files with it) that the HTML names `@@PLUGINFILE@@/name`."""
    value, shown = items.images(value, q, lambda name: f"{PLUGINFILE}/{name}")
    node = _text(parent, tag, value, html=True)
    for name, data in sorted(shown.items()):
        file = ET.SubElement(node, "file", {"name": name, "path": "/", "encoding": "base64"})
        file.text = base64.b64encode(data).decode("ascii")


def _answer(
    parent: ET.Element, text: str, fraction: str, feedback: str = "", html: bool = False
) -> ET.Element:
    node = ET.SubElement(parent, "answer", {"fraction": fraction, "format": "html" if html else "plain_text"})
    ET.SubElement(node, "text").text = text
    _text(node, "feedback", feedback, html=True)
    return node


def question_xml(q: Question) -> ET.Element:
    """One `<question>` element."""
    node = ET.Element("question", {"type": TYPES[q.type]})
    _text(node, "name", q.title)
    _shown(node, "questiontext", q, q.text_html)
    _shown(node, "generalfeedback", q, q.explain_html)
    ET.SubElement(node, "defaultgrade").text = "1"
    ET.SubElement(node, "penalty").text = "0"
    ET.SubElement(node, "hidden").text = "0"
    ET.SubElement(node, "idnumber").text = q.id
    if q.type == "truefalse":  # Moodle's answers are the words true and false
        for choice in q.choices:
            _answer(node, choice.text.lower(), "100" if choice.right else "0")
    elif q.type == "choice":
        ET.SubElement(node, "single").text = "true"
        ET.SubElement(node, "shuffleanswers").text = "true"
        ET.SubElement(node, "answernumbering").text = "abc"
        for choice in q.choices:
            _answer(node, choice.text, "100" if choice.right else "0", escape(choice.feedback_sentence))
    elif q.type == "numerical":
        ET.SubElement(_answer(node, q.answer, "100"), "tolerance").text = repr(q.tolerance)
    elif q.type == "short":
        ET.SubElement(node, "usecase").text = "0"
        _answer(node, q.answer, "100")
    else:
        for tag, value in [("layouttype", "VERTICAL"), ("selecttype", "ALL"), ("selectcount", "0")]:
            ET.SubElement(node, tag).text = value
        ET.SubElement(node, "gradingtype").text = "ALL_OR_NOTHING"  # as the quiz judges: no part marks
        ET.SubElement(node, "showgrading").text = "SHOW"
        for line in q.order:  # in the accepted order: Moodle shuffles them for the learner
            _answer(node, f"<pre>{escape(line)}</pre>", "1", html=True)
    return node


def bank(category: str, found: list[Question]) -> bytes:
    """A Moodle XML file: the deck's category, then its questions."""
    root = ET.Element("quiz")
    head = ET.SubElement(root, "question", {"type": "category"})
    _text(head, "category", "$course$/top/" + category.replace("::", "/"))
    for q in found:
        root.append(question_xml(q))
    return zipped.xml(root, {})


class MoodleBank:
    """build/moodle/: each deck's gradable cards as Moodle XML."""

    name = "moodle"

    def render(self, project: Project, stage: Stage) -> Rendered:
        return items.banks(project, stage, self.name, "Moodle XML", _write)


def _write(folder: Path, slug: str, deck: str, found: list[Question]) -> None:
    (folder / f"{slug}.xml").write_bytes(bank(deck, found))
