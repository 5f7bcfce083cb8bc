"""`build/scorm/<deck>-scorm12.zip` and `-scorm2004.zip`: each deck's quiz as a SCORM package for an LMS
(quizgen.toml's [export] scorm), one SCO that reports completion, the score and each card it was asked
to the LMS through the SCORM API (static/lms/scorm.js).

The SCO is the quiz's own deck page (render/quiz.py's lms_pages: no index, no link out of the deck) with
its assets and the images it shows. The bytes depend on the cards alone: the entries sorted and dated
1980 (render/zipped.py), the manifest made from the deck's name and files.
"""

from __future__ import annotations

import tempfile
import xml.etree.ElementTree as ET
from functools import partial
from pathlib import Path

from quizgen.render import quiz, zipped
from quizgen.render.base import Project, Rendered
from quizgen.render.lms import items
from quizgen.render.lms.question import INTERACTIONS
from quizgen.render.stage import Stage
from quizgen.render.templating import TemplateProblem
from quizgen.render.view import card_key

SCRIPT = Path(__file__).parents[2] / "static" / "lms" / "scorm.js"
SCRIPT_NAME = "lms/scorm.js"  # its name among the page's assets
MANIFEST = "imsmanifest.xml"
XSI = "http://www.w3.org/2001/XMLSchema-instance"

# Each version's manifest: its namespaces (prefix -> URI), the schemas they name, and how it spells
# the SCO's type and its version.
_SPEC: dict[str, dict[str, object]] = {
    "1.2": {
        "suffix": "scorm12",
        "ns": {
            "": "http://www.imsproject.org/xsd/imscp_rootv1p1p2",
            "adlcp": "http://www.adlnet.org/xsd/adlcp_rootv1p2",
        },
        "schemas": {"": "imscp_rootv1p1p2.xsd", "adlcp": "adlcp_rootv1p2.xsd"},
        "scormtype": "scormtype",
        "schemaversion": "1.2",
    },
    "2004": {
        "suffix": "scorm2004",
        "ns": {
            "": "http://www.imsglobal.org/xsd/imscp_v1p1",
            "adlcp": "http://www.adlnet.org/xsd/adlcp_v1p3",
            "imsss": "http://www.imsglobal.org/xsd/imsss",
        },
        "schemas": {"": "imscp_v1p1.xsd", "adlcp": "adlcp_v1p3.xsd", "imsss": "imsss_v1p0.xsd"},
        "scormtype": "scormType",
        "schemaversion": "2004 4th Edition",
    },
}


def file_name(slug: str, version: str) -> str:
    """The package's name in build/scorm/: the deck's slug and the version ("sample-scorm12.zip")."""
    return f"{slug}-{_SPEC[version]['suffix']}.zip"


def _q(version: str, prefix: str, name: str) -> str:
    """An element or attribute name in the version's namespace `prefix` ("" is the manifest's own)."""
    return f"{{{_namespaces(version)[prefix]}}}{name}"


def _namespaces(version: str) -> dict[str, str]:
    return _SPEC[version]["ns"]  # type: ignore[return-value]


