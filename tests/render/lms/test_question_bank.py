"""build/qti/ and build/moodle/: the cards an LMS can grade itself, read back from what was written and
compared with the cards: myth cards true/false, value cards numerical, short answer or (with variants)
multiple choice with each misconception's feedback, an order puzzle of one accepted order an ordering
question; the rest left to the quiz; each card's explanation as the feedback shown after answering. The
QTI items are read by a QTI 2.1 implementation and their manifest validated against IMS's XSD, the Moodle
XML read as Moodle's importer reads it (tests/support/lms_schemas.py). Same bytes twice."""

from __future__ import annotations

import base64
import itertools
import re
import xml.etree.ElementTree as ET
import zipfile
from pathlib import Path

import pytest

from quizgen import pipeline
from quizgen.execution.pool import Pool
from quizgen.kinds.order.answer import judge_typed
from quizgen.render.base import Project
from quizgen.render.lms import moodle, qti
from quizgen.render.present import deck_views
from quizgen.render.stage import Stage
from tests.support import lms_schemas
from tests.support.projects import SAMPLE_DECK, write_project
from tests.support.variants import CHOICE_DECK, FEEDBACK

ONE_WAY = """\
deck: Lists
cards:
  - id: order-one-way
    kind: order
    ask: 'Build the list `[1, 2, 3]`: ![three boxes](img/list.png)'
    setup: |
      xs = []
    lines:
      - xs.append(1)
      - xs.append(2)
      - xs.append(3)
    check: |
      assert xs == [1, 2, 3]
    explain: 'Each append goes last: \\(x_1 < x_2\\) & so on. ![the list](img/after.svg)'
"""
PNG = b"\x89PNG\r\n\x1a\n three boxes"
SVG = b'<svg xmlns="http://www.w3.org/2000/svg" width="4" height="4"><rect width="4" height="4"/></svg>'

QTI = "{http://www.imsglobal.org/xsd/imsqti_v2p1}"
CP = "{http://www.imsglobal.org/xsd/imscp_v1p1}"


@pytest.fixture(scope="module")
def bank_build(tmp_path_factory: pytest.TempPathFactory, pool: Pool) -> pipeline.Report:
    files = {"sample.yaml": SAMPLE_DECK, "choice.yaml": CHOICE_DECK, "lists.yaml": ONE_WAY}
    root = write_project(tmp_path_factory.mktemp("bank"), files)
    (root / "cards" / "img").mkdir()
    (root / "cards" / "img" / "list.png").write_bytes(PNG)
    (root / "cards" / "img" / "after.svg").write_bytes(SVG)
    (root / "quizgen.toml").write_text("[export]\nqti = true\nmoodle = true\n")
    report = pipeline.build(pipeline.Options(cards_dir=root / "cards", out_dir=root / "build", pool=pool))
    report.root = root  # type: ignore[attr-defined]
    return report


def out(report: pipeline.Report) -> Path:
    return report.root / "build"  # type: ignore[attr-defined,no-any-return]


def read_moodle(path: Path) -> dict[str, tuple[str, list[tuple[str, str, str]], dict[str, str]]]:
    """Each question by idnumber: its type, its answers (text, fraction, feedback) and its other fields."""
    root = ET.parse(path).getroot()
    assert root.tag == "quiz"
    found = {}
    for q in root.findall("question"):
        if q.get("type") == "category":
            continue
        answers = [
            (a.findtext("text") or "", a.get("fraction") or "", a.findtext("feedback/text") or "")
            for a in q.findall("answer")
        ]
        fields = {
            child.tag: child.findtext("text") if child.find("text") is not None else child.text or ""
            for child in q
            if child.tag != "answer"
        }
        found[fields["idnumber"]] = (q.get("type") or "", answers, fields)
    return found


