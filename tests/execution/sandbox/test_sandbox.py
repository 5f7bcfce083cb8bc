"""Building a stranger's cards: snippets run without network, with a read-only file system and an
empty $HOME (execution/sandbox/bwrap.py). Each test builds a hostile deck and looks for what leaked."""

from __future__ import annotations

import os
import shutil
import socket
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from quizgen import pipeline
from quizgen.cli import cli
from quizgen.errors import QuizgenError
from quizgen.execution.pool import Pool
from tests.support.hostile import basic, deck, outputs
from tests.support.projects import write_project

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the sandbox is Linux only")

SECRET = "s3cret-token-0f9e"


@pytest.fixture
def fake_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A $HOME holding a secret, outside the temporary folder (which the sandbox replaces anyway)."""
    home = Path.cwd() / "build" / "test-home" / tmp_path.name
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_token").write_text(SECRET)
    monkeypatch.setenv("HOME", str(home))
    yield home
    import shutil

    shutil.rmtree(home, ignore_errors=True)


@pytest.fixture
def sandboxed(fake_home: Path) -> Iterator[Pool]:
    """A pool of its own, started with the fake $HOME (the shared one was started with the real one)."""
    with Pool(1) as pool:
        pool.ready()
        assert pool.sandboxed
        yield pool


def test_no_connection_reaches_a_server_on_localhost(tmp_path: Path, sandboxed: Pool) -> None:
    server = socket.create_server(("127.0.0.1", 0))
    port = server.getsockname()[1]
    accepted: list[object] = []
    server.settimeout(0.2)

    def accept() -> None:
        while not stop.is_set():
            try:
                accepted.append(server.accept())
            except TimeoutError:
                continue

    stop = threading.Event()
    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    code = f"""
        try:
            socket.create_connection(("127.0.0.1", {port}), timeout=2).sendall(b"hello")
            print("connected")
        except OSError as exc:
            print("refused:", type(exc).__name__)
    """
    root = write_project(tmp_path, deck(basic("phone-home", code)))
    report = pipeline.build(
        pipeline.Options(cards_dir=root / "cards", out_dir=root / "build", pool=sandboxed)
    )
    stop.set()
    thread.join()
    server.close()
    assert accepted == []
    assert report.decks[0].cards[0].output == "refused: ConnectionRefusedError\n"


def test_a_secret_in_home_never_reaches_an_output(tmp_path: Path, fake_home: Path, sandboxed: Pool) -> None:
    code = f"""
        for path in ["~/.ssh/id_token", "{fake_home}/.ssh/id_token"]:
            try:
                print(open(os.path.expanduser(path)).read())
            except OSError as exc:
                print(type(exc).__name__)
        print(sorted(os.listdir(os.path.expanduser("~"))))
    """
    root = write_project(tmp_path, deck(basic("steal", code)))
    report = pipeline.build(
        pipeline.Options(cards_dir=root / "cards", out_dir=root / "build", pool=sandboxed)
    )
    assert report.decks[0].cards[0].output == "FileNotFoundError\nFileNotFoundError\n[]\n"
    assert SECRET not in outputs(root)


def test_no_file_appears_outside_the_jobs_folder(tmp_path: Path, sandboxed: Pool) -> None:
    outside = Path.cwd() / "build" / f"escaped-{tmp_path.name}.txt"
    code = f"""
        for path in ["../../escaped.txt", "{outside}", "{tmp_path}/escaped.txt", "/escaped.txt"]:
            try:
                with open(path, "w") as f:
                    f.write("x")
                print("wrote", os.path.basename(path))
            except OSError as exc:
                print(type(exc).__name__)
    """
    root = write_project(tmp_path, deck(basic("escape", code)))
    report = pipeline.build(
        pipeline.Options(cards_dir=root / "cards", out_dir=root / "build", pool=sandboxed)
    )
    # The first would land in the sandbox's own /tmp, outside the job's folder: Landlock refuses it; the
    # sandbox's temporary folder is a fresh one, where the test's does not exist; nor does a folder of
    # the host the pool does not need (its fresh root shows only those); its root is read-only.
    output = "PermissionError\nFileNotFoundError\nFileNotFoundError\nOSError\n"
    assert report.decks[0].cards[0].output == output
    assert (
        not outside.exists() and not (tmp_path / "escaped.txt").exists() and not Path("/escaped.txt").exists()
    )
    assert not (Path(os.environ.get("TMPDIR", "/tmp")) / "escaped.txt").exists()


def _path_without_bwrap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fake: str | None = None) -> None:
    """A PATH holding the system's programs but bwrap (or, with `fake`, a bwrap that prints it and fails)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name in ("sh", "unshare"):
        (bin_dir / name).symlink_to(shutil.which(name) or f"/usr/bin/{name}")
    if fake is not None:
        (bin_dir / "bwrap").write_text(f"#!/bin/sh\necho '{fake}' >&2\nexit 1\n")
        (bin_dir / "bwrap").chmod(0o755)
    monkeypatch.setenv("PATH", str(bin_dir))


