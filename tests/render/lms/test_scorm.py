"""build/scorm/: each deck as a SCORM 1.2 and 2004 package whose manifest lists what the zip holds, the
same bytes twice, and, in Chromium under scorm-again (the SCORM run-time many LMS players embed), a
quiz run reporting its score, completion and each card to the LMS."""

from __future__ import annotations

import mimetypes
import xml.etree.ElementTree as ET
import zipfile
from pathlib import Path
from typing import Any

import pytest

from quizgen import pipeline
from quizgen.execution.pool import Pool
from quizgen.project.settings import Exports
from quizgen.render.base import Project
from quizgen.render.lms import scorm
from quizgen.render.stage import Stage
from quizgen.render.templating import TemplateProblem
from quizgen.render.view import card_key
from tests.support import lms_schemas
from tests.support.projects import SAMPLE_DECK, write_project
from tests.support.quiz import SAMPLE_IDS, close_tab, open_tab
from tests.support.tools import npm_file

SCORM_AGAIN_VERSION = "3"
SLUG = "sample-gradients"
LMS = "http://lms.test"  # served by the browser context's routes: no socket, one origin for LMS and SCO


@pytest.fixture(scope="module")
def scorm_build(tmp_path_factory: pytest.TempPathFactory, pool: Pool) -> pipeline.Report:
    root = write_project(tmp_path_factory.mktemp("scorm"), {"sample.yaml": SAMPLE_DECK})
    (root / "quizgen.toml").write_text("[export]\nscorm = true\n")
    report = pipeline.build(pipeline.Options(cards_dir=root / "cards", out_dir=root / "build", pool=pool))
    report.root = root  # type: ignore[attr-defined]
    return report


def package(report: pipeline.Report, version: str) -> Path:
    return report.root / "build" / "scorm" / scorm.file_name(SLUG, version)  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("version", "namespace", "scormtype"),
    [
        (
            "1.2",
            "http://www.imsproject.org/xsd/imscp_rootv1p1p2",
            "{http://www.adlnet.org/xsd/adlcp_rootv1p2}scormtype",
        ),
        (
            "2004",
            "http://www.imsglobal.org/xsd/imscp_v1p1",
            "{http://www.adlnet.org/xsd/adlcp_v1p3}scormType",
        ),
    ],
)
def test_a_package_per_deck_and_version_whose_manifest_lists_the_zip(
    scorm_build: pipeline.Report, version: str, namespace: str, scormtype: str
) -> None:
    assert sorted(p.name for p in package(scorm_build, version).parent.iterdir()) == [
        "sample-gradients-scorm12.zip",
        "sample-gradients-scorm2004.zip",
    ]
    with zipfile.ZipFile(package(scorm_build, version)) as zf:
        names = zf.namelist()
        root = ET.fromstring(zf.read("imsmanifest.xml"))
        page = zf.read(f"decks/{SLUG}.html").decode()
    assert names == sorted(names) and "imsmanifest.xml" in names
    assert {i.date_time for i in zipfile.ZipFile(package(scorm_build, version)).infolist()} == {
        (1980, 1, 1, 0, 0, 0)
    }
    ns = {"cp": namespace}
    assert root.tag == f"{{{namespace}}}manifest"
    assert root.findtext("cp:metadata/cp:schemaversion", namespaces=ns) == (
        "1.2" if version == "1.2" else "2004 4th Edition"
    )
    [item] = root.findall("cp:organizations/cp:organization/cp:item", ns)
    assert item.findtext("cp:title", namespaces=ns) == "Sample::Gradients"
    [resource] = root.findall("cp:resources/cp:resource", ns)  # one SCO: the deck
    assert item.get("identifierref") == resource.get("identifier")
    assert resource.get(scormtype) == "sco"
    assert resource.get("href") == f"decks/{SLUG}.html"
    listed = [f.get("href") for f in resource.findall("cp:file", ns)]
    assert listed == [n for n in names if n != "imsmanifest.xml"]
    assert "assets/lms/scorm.js" in listed
    assert 'href="../index.html"' not in page  # no way out of the package