def test_moodle_xml_holds_the_cards_an_lms_can_grade(bank_build: pipeline.Report) -> None:
    assert sorted(p.name for p in (out(bank_build) / "moodle").iterdir()) == [
        "lists.xml",
        "sample-gradients.xml",
        "variants-choice.xml",
    ]
    sample = read_moodle(out(bank_build) / "moodle" / "sample-gradients.xml")
    assert {k: (t, [a[:2] for a in answers]) for k, (t, answers, _) in sample.items()} == {
        "value-two-steps": ("numerical", [("8.0", "100")]),
        "value-grad-none": ("shortanswer", [("None", "100")]),
        "value-raises": ("shortanswer", [("RuntimeError", "100")]),
        "myth-zero-grad-zeros": ("truefalse", [("false", "100"), ("true", "0")]),
    }  # the shape (typed by hand), the puzzle accepting three orders and the basic card stay in the quiz
    steps = sample["value-two-steps"][2]
    assert float(
        ET.parse(out(bank_build) / "moodle" / "sample-gradients.xml").getroot().findtext(".//tolerance") or 0
    ) == pytest.approx(1e-6 + 1e-3 * 8)
    assert "<pre><code>w = torch.tensor(2.0, requires_grad=True)" in steps["questiontext"]
    assert steps["generalfeedback"] == "<p>Gradients add up: 3.0 + 5.0 = 8.0.</p>\n"
    category = (
        ET.parse(out(bank_build) / "moodle" / "sample-gradients.xml")
        .getroot()
        .findtext("question/category/text")
    )
    assert category == "$course$/top/Sample/Gradients"
    [(kind, answers, _)] = read_moodle(out(bank_build) / "moodle" / "variants-choice.xml").values()
    assert kind == "multichoice"
    assert [a[1] for a in answers] == ["100", "0", "0", "0"]
    assert [a[2] for a in answers] == [f"{f[:1].upper()}{f[1:]}." if f else "" for f in FEEDBACK]
    [(kind, answers, _)] = read_moodle(out(bank_build) / "moodle" / "lists.xml").values()
    assert (kind, [a[0] for a in answers]) == ("ordering", [f"<pre>xs.append({n})</pre>" for n in (1, 2, 3)])


def read_qti(path: Path) -> dict[str, ET.Element]:
    """Each item of a QTI package by identifier, after checking the manifest lists exactly the zip's items."""
    with zipfile.ZipFile(path) as zf:
        names = zf.namelist()
        manifest = ET.fromstring(zf.read("imsmanifest.xml"))
        items = {n: ET.fromstring(zf.read(n)) for n in names if n != "imsmanifest.xml" and "/" not in n}
    assert names == sorted(names)
    resources = manifest.findall(f"{CP}resources/{CP}resource")
    assert sorted(r.get("href") or "" for r in resources) == sorted(items)
    listed = {f.get("href") for r in resources for f in r.findall(f"{CP}file")}
    assert listed == set(names) - {"imsmanifest.xml"}  # the items and the images they show
    assert {r.get("type") for r in resources} == {"imsqti_item_xmlv2p1"}
    assert {item.tag for item in items.values()} == {f"{QTI}assessmentItem"}
    return {item.get("identifier") or "": item for item in items.values()}


def correct(item: ET.Element) -> list[str]:
    return [v.text or "" for v in item.findall(f"{QTI}responseDeclaration/{QTI}correctResponse/{QTI}value")]


def test_qti_items_hold_the_cards_an_lms_can_grade(bank_build: pipeline.Report) -> None:
    sample = read_qti(out(bank_build) / "qti" / "sample-gradients.zip")
    assert sorted(sample) == [
        "card-myth-zero-grad-zeros",
        "card-value-grad-none",
        "card-value-raises",
        "card-value-two-steps",
    ]
    steps = sample["card-value-two-steps"]
    assert correct(steps) == ["8.0"]
    equal = steps.find(f".//{QTI}equal")
    assert equal is not None and equal.get("toleranceMode") == "absolute"
    assert float((equal.get("tolerance") or "").split()[0]) == pytest.approx(1e-6 + 1e-3 * 8)
    code = steps.find(f"{QTI}itemBody/{QTI}div/{QTI}pre/{QTI}code")
    assert code is not None and (code.text or "").startswith("w = torch.tensor(2.0, requires_grad=True)\n")
    myth = sample["card-myth-zero-grad-zeros"]
    choices = {c.get("identifier"): "".join(c.itertext()) for c in myth.iter(f"{QTI}simpleChoice")}
    assert choices[correct(myth)[0]] == "False"
    match = sample["card-value-raises"].find(f".//{QTI}stringMatch")
    assert (
        correct(sample["card-value-raises"]) == ["RuntimeError"]
        and match is not None
        and match.get("caseSensitive") == "false"
    )
    [ordering] = read_qti(out(bank_build) / "qti" / "lists.zip").values()
    lines = {c.get("identifier"): "".join(c.itertext()) for c in ordering.iter(f"{QTI}simpleChoice")}
    assert [lines[v] for v in correct(ordering)] == [f"xs.append({n})" for n in (1, 2, 3)]
    assert ordering.find(f"{QTI}itemBody/{QTI}orderInteraction") is not None
    [choice] = read_qti(out(bank_build) / "qti" / "variants-choice.zip").values()
    assert len(list(choice.iter(f"{QTI}simpleChoice"))) == len(FEEDBACK)


def test_the_build_says_how_many_cards_each_bank_took(bank_build: pipeline.Report) -> None:
    assert "QTI 2.1: 6 of 9 cards; the other 3 need quizgen's own judge (docs/lms.md)" in bank_build.notes
    assert "Moodle XML: 6 of 9 cards; the other 3 need quizgen's own judge (docs/lms.md)" in bank_build.notes