def manifest(version: str, slug: str, title: str, launch: str, files: list[str], passing: float) -> bytes:
    """imsmanifest.xml for one deck: one organization with one item, the SCO at `launch` listing `files`;
    the pass mark as the version's mastery score (1.2) or the objective's measure (2004)."""
    spec, ns = _SPEC[version], _namespaces(version)
    schemas = spec["schemas"]
    assert isinstance(schemas, dict)

    def q(name: str, prefix: str = "") -> str:
        return _q(version, prefix, name)

    root = ET.Element(q("manifest"), {"identifier": f"quizgen-{slug}", "version": "1"})
    root.set(f"{{{XSI}}}schemaLocation", " ".join(f"{ns[p]} {schemas[p]}" for p in ns))
    metadata = ET.SubElement(root, q("metadata"))
    ET.SubElement(metadata, q("schema")).text = "ADL SCORM"
    ET.SubElement(metadata, q("schemaversion")).text = str(spec["schemaversion"])
    organizations = ET.SubElement(root, q("organizations"), {"default": "quizgen"})
    organization = ET.SubElement(organizations, q("organization"), {"identifier": "quizgen"})
    ET.SubElement(organization, q("title")).text = title
    item = ET.SubElement(organization, q("item"), {"identifier": "deck", "identifierref": "sco"})
    ET.SubElement(item, q("title")).text = title
    if version == "1.2":
        ET.SubElement(item, q("masteryscore", "adlcp")).text = str(round(passing * 100))
    else:
        objectives = ET.SubElement(ET.SubElement(item, q("sequencing", "imsss")), q("objectives", "imsss"))
        attributes = {"objectiveID": "score", "satisfiedByMeasure": "true"}
        primary = ET.SubElement(objectives, q("primaryObjective", "imsss"), attributes)
        ET.SubElement(primary, q("minNormalizedMeasure", "imsss")).text = f"{passing:g}"
    resources = ET.SubElement(root, q("resources"))
    attributes = {"identifier": "sco", "type": "webcontent", q(str(spec["scormtype"]), "adlcp"): "sco"}
    resource = ET.SubElement(resources, q("resource"), {**attributes, "href": launch})
    for name in files:
        ET.SubElement(resource, q("file"), {"href": name})
    return zipped.xml(root, {**ns, "xsi": XSI})


class ScormPackages:
    """build/scorm/: a SCORM package of each deck, for each version quizgen.toml's [export] asks for."""

    name = "scorm"

    def render(self, project: Project, stage: Stage) -> Rendered:
        folder = stage.folder(project.out_dir / "scorm")
        passing = project.exports.passing_score
        with tempfile.TemporaryDirectory(prefix="quizgen-scorm-") as tmp:
            for version in project.exports.scorm:
                site = Path(tmp) / version
                data = partial(_data, version, passing)
                quiz.lms_pages(project, site, "scorm", data, {SCRIPT_NAME: SCRIPT})
                for entry in quiz.deck_entries(project.decks):
                    contents = _contents(site, entry)
                    if f"{SCRIPT_NAME}?" not in contents[entry.url].decode("utf-8"):
                        raise _unreported(project)
                    listed = sorted(contents)
                    contents[MANIFEST] = manifest(version, entry.slug, entry.name, entry.url, listed, passing)
                    zipped.write(folder / file_name(entry.slug, version), contents)
        return Rendered([project.out_dir / "scorm"])


def _data(version: str, passing: float, entry: quiz.DeckEntry) -> dict[str, object]:
    """What static/lms/scorm.js reads on a deck's page: the version, the pass mark and each card's
    interaction type (as the question an LMS would make of it), by the card's key as the page names it."""
    found = (items.question(card) for card in entry.cards)
    types = {card_key(q.id): INTERACTIONS[q.type] for q in found if q is not None}
    return {"scorm": version, "passing": passing, "types": types}


def _contents(site: Path, entry: quiz.DeckEntry) -> dict[str, bytes]:
    """A deck's files in its package, by name: its page, every asset and the images it shows."""
    images = {*entry.media, *(name for card in entry.cards for name in card.media)}
    shown = [p for p in (site / quiz.MEDIA).glob("*") if p.name in images]
    found = [site / entry.url, *(p for p in (site / "assets").rglob("*") if p.is_file()), *shown]
    return {p.relative_to(site).as_posix(): p.read_bytes() for p in found}


def _unreported(project: Project) -> TemplateProblem:
    """A project's deck.html without the script that reports to the LMS: its package would grade nothing."""
    where = project.templates_dir / "quiz" / "deck.html"
    keep = "{% if lms %}<script src=\"{{ assets['lms/' + lms + '.js'] }}\"></script>{% endif %}"
    return TemplateProblem(
        f"{where}: a deck page in a SCORM package must load the script that reports to the LMS: "
        f"keep the packaged deck.html's `{keep}`"
    )
