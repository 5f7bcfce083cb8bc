"""A repository cannot plant build state or point the build outside itself: a shipped commit journal or
build cache is never read, and an output folder, cards folder or card file that is a symlink leading
out of the project is refused (project/state.py, project/confine.py, render/stage.py's recover)."""

from __future__ import annotations

import json
import sqlite3
import threading
from pathlib import Path

import pytest
from click.testing import CliRunner

from quizgen import pipeline
from quizgen.cli import cli
from quizgen.errors import QuizgenError
from quizgen.execution.pool import Pool
from quizgen.render import present
from tests.support.hostile import outputs
from tests.support.projects import write_project

SECRET = "s3cret-key-7c1d"
FORGED = "forged_by_the_repository"
PNG = b"\x89PNG\r\n\x1a\n an innocent image"


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The user's $HOME, with a key and a shell profile; build state goes to its cache directory."""
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text(SECRET)
    (home / ".bashrc").write_text("# the user's own\n")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / ".cache"))
    monkeypatch.delenv("QUIZGEN_CACHE_DIR", raising=False)
    return home


def tree(folder: Path, skip: str = "\0") -> dict[str, bytes]:
    """Every file under `folder` (symlinks not followed) with its bytes, and every folder."""
    found: dict[str, bytes] = {}
    for path in sorted(folder.rglob("*")):
        name = str(path.relative_to(folder))
        if name.split("/")[0] == skip:
            continue
        found[name] = path.read_bytes() if path.is_file() and not path.is_symlink() else b"<folder>"
    return found


def build(root: Path, monkeypatch: pytest.MonkeyPatch, *args: str) -> tuple[int, str]:
    """`quizgen build` run in the project folder, as a user runs it on a repository just cloned."""
    monkeypatch.chdir(root)
    result = CliRunner().invoke(cli, ["build", "-j", "1", *args])
    assert not isinstance(result.exception, AssertionError), result.output
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception  # a traceback is never the answer to a hostile repository
    return result.exit_code, result.output


def basic_deck(name: str, front: str = "A question?") -> str:
    card = f"  - id: {name.lower()}-one\n    kind: basic\n    front: '{front}'\n    back: B\n"
    return f"deck: {name}\ncards:\n{card}"


# -- (a) a shipped commit journal ---------------------------------------------------------------------


