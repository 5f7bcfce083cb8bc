"""The README's tutorial stays true: its YAML blocks, written into a project `quizgen init` made, build;
the wrong answer it declares fails with the error it shows; the feedback it quotes is the build's; the
files and sections it names exist.

Blocks are marked by an HTML comment on the line before them:
`<!-- tutorial: cards/x.yaml -->` appends the fenced block to that file; `<!-- tutorial: mistake in
cards/x.yaml -->` builds with the fenced `key: value` line in place of the file's last line with that key;
`<!-- tutorial: output -->` is what that build prints; `<!-- tutorial: feedback of ID -->` is a quoted
line the quiz shows for a mistake in order card ID."""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from quizgen import cli as cli_module
from quizgen.cli import cli
from quizgen.execution.pool import Pool
from quizgen.render.view import card_key
from tests.support.paths import REPO

README = REPO / "README.md"
HEADING = "## Your first deck in five minutes"
STEP = re.compile(
    r"<!-- tutorial: (?P<what>.+?) -->\n(?:```\w*\n(?P<fenced>.*?)```|> (?P<quoted>[^\n]*))", re.S
)
QUIZ_DATA = re.compile(r'<script type="application/json" id="quiz-data">(.*?)</script>', re.S)


@dataclasses.dataclass
class Step:
    what: str
    text: str


def tutorial() -> str:
    """The tutorial's section of the README."""
    text = README.read_text(encoding="utf-8")
    start = text.index(HEADING)
    end = text.find("\n## ", start + len(HEADING))
    return text[start : end if end != -1 else len(text)]


def steps(section: str) -> list[Step]:
    found = STEP.finditer(section)
    return [Step(m["what"], m["fenced"] if m["fenced"] is not None else m["quoted"]) for m in found]


def with_mistake(source: str, line: str) -> str:
    """`source` with its last line of `line`'s key replaced by `line` (its indentation kept in the README)."""
    key = line.strip().split(":", 1)[0] + ":"
    lines = source.split("\n")
    at = max(i for i, old in enumerate(lines) if old.strip().startswith(key))
    lines[at] = line.rstrip("\n")
    return "\n".join(lines)


def slug(heading: str) -> str:
    """A heading's anchor as GitHub makes it."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def quiz_data(out: Path) -> dict[str, dict]:
    """Every card's judge data in the built quiz, by card key (the page never holds a card's id)."""
    found = {}
    for page in (out / "quiz" / "decks").glob("*.html"):
        match = QUIZ_DATA.search(page.read_text())
        assert match, page
        found.update({card["id"]: card["judge"] for card in json.loads(match.group(1))["cards"]})
    return found


@pytest.fixture
def warm_cli(monkeypatch: pytest.MonkeyPatch, pool: Pool) -> None:
    """The CLI's own options, with the session's warm worker pool (torch is imported once per run)."""
    make = cli_module.run_options
    monkeypatch.setattr(cli_module, "run_options", lambda **kw: dataclasses.replace(make(**kw), pool=pool))


def test_the_tutorial_is_marked_up() -> None:
    kinds = {"cards": 0, "mistake": 0, "output": 0, "feedback": 0}
    for step in steps(tutorial()):
        kinds["cards" if step.what.startswith("cards/") else step.what.split()[0]] += 1
    assert kinds["mistake"] == kinds["output"] == 1 and kinds["feedback"] >= 1
    assert kinds["cards"] >= 5  # the deck and a card of each kind


def test_the_tutorial_builds_as_it_says(
    runner: CliRunner, tmp_path: Path, in_dir: Callable[[Path], None], warm_cli: None
) -> None:
    in_dir(tmp_path)
    assert runner.invoke(cli, ["init"]).exit_code == 0
    written: dict[str, str] = {}
    printed: list[str] = []
    feedback: dict[str, list[str]] = {}
    for step in steps(tutorial()):
        if step.what.startswith("cards/"):
            written[step.what] = written.get(step.what, "") + step.text
            (tmp_path / step.what).write_text(written[step.what], encoding="utf-8")
        elif step.what.startswith("mistake in "):
            path = step.what.removeprefix("mistake in ")
            (tmp_path / path).write_text(with_mistake(written[path], step.text), encoding="utf-8")
            failed = runner.invoke(cli, ["build"])
            assert failed.exit_code == 1, failed.output
            printed.append(failed.output.replace(f"{tmp_path}/", ""))
            (tmp_path / path).write_text(written[path], encoding="utf-8")  # the tutorial puts it back
        elif step.what == "output":
            assert printed, "an output shown before any build"
            assert printed.pop().strip() == step.text.strip()
        elif step.what.startswith("feedback of "):
            feedback.setdefault(step.what.removeprefix("feedback of "), []).append(step.text.strip())
        else:
            pytest.fail(f"unknown tutorial mark {step.what!r}")

    built = runner.invoke(cli, ["build"])
    assert built.exit_code == 0, built.output
    assert "warning" not in built.output, built.output
    judges = quiz_data(tmp_path / "build")
    for card, sentences in feedback.items():
        for sentence in sentences:
            assert sentence in judges[card_key(card)]["feedback"].values()
    # "Learners pick between `0.001` and `0.01`": shown without float noise.
    assert sorted(c["text"] for c in judges[card_key("steplr-two-epochs")]["choices"]) == ["0.001", "0.01"]
    # Every output the tutorial names is there.
    for named in re.findall(r"`((?:build|cards)/[^`*]+)`", tutorial()):
        assert (tmp_path / named).exists(), named


def anchors(page: Path) -> set[str]:
    """The anchors of a Markdown page's headings, as GitHub makes them."""
    found, fenced = set(), False
    for line in page.read_text(encoding="utf-8").splitlines():
        fenced ^= line.lstrip().startswith("```")
        if not fenced and re.match(r"#{1,6} ", line):
            found.add(slug(line.lstrip("#")))
    return found


def test_the_tutorial_links_to_sections_that_exist() -> None:
    # `(#x)` is a section of the README; `(docs/cards.md#x)` one of a page under docs/ (the site checks
    # its anchors too, as mkdocs makes them: tests/e2e/test_docs_site.py).
    targets = re.findall(r"\]\(([^)#]*)#([^)]+)\)", tutorial())
    assert targets
    for page, anchor in targets:
        if not anchor.startswith("card:"):
            assert anchor in anchors(README.parent / page if page else README), (page, anchor)
