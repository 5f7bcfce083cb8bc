"""Builds that are killed or run twice at once: every output stays whole, the next build finishes what
a killed one started, and the cache stays usable (render/stage.py: journal, recover, build_lock)."""

from __future__ import annotations

import json
import random
import shutil
import signal
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest

from quizgen.render import stage as staging
from tests.support.projects import SAMPLE_DECK, write_project

# -- the commit, interrupted after every step ------------------------------------------------------


def _outputs(root: Path, version: str) -> None:
    (root / "out").mkdir(exist_ok=True)
    (root / "out" / "cards.json").write_text(version)
    (root / "out" / "quiz").mkdir(exist_ok=True)
    (root / "out" / "quiz" / "index.html").write_text(version)
    (root / "cards").mkdir(exist_ok=True)
    (root / "cards" / "quizgen.lock").write_text(version)


def _state(root: Path) -> tuple[str, str, str]:
    return tuple(  # type: ignore[return-value]
        (root / p).read_text() for p in ("out/cards.json", "out/quiz/index.html", "cards/quizgen.lock")
    )


def _leftovers(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.name.startswith(".quizgen"))


@pytest.mark.parametrize("crash_after", range(6))
def test_a_commit_killed_after_any_step_is_finished_by_the_next_build(
    tmp_path: Path, crash_after: int
) -> None:
    _outputs(tmp_path, "old")
    journal = tmp_path / "state" / staging.JOURNAL  # as in the user's cache directory (project/state.py)
    stage = staging.Stage(journal)
    stage.file(tmp_path / "out" / "cards.json").write_text("new")
    stage.file(tmp_path / "cards" / "quizgen.lock").write_text("new")
    folder = stage.folder(tmp_path / "out" / "quiz")
    (folder / "index.html").write_text("new")
    steps = stage.moves()
    assert len(steps) == 5  # journal, three moves, journal removed
    for step in steps[:crash_after]:
        step()
    # Killed here: whatever the state, every output is whole, old or new ...
    assert all(v in ("old", "new") for v in _state(tmp_path))
    staging.recover(journal, tmp_path / "out", tmp_path / "cards")
    # ... and after recovery all old (the journal was not written) or all new.
    assert _state(tmp_path) == (("old",) * 3 if crash_after == 0 else ("new",) * 3)
    assert _leftovers(tmp_path) == []


def test_a_torn_journal_means_no_move_began(tmp_path: Path) -> None:
    _outputs(tmp_path, "old")
    journal = tmp_path / "state" / staging.JOURNAL
    journal.parent.mkdir()
    journal.with_name(journal.name + ".tmp").write_text('{"moves": [{"tmp"')
    staging.recover(journal, tmp_path / "out", tmp_path / "cards")
    assert _state(tmp_path) == ("old",) * 3 and _leftovers(tmp_path) == []


def test_a_second_build_waits_for_the_first(tmp_path: Path) -> None:
    told: list[str] = []
    with staging.build_lock(tmp_path):
        child = subprocess.Popen(
            [sys.executable, "-c", "import sys; from pathlib import Path; from quizgen.render import stage\n"
             "with stage.build_lock(Path(sys.argv[1]), lambda: print('waiting', flush=True)):\n"
             "    print('got it', flush=True)", str(tmp_path)],
            stdout=subprocess.PIPE, text=True,
        )  # fmt: skip
        assert child.stdout is not None
        told.append(child.stdout.readline().strip())
        time.sleep(0.3)
        assert child.poll() is None  # still waiting while the lock is held
    told.append(child.stdout.readline().strip())
    assert child.wait(timeout=10) == 0
    assert told == ["waiting", "got it"]


# -- real builds, killed at random moments and run concurrently ------------------------------------