@pytest.mark.parametrize(
    ("version", "edition"), [("1.2", lms_schemas.SCORM_12), ("2004", lms_schemas.SCORM_2004)]
)
def test_each_manifest_is_valid_against_adls_scorm_xsds(
    scorm_build: pipeline.Report, version: str, edition: tuple[str, list[tuple[str, str]]]
) -> None:
    with zipfile.ZipFile(package(scorm_build, version)) as zf:
        manifest = zf.read("imsmanifest.xml")
    schema = lms_schemas.xsd(edition)
    assert lms_schemas.xsd_errors(schema, manifest) == []
    renamed = manifest.replace(b"<title>", b"<name>", 1).replace(b"</title>", b"</name>", 1)
    assert lms_schemas.xsd_errors(schema, renamed) != []  # the schemas can fail: an organization's <title>


def test_the_packages_are_the_same_bytes_twice(scorm_build: pipeline.Report, tmp_path: Path) -> None:
    root: Path = scorm_build.root  # type: ignore[attr-defined]
    for n in (1, 2):
        project = Project(
            scorm_build.decks, root / "cards", tmp_path / str(n), exports=Exports(scorm=("1.2", "2004"))
        )
        with Stage() as stage:
            scorm.ScormPackages().render(project, stage)
            stage.commit()
    for version in ("1.2", "2004"):
        name = scorm.file_name(SLUG, version)
        assert (tmp_path / "1" / "scorm" / name).read_bytes() == (
            tmp_path / "2" / "scorm" / name
        ).read_bytes()


def test_without_the_setting_there_is_no_scorm_folder(sample_build: pipeline.Report) -> None:
    assert not (sample_build.root / "build" / "scorm").exists()  # type: ignore[attr-defined]


# -- in an LMS: scorm-again's API in the page that frames the SCO ------------------------------------

HOST = """<!doctype html>
<html><head><title>LMS</title><script src="/scorm-again.js"></script>
<script>
  window.calls = [];
  const api = new {cls}({{ autocommit: false, logLevel: 5 }});
  window.{name} = api;
  ["{start}", "{commit}", "{end}"].forEach((n) => api.on(n, () => window.calls.push([n])));
  api.on("{set}.cmi.*", (element, value) => window.calls.push(["{set}", element, value]));
</script></head>
<body><iframe id="sco" title="SCO" src="/sco/decks/{slug}.html" style="width: 1000px; height: 800px">
</iframe></body></html>
"""
RUNTIME = {
    "1.2": {"file": "scorm12.min.js", "cls": "Scorm12API", "name": "API", "start": "LMSInitialize",
            "set": "LMSSetValue", "commit": "LMSCommit", "end": "LMSFinish"},
    "2004": {"file": "scorm2004.min.js", "cls": "Scorm2004API", "name": "API_1484_11", "start": "Initialize",
             "set": "SetValue", "commit": "Commit", "end": "Terminate"},
}  # fmt: skip

# How the learner answers each card of the sample deck, and whether that is right.
ANSWERS = {
    "value-two-steps": ("8.0", True),
    "value-grad-none": ("None", True),
    "value-shape": ("0", False),
    "value-raises": ("0", False),
    "myth-zero-grad-zeros": ("false", True),
    "order-train-step": ("", False),  # checked as it stands (nothing placed) until the answer shows
    "basic-why-accumulate": ("knew", True),
}


def answer(frame: Any, card: str, given: str) -> None:
    """Answer the card on show as `given` says, then go on."""
    key = card_key(card)
    if card.startswith("order-"):
        while not frame.locator(f"#card-{key}.answered").count():
            frame.click(f"#card-{key} .check-order")
    elif card.startswith("myth-"):
        frame.click(f"#card-{key} [data-verdict='{given}']")
    elif card.startswith("basic-"):
        frame.click(f"#card-{key} .reveal")
        frame.click("#self-grade [data-knew='true']")
    else:
        frame.fill(f"#answer-{key}", given)
        frame.press(f"#answer-{key}", "Enter")
    frame.click("#next")


def serve(tab: Any, files: dict[str, bytes]) -> None:
    """Every request to LMS answered from `files` (path -> bytes), else 404."""

    def handle(route: Any) -> None:
        path = route.request.url[len(LMS) :].split("?")[0]
        if path not in files:
            route.fulfill(status=404, body="")
            return
        kind = mimetypes.guess_type(path)[0] or "application/octet-stream"
        route.fulfill(status=200, body=files[path], content_type=kind)

    tab.page.context.route(f"{LMS}/**", handle)


