"""The parent trusts no byte a repository or a snippet hands it (issue 28, finding 8): a FIFO a snippet
leaves for the stack dump (worker/stuck.py), a lock of 60 MB (project/lockfile.py), a template asking for
gigabytes (render/bounded.py). Each hostile project is built as a user builds a clone, by a `quizgen
build` process under a fake $HOME, its peak memory measured by the process that waited for it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import quizgen
from quizgen import pipeline
from quizgen.constants import MAX_LOCK_BYTES
from quizgen.errors import QuizgenError
from quizgen.render import bounded
from tests.support.projects import write_project

GB = 1 << 30
SOURCES = str(Path(quizgen.__file__).parents[1])  # the quizgen under test, from whatever folder it runs in

# Runs `quizgen build` and says how it ended and the most memory it or a process it waited for held
# (RUSAGE_CHILDREN of a parent with that one child: earlier tests' children do not count).
_MEASURED = """
import json, os, resource, signal, subprocess, sys
limit, command = float(sys.argv[1]), sys.argv[2:]
child = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
try:
    output, code = child.communicate(timeout=limit)[0], child.returncode
except subprocess.TimeoutExpired:
    os.killpg(child.pid, signal.SIGKILL)
    output, code = child.communicate()[0], None
rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024
print(json.dumps({"code": code, "output": output.decode("utf-8", "replace"), "rss": rss}))
"""


def measured_build(root: Path, home: Path, *args: str, limit: float = 120) -> tuple[int | None, str, int]:
    """`quizgen build` run in `root`: (its exit code, None when still running after `limit` seconds;
    its output; the peak resident memory of it and its children, in bytes)."""
    env = {k: v for k, v in os.environ.items() if k != "QUIZGEN_CACHE_DIR"}
    env.update(HOME=str(home), XDG_CACHE_HOME=str(home / ".cache"), PYTHONPATH=SOURCES)
    command = [sys.executable, "-m", "quizgen", "build", "-j", "1", *args]
    done = subprocess.run(
        [sys.executable, "-c", _MEASURED, str(limit), *command],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=limit + 60,
    )
    ended = json.loads(done.stdout)
    return ended["code"], ended["output"], ended["rss"]


@pytest.fixture
def home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    return home


BASIC = """\
deck: Plain
cards:
  - id: plain-one
    kind: basic
    front: A question?
    back: An answer.
