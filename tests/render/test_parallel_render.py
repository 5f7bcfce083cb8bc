"""The renderers side by side (render/parallel.py): the same bytes as one after another, and the same
error when the forked part fails."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from quizgen import pipeline
from quizgen.errors import OutputError
from quizgen.project import state
from quizgen.render import parallel
from quizgen.render.anki import AnkiRenderer
from tests.support.projects import SAMPLE_DECK, basic_decks, write_project


def _outputs(root: Path) -> dict[str, bytes]:
    found = {}
    for path in sorted([*(root / "build").rglob("*"), root / "cards" / "quizgen.lock"]):
        if path.is_file() and ".cache" not in path.parts and not path.name.startswith(".quizgen"):
            found[str(path.relative_to(root))] = path.read_bytes()
    return found


def _build(root: Path, jobs: int) -> pipeline.Report:
    options = pipeline.Options(cards_dir=root / "cards", out_dir=root / "build", jobs=jobs, use_cache=False)
    return pipeline.build(options)


@pytest.fixture
def forking(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Every render forks (the threshold is for speed), and each fork is counted."""
    import os

    monkeypatch.setattr(parallel, "MIN_CARDS", 0)
    forks: list[int] = []
    real = os.fork

    def fork() -> int:
        forks.append(1)
        return real()

    monkeypatch.setattr(parallel.os, "fork", fork)
    return forks


def test_side_by_side_builds_the_bytes_one_after_another_builds(
    tmp_path: Path, forking: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    root = write_project(tmp_path, {"sample.yaml": SAMPLE_DECK, **basic_decks(2, 30)})
    serial = _build(root, jobs=1)
    assert forking == []
    one = _outputs(root)
    shutil.rmtree(root / "build")
    shutil.rmtree(state.where(root / "build"))  # from scratch again: the cache too
    (root / "cards" / "quizgen.lock").unlink()
    side_by_side = _build(root, jobs=2)
    assert forking == [1, 1]
    assert _outputs(root) == one
    assert serial.written == side_by_side.written
    assert serial.notes == side_by_side.notes
    assert not list((root / "build").rglob(".quizgen-staged-*"))


def test_a_failure_in_the_forked_part_is_the_error_one_core_gives(
    tmp_path: Path, forking: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    root = write_project(tmp_path, {"sample.yaml": SAMPLE_DECK, **basic_decks(1, 10)})
    _build(root, jobs=2)
    before = _outputs(root)
    shutil.rmtree(state.where(root / "build"), ignore_errors=True)

    def broken(self: AnkiRenderer, project: object, stage: object) -> object:
        raise OSError(28, "No space left on device", str(root / "build" / "anki" / "x.apkg"))

    monkeypatch.setattr(AnkiRenderer, "render", broken)
    (root / "cards" / "part-1.yaml").write_text((root / "cards" / "part-1.yaml").read_text() + "\n")
    with pytest.raises(OutputError) as caught:
        _build(root, jobs=2)
    assert forking == [1, 1, 1, 1]
    assert (
        caught.value.message
        == f"{root}/build/anki/x.apkg: cannot write the anki output: No space left on device"
    )
    assert _outputs(root) == before  # nothing replaced, nothing staged left behind
    assert not list((root / "build").rglob(".quizgen-staged-*"))