@pytest.mark.parametrize("version", ["1.2", "2004"])
def test_a_quiz_run_reports_its_score_and_each_card_to_the_lms(
    scorm_build: pipeline.Report, browser: Any, version: str
) -> None:
    runtime = RUNTIME[version]
    files = {
        "/scorm-again.js": npm_file(
            "scorm-again", SCORM_AGAIN_VERSION, f"dist/{runtime['file']}"
        ).read_bytes()
    }
    files["/host.html"] = HOST.format(slug=SLUG, **runtime).encode()
    with zipfile.ZipFile(package(scorm_build, version)) as zf:
        files.update((f"/sco/{name}", zf.read(name)) for name in zf.namelist())
    tab = open_tab(browser, "")
    serve(tab, files)
    tab.page.goto(f"{LMS}/host.html")
    frame = tab.page.wait_for_selector("#sco").content_frame()
    frame.locator("article.card:visible").wait_for()
    assert tab.page.evaluate("() => window.calls[0]") == [runtime["start"]]
    for card in SAMPLE_IDS:
        assert frame.locator("article.card:visible").get_attribute("data-card") == card_key(card)
        answer(frame, card, ANSWERS[card][0])
    frame.locator("#summary").wait_for()
    tab.page.evaluate("() => document.getElementById('sco').remove()")  # the learner leaves the SCO
    calls = tab.page.evaluate("() => window.calls")
    held = tab.page.evaluate(f"() => JSON.parse(JSON.stringify(window.{runtime['name']}.cmi))")
    values = {c[1]: c[2] for c in calls if c[0] == runtime["set"]}
    right = sum(ok for _, ok in ANSWERS.values())
    results = [values[f"cmi.interactions.{n}.result"] for n in range(len(SAMPLE_IDS))]
    # (the card's key, as the page names it: an id names the lesson)
    assert [values[f"cmi.interactions.{n}.id"] for n in range(len(SAMPLE_IDS))] == list(
        map(card_key, SAMPLE_IDS)
    )
    # As an LMS would grade each card (lms/question.py): the order puzzle accepts three orders, the shape
    # and the basic card only quizgen's judge can, so they are of no type the LMS knows.
    types = [values[f"cmi.interactions.{n}.type"] for n in range(len(SAMPLE_IDS))]
    if version == "1.2":
        assert results == ["correct" if ANSWERS[c][1] else "wrong" for c in SAMPLE_IDS]
        assert values["cmi.core.score.raw"] == str(round(100 * right / len(SAMPLE_IDS)))  # 57
        assert values["cmi.core.lesson_status"] == "failed"  # under the 80 % it takes
        assert types == [
            "numeric",
            "fill-in",
            "performance",
            "fill-in",
            "true-false",
            "performance",
            "performance",
        ]
        assert values["cmi.core.session_time"].count(":") == 2
        assert held["core"]["score"]["raw"] == "57" and held["core"]["lesson_status"] == "failed"
    else:
        assert results == ["correct" if ANSWERS[c][1] else "incorrect" for c in SAMPLE_IDS]
        assert values["cmi.score.scaled"] == str(round(right / len(SAMPLE_IDS), 4))  # 0.5714
        assert (values["cmi.score.raw"], values["cmi.score.max"]) == (str(right), str(len(SAMPLE_IDS)))
        assert values["cmi.completion_status"] == "completed"
        assert values["cmi.success_status"] == "failed"
        assert types == ["numeric", "fill-in", "other", "fill-in", "true-false", "other", "other"]
        assert values["cmi.session_time"].startswith("PT")
        assert (held["score"]["scaled"], held["success_status"]) == ("0.5714", "failed")
    assert [c[0] for c in calls[-2:]] == [runtime["commit"], runtime["end"]]
    assert tab.errors == []
    close_tab(tab)


def test_a_deck_template_without_the_lms_script_is_an_error_at_the_template(
    tmp_path: Path, pool: Pool
) -> None:
    root = write_project(tmp_path, {"sample.yaml": SAMPLE_DECK})
    (root / "quizgen.toml").write_text('[export]\nscorm = "2004"\n')
    (root / "templates" / "quiz").mkdir(parents=True)
    (root / "templates" / "quiz" / "deck.html").write_text("<!doctype html><title>{{ deck.name }}</title>\n")
    with pytest.raises(TemplateProblem) as info:
        pipeline.build(pipeline.Options(cards_dir=root / "cards", out_dir=root / "build", pool=pool))
    assert str(info.value.message).startswith(
        f"{root}/templates/quiz/deck.html: a deck page in a SCORM package must load the script that reports "
        "to the LMS: keep the packaged deck.html's `{% if lms %}"
    )
    assert not (root / "build" / "scorm").exists()