def test_the_banks_are_the_same_bytes_twice(bank_build: pipeline.Report, tmp_path: Path) -> None:
    for n in (1, 2):
        project = Project(bank_build.decks, out(bank_build).parent / "cards", tmp_path / str(n))
        with Stage() as stage:
            qti.QtiBank().render(project, stage)
            moodle.MoodleBank().render(project, stage)
            stage.commit()
    written = sorted(p.relative_to(tmp_path / "1") for p in (tmp_path / "1").rglob("*") if p.is_file())
    assert len(written) == 6
    for name in written:
        assert (tmp_path / "1" / name).read_bytes() == (tmp_path / "2" / name).read_bytes()


def qti_files(report: pipeline.Report) -> dict[str, bytes]:
    """Every file of every QTI package, by package and name."""
    found = {}
    for package in sorted((out(report) / "qti").glob("*.zip")):
        with zipfile.ZipFile(package) as zf:
            found |= {f"{package.name}/{name}": zf.read(name) for name in zf.namelist()}
    return found


def qti_items(report: pipeline.Report) -> dict[str, bytes]:
    """Every item of every QTI package, by package and name."""
    return {
        k: v
        for k, v in qti_files(report).items()
        if "/media/" not in k and not k.endswith("/imsmanifest.xml")
    }


def test_qti_manifests_are_valid_against_the_ims_content_packaging_xsd(bank_build: pipeline.Report) -> None:
    schema = lms_schemas.xsd(lms_schemas.SCORM_2004)
    manifests = {k: v for k, v in qti_files(bank_build).items() if k.endswith("/imsmanifest.xml")}
    assert len(manifests) == 3
    assert {name: lms_schemas.xsd_errors(schema, text) for name, text in manifests.items()} == {
        name: [] for name in manifests
    }
    broken = manifests["lists.zip/imsmanifest.xml"].replace(b"<organizations />", b"")
    assert lms_schemas.xsd_errors(schema, broken) != []  # the schema can fail: organizations is required


def test_qti_items_are_read_by_a_qti_2_1_implementation(bank_build: pipeline.Report) -> None:
    items = qti_items(bank_build)
    assert len(items) == 6
    for text in items.values():
        lms_schemas.qti_item(text)  # raises, or fails on what pyslet logs, where QTI 2.1 has no place
    steps = items["sample-gradients.zip/value-two-steps.xml"]
    assert lms_schemas.qti_item_fails(
        steps.replace(b"<p><textEntryInteraction", b"<div><textEntryInteraction")
    )


def test_qti_items_show_the_explanation_after_any_answer(bank_build: pipeline.Report) -> None:
    [ordering] = read_qti(out(bank_build) / "qti" / "lists.zip").values()
    [feedback] = ordering.findall(f"{QTI}modalFeedback")
    assert (feedback.get("outcomeIdentifier"), feedback.get("showHide")) == ("FEEDBACK", "show")
    shown = feedback.get("identifier")
    processing = ordering.find(f"{QTI}responseProcessing")
    assert processing is not None
    [always] = [s for s in processing.findall(f"{QTI}setOutcomeValue") if s.get("identifier") == "FEEDBACK"]
    assert always.findtext(f"{QTI}baseValue") == shown  # outside the condition: whatever the answer
    text = "".join(feedback.itertext())
    assert text.startswith("Each append goes last: ") and text.endswith(" & so on. \n")
    math = "{http://www.w3.org/1998/Math/MathML}"
    assert [n.tag for n in feedback.iter() if n.tag.startswith(math)][:3] == [
        f"{math}math",
        f"{math}mrow",
        f"{math}msub",
    ]  # the quiz's MathML, in MathML's namespace
    sample = read_qti(out(bank_build) / "qti" / "sample-gradients.zip")
    assert "".join(sample["card-value-two-steps"].find(f"{QTI}modalFeedback").itertext()) == (  # type: ignore[union-attr]
        "Gradients add up: 3.0 + 5.0 = 8.0.\n"
    )
    assert sample["card-value-raises"].find(f"{QTI}modalFeedback") is None  # no explanation: no feedback


