"""Same cards, settings, lock and quizgen: the same bytes in cards.json, every .apkg and the quiz, whichever
torch versions the building machine has provisioned, wherever the project lives, in any time zone and
locale, with any -j. Where the answers came from is the build's own business (its summary and
build/build-info.json), never the learner's.

Each build here is a `quizgen build` process of its own (its time zone and locale are the process's), with
a cache folder of its own: nothing one build ran is handed to the other.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
from collections.abc import Callable
from pathlib import Path

import pytest

from quizgen import pipeline
from quizgen.torch_versions import installed
from quizgen.torch_versions.installed import version as torch_version
from tests.support.paths import REPO
from tests.support.projects import SAMPLE_DECK, write_project
from tests.support.torch_matrix import REAL_TORCHES, real_old_python

INSTALLED = installed.release()
EXTRA = "2.12.0"  # a version of the matrix that only the author's machine has

MATRIX_DECK = """\
deck: Matrix
setup: |
  import torch
cards:
  - id: ones-grad
    kind: value
    ask: "What is `w.grad` after `w.sum().backward()`?"
    code: |
      w = torch.ones(2, requires_grad=True)
      w.sum().backward()
    answer_expr: w.grad
    answer: "tensor([1., 1.])"
    explain: "Each element gets 1: `{{answer}}`."
"""


def fake_torch(envs: Path, version: str) -> Path:
    """An environment provisioned for `version` (as `quizgen torch add` leaves one) whose torch is the one
    installed here, under another version number and a local tag: the author's extra torch."""
    folder = envs / version
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(folder)], check=True)
    site = Path(sysconfig.get_path("purelib", vars={"base": str(folder), "platbase": str(folder)}))
    (site / "installed-torch.pth").write_text(sysconfig.get_path("purelib") + "\n", encoding="utf-8")
    info = site / f"torch-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: torch\nVersion: {version}+cu999\n\n")
    return folder


def build(root: Path, state: Path, envs: Path, tz: str, lang: str, jobs: int, *args: str) -> str:
    """`quizgen build` in `root` as its own process, with this time zone, locale and -j; its output."""
    env = {
        **os.environ,
        "TZ": tz,
        "LANG": lang,
        "LC_ALL": lang,
        "QUIZGEN_CACHE_DIR": str(state),
        "QUIZGEN_TORCH_DIR": str(envs),
    }
    env.pop("SOURCE_DATE_EPOCH", None)
    command = [sys.executable, "-m", "quizgen", "build", "-j", str(jobs), *args]
    done = subprocess.run(command, cwd=root, env=env, capture_output=True, text=True, timeout=1200)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout + done.stderr


def outputs(root: Path) -> dict[str, bytes]:
    """Every file the build wrote, by path in the output folder (build-info.json aside: it is the build's
    account of where its answers came from)."""
    out = root / "build"
    return {
        p.relative_to(out).as_posix(): p.read_bytes()
        for p in sorted(out.rglob("*"))
        if p.is_file() and p.name != "build-info.json"
    }


def clone(source: Path, dest: Path) -> Path:
    """What a fresh clone of the project holds: its cards (with the lock) and settings, nothing built."""
    shutil.copytree(source / "cards", dest / "cards")
    shutil.copy(source / "quizgen.toml", dest / "quizgen.toml")
    return dest


def from_lock(root: Path) -> dict[str, list[str]]:
    info = json.loads((root / "build" / "build-info.json").read_text(encoding="utf-8"))
    return {version: entry["from lock"] for version, entry in info["torch"].items()}


