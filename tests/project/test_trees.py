"""Folder trees deeper than Python recurses (quizgen/project/trees.py): a repository's folders and a snippet's
job folder are listed and deleted, never a RecursionError."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from quizgen import pipeline
from quizgen.project import trees
from tests.support.projects import write_project

DEPTH = 1_500  # past Python's recursion limit (1,000): rglob and rmtree raised RecursionError


@pytest.fixture(autouse=True)
def _no_deep_tree_left(tmp_path: Path) -> Iterator[None]:
    """pytest deletes old temporary folders with rmtree, which a deep tree left behind would crash."""
    yield
    for child in list(tmp_path.iterdir()):
        trees.remove(child)


def nest(folder: Path, depth: int = DEPTH) -> Path:
    """`folder/a/a/.../a` made `depth` levels deep (through a descriptor: no long path is ever named)."""
    folder.mkdir(parents=True, exist_ok=True)
    fd = os.open(folder, os.O_RDONLY)
    try:
        for _ in range(depth):
            os.mkdir("a", dir_fd=fd)
            inner = os.open("a", os.O_RDONLY, dir_fd=fd)
            os.close(fd)
            fd = inner
    finally:
        os.close(fd)
    return folder.joinpath(*["a"] * depth)


def test_walk_and_remove_a_tree_deeper_than_python_recurses(tmp_path: Path) -> None:
    bottom = nest(tmp_path / "tree")
    (bottom / "f.txt").write_text("x")
    (tmp_path / "tree" / "link").symlink_to(tmp_path, target_is_directory=True)  # listed, not entered
    found = trees.walk(tmp_path / "tree")
    assert len(found) == DEPTH + 2 and bottom / "f.txt" in found
    trees.remove(tmp_path / "tree")
    assert not (tmp_path / "tree").exists() and tmp_path.is_dir()


DECK = "deck: {name}\ncards:\n  - id: {id}\n    kind: basic\n    front: q\n    back: a\n"
DEEP_SNIPPET = """\
deck: Deep
cards:
  - id: nests
    kind: value
    ask: q
    code: |
      import os
      fd = os.open(".", os.O_RDONLY)
      for _ in range(1500):
          os.mkdir("a", dir_fd=fd)
          fd = os.open("a", os.O_RDONLY, dir_fd=fd)
      x = 1
    answer_expr: x
    answer: 1
  - id: after
    kind: value
    ask: q
    code: x = 2
    answer_expr: x
    answer: 2
"""


def test_a_repository_nested_deeper_than_python_recurses_builds(
    tmp_path: Path, options: Callable[..., pipeline.Options]
) -> None:
    root = write_project(tmp_path, {"top.yaml": DECK.format(name="Top", id="top")})
    (nest(root / "cards" / "deep") / "deck.yaml").write_text(DECK.format(name="Deep", id="deep"))
    nest(root / "build" / "quiz")  # a committed output folder, replaced by the build
    report = pipeline.build(options(root))
    assert sorted(d.deck.name for d in report.decks) == ["Deep", "Top"]
    assert sorted(p.name for p in (root / "build" / "quiz").iterdir()) == ["assets", "decks", "index.html"]


def test_a_snippet_nesting_folders_deeper_than_python_recurses_is_one_cards_business(
    tmp_path: Path, options: Callable[..., pipeline.Options]
) -> None:
    # Its job folder was deleted by rmtree, whose RecursionError killed the pool: "the quizgen worker
    # process died" for the whole build.
    root = write_project(tmp_path, {"deep.yaml": DEEP_SNIPPET})
    report = pipeline.check(options(root, pool=None, jobs=1))  # a pool of its own: it must survive
    assert [vc.answer["display"] for vc in report.decks[0].cards if vc.answer] == ["1", "2"]
