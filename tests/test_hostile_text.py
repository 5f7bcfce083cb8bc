"""A stranger's repository beyond its snippets (issue 20, findings 3, 4 and part of 8): its templates, the
text its placeholders fill in, its `match:` patterns, what it prints and its settings. Each test builds a
hostile project with a fake $HOME holding a secret and looks at the effect, not at the wording."""

from __future__ import annotations

import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from quizgen import pipeline
from quizgen.errors import QuizgenError

from .conftest import write_project

SECRET = "s3cr3t-k3y-7f1c"
BASIC = """\
deck: Hostile
cards:
  - id: plain
    kind: basic
    front: "What is a leaf tensor?"
    back: "One made by the user, not by an operation."
"""


@pytest.fixture
def fake_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A $HOME (and cache) holding a secret key, beside the project, never inside it."""
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa.png").write_text(SECRET)  # an image's suffix: only its place refuses it
    (home / ".ssh" / "id_rsa").write_text(SECRET)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / ".cache"))
    yield home


def outputs(root: Path) -> str:
    """Every byte the build wrote, as text (the .apkg files are zip archives: their members too)."""
    texts = []
    for path in (root / "build").rglob("*") if (root / "build").exists() else []:
        if path.suffix == ".apkg":
            with zipfile.ZipFile(path) as z:
                texts += [z.read(name).decode("latin-1") for name in z.namelist()]
        elif path.is_file():
            texts.append(path.read_bytes().decode("latin-1"))
    return "\n".join(texts)


def refused(build: Callable[[], object]) -> str:
    """The message of a build that must fail with a user error (never a traceback)."""
    with pytest.raises(QuizgenError) as caught:
        build()
    return caught.value.format_message()


# -- finding 3: project templates ------------------------------------------------------------------


def test_a_template_cannot_run_a_command(
    tmp_path: Path, fake_home: Path, options: Callable[..., pipeline.Options]
) -> None:
    root = write_project(tmp_path / "project", {"deck.yaml": BASIC})
    marker = fake_home / "pwned"
    quiz = root / "templates" / "quiz"
    quiz.mkdir(parents=True)
    (quiz / "index.html").write_text(
        '{% extends "default:quiz/index.html" %}\n{% block main %}\n'
        f"{{{{ lipsum.__globals__['os'].popen('touch {marker}').read() }}}}\n{{% endblock %}}\n"
    )
    message = refused(lambda: pipeline.build(options(root)))
    assert not marker.exists()
    assert f"{quiz / 'index.html'}:3" in message  # the template's file and line
    assert not (root / "build" / "quiz").exists()


def test_a_template_cannot_reach_python_through_the_data_it_gets(
    tmp_path: Path, fake_home: Path, options: Callable[..., pipeline.Options]
) -> None:
    root = write_project(tmp_path / "project", {"deck.yaml": BASIC})
    marker = fake_home / "pwned"
    quiz = root / "templates" / "quiz"
    quiz.mkdir(parents=True)
    reach = "decks[0].__class__.__init__.__globals__['__builtins__']['__import__']('os')"
    (quiz / "deck.html").write_text(f"{{{{ {reach}.system('touch {marker}') }}}}\n")
    refused(lambda: pipeline.build(options(root)))
    assert not marker.exists()


@pytest.mark.parametrize("link", ["file", "folder", "templates"])
def test_a_template_symlinked_from_outside_the_project_is_not_read(
    tmp_path: Path, fake_home: Path, options: Callable[..., pipeline.Options], link: str
) -> None:
    root = write_project(tmp_path / "project", {"deck.yaml": BASIC})
    outside = fake_home / "notes"
    (outside / "quiz").mkdir(parents=True)
    (outside / "quiz" / "index.html").write_text(f"<p>{SECRET}</p>\n")
    if link == "templates":  # the whole templates folder
        (root / "templates").symlink_to(outside, target_is_directory=True)
    elif link == "folder":  # templates/quiz
        (root / "templates").mkdir()
        (root / "templates" / "quiz").symlink_to(outside / "quiz", target_is_directory=True)
    else:
        (root / "templates" / "quiz").mkdir(parents=True)
        (root / "templates" / "quiz" / "index.html").symlink_to(outside / "quiz" / "index.html")
    refused(lambda: pipeline.build(options(root)))
    assert SECRET not in outputs(root)


def test_a_template_symlinked_inside_the_project_and_extends_still_work(
    tmp_path: Path, options: Callable[..., pipeline.Options]
) -> None:
    root = write_project(tmp_path / "project", {"deck.yaml": BASIC})
    quiz = root / "templates" / "quiz"
    quiz.mkdir(parents=True)
    (root / "templates" / "shared.html").write_text(
        '{% extends "default:quiz/index.html" %}\n{% block title %}Course index{% endblock %}\n'
    )
    (quiz / "index.html").symlink_to(root / "templates" / "shared.html")
    pipeline.build(options(root))
    assert "<title>Course index</title>" in (root / "build" / "quiz" / "index.html").read_text()