def _build(root: Path, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "quizgen", "build", "-j", "1", *args],
        cwd=root,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def _snapshot(root: Path) -> dict[str, bytes]:
    """Each output as a whole: a torn file, a half-written folder or a broken package fails here."""
    build = root / "build"
    files = {
        "cards.json": (build / "cards.json").read_bytes(),
        "lock": (root / "cards" / "quizgen.lock").read_bytes(),
    }
    json.loads(files["cards.json"])
    files["quiz"] = b"".join(p.read_bytes() for p in sorted((build / "quiz").rglob("*")) if p.is_file())
    assert (build / "quiz" / "index.html").is_file()
    for apkg in sorted((build / "anki").glob("*.apkg")):
        with zipfile.ZipFile(apkg) as z:
            assert z.testzip() is None
        files[apkg.name] = apkg.read_bytes()
    return files


@pytest.mark.slow
def test_builds_killed_at_random_moments_leave_whole_outputs_and_a_usable_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")  # the same sources build the same bytes
    root = write_project(tmp_path / "a", {"sample.yaml": SAMPLE_DECK})
    assert _build(root).wait() == 0
    before = _snapshot(root)
    twin = tmp_path / "b"
    shutil.copytree(root, twin)
    for project in (root, twin):
        deck = project / "cards" / "sample.yaml"
        edited = (
            deck.read_text().replace("(1.25 * w**2)", "(2.25 * w**2)").replace("answer: 8.0", "answer: 12.0")
        )
        deck.write_text(edited)
    start = time.monotonic()
    assert _build(twin).wait() == 0
    duration = time.monotonic() - start
    after = _snapshot(twin)
    assert after["cards.json"] != before["cards.json"]
    rng = random.Random(9)
    for delay in sorted(rng.uniform(0.05, duration * 1.2) for _ in range(8)):
        build = _build(root)
        time.sleep(delay)
        build.send_signal(signal.SIGKILL)
        build.wait()
        for name, content in _snapshot(root).items():  # each output whole: the one before or the new one
            assert content in (before[name], after[name]), (name, delay)
    final = _build(root)
    output = final.communicate()[0]
    assert final.returncode == 0, output
    assert _snapshot(root) == after
    assert [p.name for p in (root / "build").iterdir() if p.name.startswith(staging.STAGED)] == []


@pytest.mark.slow
def test_two_builds_at_once_both_succeed_and_agree(tmp_path: Path) -> None:
    root = write_project(tmp_path, {"sample.yaml": SAMPLE_DECK})
    first, second = _build(root), _build(root)
    out1, out2 = first.communicate()[0], second.communicate()[0]
    assert first.returncode == 0, out1
    assert second.returncode == 0, out2
    assert "waiting for another build of this project to finish" in out1 + out2
    snapshot = _snapshot(root)
    assert _build(root).wait() == 0
    assert _snapshot(root)["cards.json"] == snapshot["cards.json"]


def test_a_failure_in_the_last_renderer_leaves_every_output_and_the_lock_as_they_were(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from quizgen import pipeline
    from quizgen.errors import QuizgenError

    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    root = write_project(tmp_path, {"sample.yaml": SAMPLE_DECK})
    options = pipeline.Options(cards_dir=root / "cards", out_dir=root / "build", jobs=1)
    pipeline.build(options)
    before = _snapshot(root)
    deck = root / "cards" / "sample.yaml"  # a change every output would show ...
    deck.write_text(
        deck.read_text().replace("(1.25 * w**2)", "(2.25 * w**2)").replace("answer: 8.0", "answer: 12.0")
    )
    broken = root / "templates" / "quiz" / "deck.html"  # ... and the quiz, built last, fails
    broken.parent.mkdir(parents=True)
    broken.write_text(
        '{% extends "default:quiz/deck.html" %}{% block title %}{{ no_such_variable }}{% endblock %}'
    )
    with pytest.raises(QuizgenError) as info:
        pipeline.build(options)
    assert "no_such_variable" in str(info.value)
    assert _snapshot(root) == before
    assert [p.name for p in (root / "build").iterdir() if p.name.startswith(".quizgen-staged")] == []