"""


def test_a_fifo_left_for_the_stack_dump_does_not_hold_the_timeout(tmp_path: Path, home: Path) -> None:
    # The snippet's worker folder (the parent of its cwd) holds the dump its stopper reads at the timeout.
    deck = """\
    deck: Fifo
    cards:
      - id: fifo-dump
        kind: value
        ask: "What?"
        code: |
          import os, time
          here = os.getcwd()
          while not os.path.exists(os.path.join(here, "stack.txt")):  # in a folder above the job's
              here = os.path.dirname(here)
          dump = os.path.join(here, "stack.txt")
          os.unlink(dump)
          os.mkfifo(dump)
          time.sleep(600)
        answer_expr: 1
        answer: 1
    """
    root = write_project(tmp_path / "repo", {"deck.yaml": deck})
    # --sandbox=off: in the sandbox Landlock refuses the snippet the worker's folder (PermissionError);
    # the stopper must not trust what it finds there either way.
    code, output, _ = measured_build(root, home, "--timeout", "2", "--sandbox", "off", limit=60)
    assert code == 1, output
    assert "card 'fifo-dump' -> code: the snippet did not finish within 2 s (timeout)" in output


def test_a_result_record_of_700_mb_is_refused_before_it_is_parsed(tmp_path: Path, home: Path) -> None:
    """A snippet streams a giant record into every pipe it can write (its job's result pipe): it is
    read up to its bound, never parsed, and the card is told; quizgen stays small."""
    deck = """\
    deck: Big
    cards:
      - id: big-record
        kind: basic
        front: f
        back: b
        code: |
          import fcntl, os, stat
          block = b"x" * (1 << 20)
          for fd in range(3, 64):
              try:
                  if not stat.S_ISFIFO(os.fstat(fd).st_mode) or fcntl.fcntl(fd, fcntl.F_GETFL) & 3 != 1:
                      continue
                  os.write(fd, b'{"ok": true, "output": "')
                  for _ in range(700):
                      os.write(fd, block)
                  os.write(fd, b'"}\\n')
              except OSError:
                  pass
    """
    root = write_project(tmp_path / "repo", {"deck.yaml": textwrap.dedent(deck)})
    code, output, rss = measured_build(root, home, "--no-cache")
    assert code == 1, output
    assert "card 'big-record' -> code: its result is larger than 16 MiB" in output, output
    assert rss < GB, f"{rss / GB:.2f} GB"


def test_a_lock_of_60_mb_is_refused_before_it_is_parsed(tmp_path: Path, home: Path) -> None:
    root = write_project(tmp_path / "repo", {"deck.yaml": BASIC})
    # Small records, many of them: 58 MB that git ships in a few MB (it took 1.95 GB and 27 s).
    removed = {f"{i:x}": {"deck": "D", "removed": 1} for i in range(1_750_000)}
    lock = json.dumps({"format": 1, "removed": removed}, separators=(",", ":"))
    (root / "cards" / "quizgen.lock").write_text(lock)
    code, output, rss = measured_build(root, home)
    assert rss < GB
    assert code == 1, output
    assert output == (
        f"Error: cards/quizgen.lock: not a quizgen lock file ({len(lock):,} bytes, past the "
        f"{MAX_LOCK_BYTES:,} allowed). Restore it from version control, or delete it: Anki then sees "
        "every note as changed once.\n"
    )
    assert (root / "cards" / "quizgen.lock").stat().st_size == len(lock)  # kept for the user to judge


@pytest.mark.parametrize("kind", ["fifo", "symlink"])
def test_a_lock_that_is_not_a_regular_file_is_refused_unread(tmp_path: Path, kind: str) -> None:
    root = write_project(tmp_path / "repo", {"deck.yaml": BASIC})
    lock = root / "cards" / "quizgen.lock"
    if kind == "fifo":
        os.mkfifo(lock)  # opening it would wait for a writer
    else:
        (root / "cards" / "other.json").write_text('{"format": 1}')
        lock.symlink_to("other.json")
    options = pipeline.Options(cards_dir=root / "cards", out_dir=root / "build", jobs=1, use_cache=False)
    with pytest.raises(QuizgenError) as caught:
        pipeline.build(options)
    said = "not a regular file" if kind == "fifo" else "a symlink: not followed"
    assert caught.value.message.startswith(f"{lock}: not a quizgen lock file ({said}). Restore it")


def _templated(tmp_path: Path, body: str) -> Path:
    root = write_project(tmp_path / "repo", {"deck.yaml": BASIC})
    (root / "templates" / "quiz").mkdir(parents=True)
    page = '{% extends "default:quiz/index.html" %}\n{% block title %}' + body + "{% endblock %}\n"
    (root / "templates" / "quiz" / "index.html").write_text(page)
    return root


def test_a_template_asking_for_gigabytes_is_stopped_and_located(tmp_path: Path, home: Path) -> None:
    root = _templated(tmp_path, "{{ ('x' * 1500000000)|length }}")  # it took 1.46 GB
    code, output, rss = measured_build(root, home)
    assert rss < GB
    assert code == 1, output
    assert output == (
        "Error: templates/quiz/index.html:2: the template went past a quiz's bounds (512 MiB of memory "
        "and 120 s of CPU time: far past what any page needs)\n"
    )
    assert not (root / "build" / "quiz").exists()


def test_a_template_looping_for_hours_is_stopped_and_located(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    loops = "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}"
    root = _templated(tmp_path, textwrap.dedent(loops))
    monkeypatch.setattr(bounded, "SECONDS", 1)  # (the child is forked: it keeps the patch)
    options = pipeline.Options(cards_dir=root / "cards", out_dir=root / "build", jobs=1, use_cache=False)
    with pytest.raises(QuizgenError) as caught:
        pipeline.build(options)
    assert caught.value.message.startswith(f"{root}/templates/quiz/index.html:2: the template went past")


def test_an_image_past_its_bound_is_a_located_error_unread(tmp_path: Path) -> None:
    deck = BASIC.replace("front: A question?", "front: 'See ![p](p.png)'")
    root = write_project(tmp_path / "repo", {"deck.yaml": deck})
    with open(root / "cards" / "p.png", "wb") as f:  # sparse: 20 MiB on paper, nothing on disk
        f.write(b"\x89PNG\r\n\x1a\n")
        f.truncate(20 << 20)
    options = pipeline.Options(cards_dir=root / "cards", out_dir=root / "build", jobs=1, use_cache=False)
    with pytest.raises(QuizgenError) as caught:
        pipeline.build(options)
    assert caught.value.message == (
        f"{root}/cards/deck.yaml:5:12: card 'plain-one' -> front: image 'p.png' is not an image of at most "
        "16,777,216 bytes (it has 20,971,520)\n1 card error"
    )