@pytest.mark.parametrize("mode", ["auto", "require"])
def test_without_bubblewrap_the_build_stops_and_says_how_to_install_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mode: str
) -> None:
    _path_without_bwrap(tmp_path, monkeypatch)
    root = write_project(tmp_path / "project", deck(basic("one", "print(1)")))
    monkeypatch.chdir(root)
    result = CliRunner().invoke(cli, ["build", "-j", "1", "--sandbox", mode])
    assert result.exit_code == 1
    assert result.output == (
        "Error: the sandbox cannot start: bubblewrap (bwrap) is not installed: install it (Debian and "
        "Ubuntu: `sudo apt-get install bubblewrap`; Fedora: `sudo dnf install bubblewrap`), or pass "
        "--sandbox=off to run this repository's snippets with your own rights (only for cards you trust)\n"
    )
    assert not (root / "build" / "cards.json").exists()  # nothing ran, nothing was published
    with pytest.raises(QuizgenError):
        Pool(1, sandbox=mode)


def test_a_bubblewrap_that_cannot_start_is_an_error_with_its_reason(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _path_without_bwrap(tmp_path, monkeypatch, fake="bwrap: setting up uid map: Permission denied")
    root = write_project(tmp_path / "project", deck(basic("one", "print(1)")))
    monkeypatch.chdir(root)
    result = CliRunner().invoke(cli, ["check", "-j", "1"])
    assert result.exit_code == 1
    assert result.output.startswith(
        "Error: bubblewrap could not start the sandbox: bwrap: setting up uid map: Permission denied\n"
    ), result.output


def test_sandbox_off_runs_with_the_users_rights(tmp_path: Path, fake_home: Path) -> None:
    with Pool(1, sandbox="off") as pool:
        pool.ready()
        assert not pool.sandboxed
        code = 'print(open(os.path.expanduser("~/.ssh/id_token")).read())'
        root = write_project(tmp_path, deck(basic("reads-home", code)))
        report = pipeline.check(pipeline.Options(cards_dir=root / "cards", out_dir=root / "build", pool=pool))
    assert report.decks[0].cards[0].output == SECRET + "\n"


def test_a_python_installed_under_tmp_is_bound_onto_the_fresh_tmp_not_hidden_by_it(tmp_path: Path) -> None:
    """A clone in /tmp (CI's, a user's) has its venv there: bound before the sandbox's own /tmp was
    mounted, it vanished under it and bwrap could not start the pool ('execvp ...: No such file')."""
    from quizgen.execution.sandbox import bwrap

    venv = tmp_path / "clone" / ".venv"
    venv.mkdir(parents=True)
    launch = bwrap.launch(["true"], {"PYTHONPATH": ""}, keep=[str(venv)])
    launch.close()
    argv = launch.argv
    tmpfs = max(i for i, arg in enumerate(argv) if arg == "--tmpfs" and argv[i + 1] == "/tmp")
    binds = [i for i, arg in enumerate(argv) if arg == "--ro-bind" and argv[i + 2] == str(venv)]
    assert binds and all(i > tmpfs for i in binds)
