"""A stranger's repository beyond its snippets (issue 20, findings 3, 4 and part of 8): its templates, the
text its placeholders fill in, its `match:` patterns, what it prints and its settings. Each test builds a
hostile project with a fake $HOME holding a secret and looks at the effect, not at the wording."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
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


def outputs(root: Path, cache: bool = True) -> str:
    """Every byte the build wrote, as text (the .apkg files are zip archives: their members too); with
    `cache` False, only what it publishes (not the results it keeps in build/.cache)."""
    texts = []
    for path in (root / "build").rglob("*") if (root / "build").exists() else []:
        if not cache and ".cache" in path.relative_to(root / "build").parts:
            continue
        if path.suffix == ".apkg":
            with zipfile.ZipFile(path) as z:
                texts += [z.read(name).decode("latin-1") for name in z.namelist()]
        elif path.is_file():
            texts.append(path.read_bytes().decode("latin-1"))
    return "\n".join(texts)


def attempt(build: Callable[[], object]) -> str | None:
    """The message of a build refused with a user error (never a traceback); None when it was not."""
    try:
        build()
    except QuizgenError as exc:
        return exc.format_message()
    return None


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
    message = attempt(lambda: pipeline.build(options(root)))
    assert not marker.exists()
    assert message is not None and f"{quiz / 'index.html'}:3" in message  # the template's file and line
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
    message = attempt(lambda: pipeline.build(options(root)))
    assert not marker.exists()
    assert message is not None


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
    message = attempt(lambda: pipeline.build(options(root)))
    assert SECRET not in outputs(root)
    assert message is not None


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


# -- finding 4: the text placeholders fill in -------------------------------------------------------


def value_card(code: str, explain: str, cite: str = "") -> str:
    """A deck of one value card whose snippet is `code` and whose explanation is `explain`."""
    card = f"""\
deck: Hostile
cards:
  - id: leak
    kind: value
    ask: "What is `x`?"
    code: |
{textwrap.indent(code, "      ")}
    answer_expr: x
    answer: 4
    explain: {json.dumps(explain)}
"""
    return card + (f"    cite: {cite}\n" if cite else "")


@pytest.mark.parametrize(
    "code, explain, cite",
    [
        pytest.param('x = 4\nprint("![key](" + HOME + "/.ssh/id_rsa)")', "{{output}}", "", id="output"),
        pytest.param("x = 4", "{{p}}", "{p: \"'![k](../../home/.ssh/id_rsa.png)'\"}", id="cite"),
        pytest.param("x = 4", "{{p}}", "{p: \"'![k](../../home/.ssh/id_rsa)'\"}", id="cite-any-file"),
    ],
)
def test_an_image_filled_in_from_outside_the_project_is_refused(
    tmp_path: Path,
    fake_home: Path,
    options: Callable[..., pipeline.Options],
    code: str,
    explain: str,
    cite: str,
) -> None:
    code = code.replace("HOME", repr(str(fake_home)))
    root = write_project(tmp_path / "project", {"deck.yaml": value_card(code, explain, cite)})
    message = attempt(lambda: pipeline.build(options(root)))
    assert SECRET not in outputs(root)
    assert message is not None and "deck.yaml:" in message  # located at the card's field


@pytest.mark.parametrize("via", ["output", "cite"])
def test_tex_filled_in_gets_the_rules_of_written_tex(
    tmp_path: Path, options: Callable[..., pipeline.Options], via: str
) -> None:
    tex = r"\\(\\href{javascript:alert(1)}{x}\\)"
    if via == "output":
        deck = value_card(f'x = 4\nprint("{tex}")', "It prints {{output}}")
    else:
        cite = json.dumps(repr(tex.replace("\\\\", "\\")))
        deck = value_card("x = 4", "See {{tex}}", "{tex: " + cite + "}")
    root = write_project(tmp_path / "project", {"deck.yaml": deck})
    message = attempt(lambda: pipeline.build(options(root)))
    assert "\\href" not in outputs(root, cache=False)
    assert message is not None and "explain" in message and "{{" in message  # the field, the placeholder


def test_a_placeholder_bomb_is_refused_with_bounded_memory(
    tmp_path: Path, options: Callable[..., pipeline.Options]
) -> None:
    """The issue's attack: 150,000 `{{c}}` of 4 KB each (a 750 KB card file) made 575 MB of pages. Run in
    a child whose address space is capped at 1 GB (quizgen and its imports take about 200 MB)."""
    deck = value_card("x = 4", "{{c}}" * 150_000, "{c: \"'k' * 4000\"}")
    root = write_project(tmp_path / "project", {"deck.yaml": deck})
    assert (root / "cards" / "deck.yaml").stat().st_size > 700_000
    script = (
        "import resource, sys\n"
        "resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))\n"
        "from quizgen.cli import main\n"
        "sys.argv = ['quizgen', 'build', '--cards', sys.argv[1], '--out', sys.argv[2], '-j', '1']\n"
        "main()\n"
    )
    env = {**os.environ, "PYTHONPATH": str(Path(pipeline.__file__).parent.parent)}
    done = subprocess.run(
        [sys.executable, "-c", script, str(root / "cards"), str(root / "build")],
        capture_output=True, text=True, timeout=600, env=env,
    )  # fmt: skip
    assert done.returncode == 1, done.stderr[-2000:]
    assert "Traceback" not in done.stderr and "MemoryError" not in done.stderr
    assert "deck.yaml" in done.stderr
    assert len(outputs(root)) < 1_000_000
