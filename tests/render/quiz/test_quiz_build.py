"""build/quiz/ as files: self-contained pages, escaped card text, overridable templates, same bytes twice."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from quizgen import pipeline
from quizgen.cards.model import VerifiedDeck
from quizgen.errors import QuizgenError
from quizgen.render import quiz
from quizgen.render.base import Project
from quizgen.render.stage import Stage
from quizgen.render.view import card_key
from tests.support.quiz import HOSTILE_PAGE, REMOTE_IMAGE, SAMPLE_IDS, SAMPLE_PAGE, as_shown, cards_held


def write_quiz(decks: list[VerifiedDeck], out_dir: Path, templates: Path | None = None) -> None:
    """The quiz renderer alone; `templates` (a folder named templates) overrides the packaged ones."""
    cards_dir = (templates or out_dir / "no-templates").parent / "cards"
    with Stage() as stage:
        quiz.QuizRenderer().render(Project(decks, cards_dir, out_dir), stage)
        stage.commit()


def site(report: pipeline.Report) -> Path:
    return report.root / "build" / "quiz"  # type: ignore[attr-defined]


def embedded(html: str) -> dict:
    match = re.search(r'<script type="application/json" id="quiz-data">(.*?)</script>', html, re.S)
    assert match, "no embedded data"
    data: dict = json.loads(match.group(1))
    return data


def test_build_writes_an_index_a_page_per_deck_and_the_assets(built: pipeline.Report) -> None:
    root = site(built)
    assert root in built.written
    files = sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())
    assert files == sorted(
        [
            "index.html",
            SAMPLE_PAGE,
            HOSTILE_PAGE,
            *(f"assets/{name}" for name in quiz.assets()),
        ]
    )
    index = (root / "index.html").read_text()
    assert 'href="decks/sample-gradients.html"' in index
    data = embedded((root / SAMPLE_PAGE).read_text())
    assert [c["id"] for c in data["cards"]] == [card_key(i) for i in SAMPLE_IDS]  # keys, never ids
    order = next(c for c in data["cards"] if c["kind"] == "order")
    assert order["judge"]["orders"] == [[0, 1, 2, 3], [1, 0, 2, 3], [1, 2, 3, 0]]


def test_pages_ask_the_network_for_nothing(built: pipeline.Report) -> None:
    for page in site(built).rglob("*.html"):
        html = as_shown(page.read_text())
        urls = re.findall(r'(?:src|href)="([^"]*)"', html)
        assert urls, page
        for url in urls:
            if url != REMOTE_IMAGE:  # a card's remote image, shown as a link
                assert not re.match(r"^(?:[a-z]+:|//)", url), f"{page.name}: {url}"
        assert "fetch(" not in html and "@import" not in html
    for asset in (p for p in (site(built) / "assets").rglob("*") if p.is_file()):  # and in kinds/
        text = asset.read_text().replace('"http://www.w3.org/2000/svg"', "")  # a namespace name, not fetched
        assert not re.search(r"https?://|fetch\(|XMLHttpRequest|@import|url\(", text), asset.name


def test_card_text_is_escaped_and_the_data_cannot_end_its_script(built: pipeline.Report) -> None:
    html = (site(built) / HOSTILE_PAGE).read_text()
    # Our scripts (every JS asset: the page has every kind of card) and the data are the only ones;
    # no card text became markup.
    scripts = re.findall(r"<script\b[^>]*>", html)
    sources = sorted(re.findall(r'<script src="\.\./assets/([\w/.-]+\.js)\?v=[0-9a-f]+">', html))
    assert sources == sorted(name for name in quiz.assets() if name.endswith(".js"))
    assert len(scripts) == len(sources) + 2  # the page's data, and the cards' HTML (held as JSON strings)
    cards_html = cards_held(html)  # parses: no card text ended the script early
    assert (
        "&lt;script&gt;window.__pwned = 'ask'&lt;/script&gt; What is" in cards_html[card_key("hostile-value")]
    )
    shown = as_shown(html)
    assert len(re.findall(r"<script\b[^>]*>", shown)) == len(sources) + 1  # no card's HTML holds a script
    assert not re.search(r"<(svg|iframe|style|b)\b", shown)
    # A card's remote Markdown image becomes a link; the Content-Security-Policy would refuse it anyway.
    assert re.findall(r"<img\b[^>]*>", shown) == []
    assert f'<a href="{REMOTE_IMAGE}">{REMOTE_IMAGE}</a>' in shown
    assert "img-src 'self' file: data:;" in html
    assert "javascript:" not in "".join(re.findall(r'href="([^"]*)"', shown))
    data = embedded(html)  # parses: a </script> in an answer could not close the data block
    value = next(c for c in data["cards"] if c["id"] == card_key("hostile-value"))
    assert value["judge"]["answer"]["value"] == "</script><script>window.__pwned = 'answer'</script>"
    assert "&lt;script&gt;window.__pwned = 'ask'&lt;/script&gt; What is" in shown


def test_the_same_cards_build_the_same_bytes(built: pipeline.Report, tmp_path: Path) -> None:
    write_quiz(built.decks, tmp_path / "a")
    write_quiz(built.decks, tmp_path / "b")
    a, b = tmp_path / "a" / "quiz", tmp_path / "b" / "quiz"
    names = sorted(p.relative_to(a) for p in a.rglob("*") if p.is_file())
    assert names == sorted(p.relative_to(b) for p in b.rglob("*") if p.is_file())
    for name in names:
        assert (a / name).read_bytes() == (b / name).read_bytes(), name


def test_a_project_template_extends_the_default(built: pipeline.Report, tmp_path: Path) -> None:
    templates = tmp_path / "templates" / "quiz"
    templates.mkdir(parents=True)
    (templates / "deck.html").write_text(
        '{% extends "default:quiz/deck.html" %}\n'
        "{% block title %}Course: {{ deck.name }}{% endblock %}\n"
        '{% block footer %}<p class="course">{{ deck.cards|length }} cards, {{ site_title }}</p>'
        "{{ super() }}{% endblock %}\n"
    )
    write_quiz(built.decks, tmp_path / "build", tmp_path / "templates")
    page = as_shown((tmp_path / "build" / "quiz" / SAMPLE_PAGE).read_text())
    assert "<title>Course: Sample::Gradients</title>" in page
    assert '<p class="course">7 cards, Quizzes</p>' in page
    assert "Built by quizgen" in page  # super() kept the default footer
    assert f'id="card-{card_key("order-train-step")}"' in page  # everything else is the default
    index = (tmp_path / "build" / "quiz" / "index.html").read_text()
    assert "Course:" not in index


def test_a_project_template_replaces_one_card_kind(built: pipeline.Report, tmp_path: Path) -> None:
    kinds = tmp_path / "templates" / "quiz" / "kinds"
    kinds.mkdir(parents=True)
    (kinds / "myth.html").write_text(
        '{% import "default:quiz/kinds/myth.html" as base %}\n'
        '{% macro ask(card) %}<p class="mine">Fact or myth?</p>{{ base.ask(card) }}{% endmacro %}\n'
        "{% macro answer(card) %}{{ base.answer(card) }}{% endmacro %}\n"
        "{% macro proof(card) %}{{ base.proof(card) }}{% endmacro %}\n"
    )
    write_quiz(built.decks, tmp_path / "build", tmp_path / "templates")
    page = as_shown((tmp_path / "build" / "quiz" / SAMPLE_PAGE).read_text())
    assert page.count('<p class="mine">Fact or myth?</p>') == 1


def test_a_broken_template_is_reported_with_its_line_and_keeps_the_old_quiz(
    built: pipeline.Report, tmp_path: Path
) -> None:
    write_quiz(built.decks, tmp_path / "build")
    templates = tmp_path / "templates" / "quiz"
    templates.mkdir(parents=True)
    (templates / "index.html").write_text(
        '{% extends "default:quiz/index.html" %}\n{% block main %}\n{% endblok %}'
    )
    with pytest.raises(QuizgenError, match=r"index\.html:3: .*endblok"):
        write_quiz(built.decks, tmp_path / "build", tmp_path / "templates")
    (templates / "index.html").write_text(
        '{% extends "default:quiz/index.html" %}\n{% block main %}\n{{ nope }}{% endblock %}'
    )
    with pytest.raises(QuizgenError, match=r"index\.html:3: 'nope' is undefined"):
        write_quiz(built.decks, tmp_path / "build", tmp_path / "templates")
    assert (tmp_path / "build" / "quiz" / SAMPLE_PAGE).exists()
    assert not [p for p in (tmp_path / "build").iterdir() if p.name.startswith(".")]


def test_deck_slugs_are_unique_and_safe() -> None:
    taken: set[str] = set()
    assert quiz.slugify("Sample::Gradients", taken) == "sample-gradients"
    assert quiz.slugify("sample gradients", taken) == "sample-gradients-2"
    assert quiz.slugify("../../etc", taken) == "etc"
    assert quiz.slugify("<>", taken) == "deck"