def test_moodle_xml_is_what_moodles_importer_reads(bank_build: pipeline.Report, tmp_path: Path) -> None:
    files = sorted((out(bank_build) / "moodle").glob("*.xml"))
    assert {f.name: lms_schemas.read_moodle_strictly(f) for f in files} == {f.name: [] for f in files}
    [(_, _, fields)] = read_moodle(out(bank_build) / "moodle" / "lists.xml").values()
    assert fields["generalfeedback"].startswith(
        '<p>Each append goes last: <span class="math">\\(x_1 &lt; x_2\\)</span> &amp; so on. <img '
    )  # HTML as text: Moodle's MathJax filter reads the TeX
    broken = tmp_path / "broken.xml"
    broken.write_bytes(
        (out(bank_build) / "moodle" / "lists.xml").read_bytes().replace(b"VERTICAL", b"UPRIGHT")
    )
    assert lms_schemas.read_moodle_strictly(broken) == ["question 1 (ordering): layouttype 'UPRIGHT'"]


def test_qti_packages_carry_the_images_their_items_show(bank_build: pipeline.Report) -> None:
    package = out(bank_build) / "qti" / "lists.zip"
    [ordering] = read_qti(package).values()  # (checks the manifest lists every file of the package)
    shown = [img.get("src") or "" for img in ordering.iter(f"{QTI}img")]
    assert [src.split("/")[0] for src in shown] == ["media", "media"]  # the question's, the explanation's
    assert [img.get("alt") for img in ordering.iter(f"{QTI}img")] == ["three boxes", "the list"]
    with zipfile.ZipFile(package) as zf:
        assert [zf.read(src) for src in shown] == [PNG, SVG]
        manifest = ET.fromstring(zf.read("imsmanifest.xml"))
    [resource] = manifest.findall(f"{CP}resources/{CP}resource")
    assert [f.get("href") for f in resource.findall(f"{CP}file")] == ["order-one-way.xml", *sorted(shown)]
    assert {k for k in qti_files(bank_build) if "/media/" in k} == {f"lists.zip/{src}" for src in shown}


def test_moodle_xml_carries_the_images_its_questions_show(
    bank_build: pipeline.Report, tmp_path: Path
) -> None:
    written = out(bank_build) / "moodle" / "lists.xml"
    [_, question] = ET.parse(written).getroot().findall("question")  # the category, the puzzle
    names = []
    for tag, data in [("questiontext", PNG), ("generalfeedback", SVG)]:
        node = question.find(tag)
        assert node is not None
        [file] = node.findall("file")
        assert (file.get("path"), file.get("encoding")) == ("/", "base64")
        assert base64.b64decode(file.text or "", validate=True) == data
        names.append(file.get("name"))
        assert f'src="@@PLUGINFILE@@/{names[-1]}"' in (node.findtext("text") or "")
    assert lms_schemas.read_moodle_strictly(written) == []
    broken = tmp_path / "broken.xml"  # the check can fail: the same texts without their files
    broken.write_text(re.sub(r"<file [^>]*>[^<]*</file>", "", written.read_text(encoding="utf-8")))
    assert lms_schemas.read_moodle_strictly(broken) == [
        f"question 1 (ordering): <{tag}> shows '@@PLUGINFILE@@/{name}', not one of its files"
        for tag, name in zip(["questiontext", "generalfeedback"], names, strict=True)
    ]


def test_qti_wrong_choices_show_the_misconception_they_stand_for(bank_build: pipeline.Report) -> None:
    [text] = [v for k, v in qti_items(bank_build).items() if k.startswith("variants-choice.zip/")]
    answered = [lms_schemas.qti_answered(text, f"C{n}") for n in range(len(FEEDBACK))]
    assert answered == [
        (1.0 if n == 0 else 0.0, [f"{f[:1].upper()}{f[1:]}."] if f else []) for n, f in enumerate(FEEDBACK)
    ]  # as Moodle shows each answer's feedback, and nothing for the right one (the card has no explanation)


def test_order_puzzles_are_all_or_nothing_as_the_quiz_judges_them(bank_build: pipeline.Report) -> None:
    [view] = deck_views(next(vd for vd in bank_build.decks if vd.deck.name == "Lists"))
    labels, lines = view.judge["labels"], view.judge["items"]
    assert isinstance(labels, list) and isinstance(lines, list)
    [(_, _, fields)] = read_moodle(out(bank_build) / "moodle" / "lists.xml").values()
    [item] = [v for k, v in qti_items(bank_build).items() if k.startswith("lists.zip/")]
    for placed in itertools.permutations(range(3)):  # each order a learner can give, by line
        quiz = judge_typed(view.judge, " ".join(str(labels[lines.index(line)]) for line in placed))
        moodle_grade = lms_schemas.moodle_ordering_fraction(fields["gradingtype"], list(placed))
        qti_score, _ = lms_schemas.qti_answered(item, [f"L{line}" for line in placed])
        assert (moodle_grade, qti_score) == (float(quiz), float(quiz)), placed
    assert lms_schemas.moodle_ordering_fraction("ABSOLUTE_POSITION", [0, 2, 1]) == 1 / 3  # Moodle's default