def test_the_same_cards_and_lock_build_the_same_bytes_on_any_machine(tmp_path: Path) -> None:
    author = write_project(tmp_path / "author", {"sample.yaml": SAMPLE_DECK, "matrix.yaml": MATRIX_DECK})
    (author / "quizgen.toml").write_text(f'torch = ["{EXTRA}", "{INSTALLED}"]\n', encoding="utf-8")
    envs = tmp_path / "torches"
    fake_torch(envs, EXTRA)
    said = build(author, tmp_path / "state-author", envs, "UTC", "C.UTF-8", 2)
    assert f"torch {EXTRA}: 8 executed, 0 from cache" in said
    made = outputs(author)
    assert {"cards.json", "anki/Matrix.apkg", "quiz/index.html", "quiz/decks/matrix.html"} <= set(made)
    lock = (author / "cards" / "quizgen.lock").read_bytes()
    assert f'"{EXTRA}": {{'.encode() in lock  # its answers on the extra torch, recorded
    tagged = [v.encode() for v in (torch_version(), f"{EXTRA}+cu999") if "+" in v]  # wheels' local tags
    assert not [name for name, data in made.items() if any(tag in data for tag in tagged)]
    assert not any(tag in lock for tag in tagged)

    # A clone elsewhere, another zone and locale, one job, and the extra torch not provisioned.
    other = clone(author, tmp_path / "elsewhere" / "a" / "much" / "deeper" / "clone")
    elsewhere = (tmp_path / "state-clone", tmp_path / "no-torches")
    said = build(other, *elsewhere, "Pacific/Chatham", "tr_TR.UTF-8", 1)
    assert f"note: torch {EXTRA} not provisioned: using the answers recorded in quizgen.lock" in said
    assert f"torch {EXTRA}: 8 from quizgen.lock" in said
    assert "updated" not in said  # the lock as the clone has it: `git status` stays clean
    assert (other / "cards" / "quizgen.lock").read_bytes() == lock
    assert outputs(other) == made
    # Where the answers came from is said in the build's own account, and differs.
    assert from_lock(author) == {EXTRA: [], INSTALLED: []}
    every = ["ones-grad", *(card.split(": ")[1] for card in SAMPLE_DECK.splitlines() if "- id: " in card)]
    assert from_lock(other) == {EXTRA: every, INSTALLED: []}


@pytest.mark.slow
def test_the_shipped_deck_builds_the_same_bytes_with_and_without_torch_1_13(tmp_path: Path) -> None:
    """A fresh clone without torch 1.13.1 builds what the author's machine with it builds, and leaves the
    committed lock as it is."""
    real_old_python()  # (provisioned where REAL_TORCHES is: the build below looks there)
    committed = (REPO / "cards" / "quizgen.lock").read_bytes()
    author = clone(REPO, tmp_path / "author")
    said = build(author, tmp_path / "state-author", REAL_TORCHES, "UTC", "C.UTF-8", 2, "--matrix")
    assert "torch 1.13.1: " in said and " executed" in said
    fresh = clone(REPO, tmp_path / "somewhere" / "else")
    said = build(fresh, tmp_path / "state-fresh", tmp_path / "no-torches", "Asia/Tokyo", "de_DE.UTF-8", 1)
    assert "note: torch 1.13.1 not provisioned" in said
    assert (author / "cards" / "quizgen.lock").read_bytes() == committed
    assert (fresh / "cards" / "quizgen.lock").read_bytes() == committed
    assert outputs(fresh) == outputs(author)


def test_an_edit_reverted_leaves_the_lock_as_committed(
    tmp_path: Path, options: Callable[..., pipeline.Options]
) -> None:
    root = write_project(tmp_path, {"sample.yaml": SAMPLE_DECK})
    pipeline.build(options(root))
    git = ["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "cards"], check=True)
    subprocess.run([*git, "commit", "-qm", "cards"], check=True)
    lock, deck = root / "cards" / "quizgen.lock", root / "cards" / "sample.yaml"
    committed = lock.read_bytes()
    deck.write_text(SAMPLE_DECK.replace("Gradients add up", "Gradients accumulate"), encoding="utf-8")
    report = pipeline.build(options(root))
    assert "(0 new, 1 changed, 0 removed)" in report.notes[0] and lock.read_bytes() != committed
    deck.write_text(SAMPLE_DECK, encoding="utf-8")  # as `serve` or `--watch` would rebuild it
    report = pipeline.build(options(root))
    assert "(0 new, 1 changed, 0 removed)" in report.notes[0]  # the last build's note changes back
    assert lock.read_bytes() == committed