def test_a_shipped_commit_journal_moves_nothing(
    tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = write_project(tmp_path / "repo", {"deck.yaml": basic_deck("Pics", "See ![k](k.png)")})
    (root / "cards" / "k.png").write_bytes(PNG)
    (root / "cards" / "evil.txt").write_text("curl evil | sh\n")
    (root / "build" / "empty").mkdir(parents=True)
    moves = [  # paths as the repository knows them: relative to where the user runs the build
        {"tmp": "../home/.ssh/id_rsa", "target": "cards/k.png", "dir": False},  # publish the key
        {"tmp": "cards/evil.txt", "target": "../home/.bashrc", "dir": False},  # overwrite a profile
        {"tmp": "build/empty", "target": "../home/.ssh", "dir": True},  # delete the key
    ]
    (root / "build" / ".quizgen-commit.json").write_text(json.dumps({"moves": moves}))
    before = tree(home)
    code, output = build(root, monkeypatch)
    assert code == 0, output
    assert tree(home, skip=".cache") == before
    assert (root / "cards" / "k.png").read_bytes() == PNG
    assert SECRET not in outputs(root, cache=False)
    assert list((root / "build" / "anki").glob("*.apkg"))  # the build was made, with its image


# -- (b) a shipped build cache --------------------------------------------------------------------------

SQUARE = """\
deck: Square
cards:
  - id: square
    kind: value
    ask: "What is `x`?"
    code: |
      x = 4 * 4
    answer_expr: x
"""


def _store_of(*folders: Path) -> Path:
    """The result store a build left, wherever this quizgen keeps it."""
    return next(p for folder in folders for p in folder.rglob("cache.sqlite3"))


def test_a_shipped_build_cache_is_not_trusted(
    tmp_path: Path, home: Path, pool: Pool, monkeypatch: pytest.MonkeyPatch
) -> None:
    honest = write_project(tmp_path / "honest", {"square.yaml": SQUARE})
    pipeline.build(pipeline.Options(cards_dir=honest / "cards", out_dir=honest / "build", pool=pool))
    root = write_project(tmp_path / "repo", {"square.yaml": SQUARE})
    shipped = root / "build" / ".cache" / "cache.sqlite3"
    shipped.parent.mkdir(parents=True)
    with sqlite3.connect(_store_of(honest, home)) as real, sqlite3.connect(shipped) as forged:
        real.backup(forged)  # the same card's rows: the keys are hashes anyone can compute
    with sqlite3.connect(shipped) as forged:
        for key, value in forged.execute("SELECT key, value FROM results").fetchall():
            data = json.loads(value)
            assert data["outcome"]["value"]["value"] == 16
            data["outcome"]["value"].update(value=99, display="99")
            forged.execute("UPDATE results SET value = ? WHERE key = ?", (json.dumps(data), key))
        forged.execute("UPDATE highlight SET value = ? || value", (f"<script>{FORGED}()</script>",))
        assert forged.execute("SELECT count(*) FROM highlight").fetchone()[0] > 0
    for kept, _ in present.kept_results():  # what this process worked out for the honest build
        monkeypatch.setattr(kept, "known", {})
    report = pipeline.build(pipeline.Options(cards_dir=root / "cards", out_dir=root / "build", pool=pool))
    card = json.loads((root / "build" / "cards.json").read_text())["decks"][0]["cards"][0]
    assert card["outcome"]["value"]["value"] == 16
    assert FORGED not in outputs(root, cache=False)
    assert report.executed == 1 and report.cached == 0


# -- (c) an output folder leading out of the project ----------------------------------------------------


def _outside(tmp_path: Path) -> Path:
    """A folder beside the project, with what a build would replace or clean up in it."""
    outside = tmp_path / "outside"
    (outside / "quiz").mkdir(parents=True)
    (outside / "quiz" / "index.html").write_text("the user's own site")
    (outside / "anki").mkdir()
    (outside / "anki" / ".quizgen-staged-notes.txt").write_text("the user's own notes")
    (outside / "cards.json").write_text("the user's own data")
    return outside


def test_an_output_folder_symlinked_out_of_the_project_is_refused(
    tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    outside = _outside(tmp_path)
    before = tree(outside)
    root = write_project(tmp_path / "repo", {"deck.yaml": basic_deck("Out")})
    (root / "build").symlink_to(outside)
    code, output = build(root, monkeypatch)
    assert tree(outside) == before
    assert code != 0
    assert "symlink" in output


def test_serve_refuses_to_serve_or_build_through_a_symlink_out_of_the_project(
    tmp_path: Path, home: Path
) -> None:
    from quizgen import serve

    outside = _outside(tmp_path)
    before = tree(outside)
    root = write_project(tmp_path / "repo", {"deck.yaml": basic_deck("Served")})
    (root / "build").symlink_to(outside)
    told: list[str] = []
    stop = threading.Event()
    stop.set()  # one build, then stop
    with pytest.raises(QuizgenError, match="symlink"):
        serve.serve(pipeline.Options(cards_dir=root / "cards", out_dir=root / "build"), 0, told.append, stop)
    assert tree(outside) == before
    assert not any("serving" in line for line in told)


def test_output_subfolders_symlinked_out_of_the_project_are_left_alone(
    tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    outside = _outside(tmp_path)
    before = tree(outside)
    root = write_project(tmp_path / "repo", {"deck.yaml": basic_deck("Sub")})
    (root / "build").mkdir()
    for name in ("quiz", "anki", "cards.json"):
        (root / "build" / name).symlink_to(outside / name)
    code, output = build(root, monkeypatch)
    assert code == 0, output
    assert tree(outside) == before
    assert not any(p.is_symlink() for p in (root / "build").iterdir())  # each replaced by the real output


def test_a_build_lock_symlinked_out_of_the_project_creates_nothing_there(
    tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    outside = _outside(tmp_path)
    before = tree(outside)
    root = write_project(tmp_path / "repo", {"deck.yaml": basic_deck("Lock")})
    (root / "build").mkdir()
    (root / "build" / ".quizgen-build.lock").symlink_to(outside / "created-by-the-build")
    code, output = build(root, monkeypatch)
    assert tree(outside) == before
    assert code != 0
    assert "symlink" in output


# -- (d) card files leading out of the project ----------------------------------------------------------


@pytest.mark.parametrize("linked", ["a card file", "the cards folder"])
def test_cards_symlinked_from_outside_the_project_are_refused(
    tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch, linked: str
) -> None:
    private = write_project(tmp_path / "private", {"notes.yaml": basic_deck("Private", SECRET)})
    if linked == "a card file":
        root = write_project(tmp_path / "repo", {"deck.yaml": basic_deck("Public")})
        (root / "cards" / "notes.yaml").symlink_to(private / "cards" / "notes.yaml")
    else:
        root = tmp_path / "repo"
        root.mkdir()
        (root / "cards").symlink_to(private / "cards")
    code, output = build(root, monkeypatch)
    assert SECRET not in outputs(root, cache=False)
    assert code != 0
    assert "outside the project" in output


def test_settings_symlinked_from_outside_the_project_are_refused(
    tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "private").mkdir()
    (tmp_path / "private" / "settings.toml").write_text(f'[quiz]\ntitle = "{SECRET}"\n')
    root = write_project(tmp_path / "repo", {"deck.yaml": basic_deck("Titled")})
    (root / "quizgen.toml").symlink_to(tmp_path / "private" / "settings.toml")
    code, output = build(root, monkeypatch)
    assert SECRET not in outputs(root, cache=False)
    assert code != 0
    assert "outside the project" in output


# -- defence in depth: a journal in the state folder replays only this project's own moves ---------------


def move(tmp: Path, target: Path, folder: bool = False) -> dict[str, object]:
    return {"tmp": str(tmp), "target": str(target), "dir": folder}


def test_recover_replays_only_moves_beside_targets_in_the_output_folder(tmp_path: Path, home: Path) -> None:
    from quizgen.render import stage as staging

    root = write_project(tmp_path / "repo", {"deck.yaml": basic_deck("Moves")})
    out = root / "build"
    out.mkdir()
    (out / ".quizgen-staged-cards.json.x.tmp").write_text("new")
    (out / "cards.json").write_text("old")
    (out / "link").symlink_to(home)
    journal = tmp_path / "state" / staging.JOURNAL
    journal.parent.mkdir()
    moves = [
        move(home / ".ssh" / "id_rsa", root / "cards" / "k.png"),
        move(out / ".quizgen-staged-x", home / ".bashrc"),
        move(out / "link" / ".quizgen-staged-.bashrc.1", out / "link" / ".bashrc"),  # out through a symlink
        move(home / ".quizgen-staged-.ssh.1", out / ".ssh", folder=True),
        move(out / ".." / ".." / "home" / ".ssh" / "id_rsa", out / "k.png"),  # not beside its target
        move(out / ".quizgen-staged-cards.json.x.tmp", out / "cards.json"),
    ]
    (home / ".quizgen-staged-.ssh.1").mkdir()
    (out / "link" / ".quizgen-staged-.bashrc.1").write_text("evil")
    (out / ".quizgen-staged-x").write_text("evil")
    before = tree(home)
    journal.write_text(json.dumps({"moves": moves}))
    staging.recover(journal, out, root / "cards")
    assert tree(home) == before
    assert (out / "cards.json").read_text() == "new"  # the one move a build of this project makes
    assert not (root / "cards" / "k.png").exists() and not (out / "k.png").exists()
