"""quizgen installed as a tool: the built wheel in a fresh virtual environment outside the checkout.

The environment reuses the torch (and the other dependencies) of the one running the tests, through a
.pth file, as `--system-site-packages` would: nothing is downloaded but the build backend, and the copy
of quizgen it runs is the wheel's alone (its templates, static files and worker).
"""

from __future__ import annotations

import os
import re
import site
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from tests.support.paths import REPO

pytestmark = pytest.mark.slow  # a wheel built (its backend fetched), a venv made, a deck built: 45 s idle


def run(argv: list[str], cwd: Path, env: dict[str, str], timeout: float = 600) -> str:
    done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, f"{argv}\n{done.stdout}\n{done.stderr}"
    return done.stdout


@pytest.fixture(scope="module")
def tool(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """A virtual environment holding only quizgen's wheel (its dependencies reused); its bin folder."""
    pytest.importorskip("build")
    tmp = tmp_path_factory.mktemp("tool")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["QUIZGEN_CACHE_DIR"] = str(tmp / "cache")
    run([sys.executable, "-m", "build", "--wheel", "--outdir", str(tmp / "dist"), str(REPO)], tmp, env)
    (wheel,) = (tmp / "dist").glob("quizgen-*.whl")
    venv = tmp / "venv"
    run([sys._base_executable, "-m", "venv", str(venv)], tmp, env)  # type: ignore[attr-defined]
    run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--no-deps", str(wheel)], tmp, env)
    (purelib,) = venv.glob("lib/python3.*/site-packages")
    (purelib / "reuse-dependencies.pth").write_text("\n".join(site.getsitepackages()) + "\n")
    return venv / "bin", env


def served(url: str) -> str:
    """The page at `url` once the server's first build is done (until then it answers 503)."""
    deadline = time.monotonic() + 300
    while True:
        try:
            with urllib.request.urlopen(url, timeout=30) as response:
                return str(response.read().decode())
        except urllib.error.HTTPError as exc:
            assert exc.code == 503 and time.monotonic() < deadline, exc
            time.sleep(0.5)


def test_the_installed_quizgen_is_the_wheels(tool: tuple[Path, dict[str, str]], tmp_path: Path) -> None:
    bin_dir, env = tool
    where = run([str(bin_dir / "python"), "-c", "import quizgen; print(quizgen.__file__)"], tmp_path, env)
    assert Path(where.strip()).is_relative_to(bin_dir.parent)
    assert not Path(where.strip()).is_relative_to(REPO)


def test_init_build_and_serve_outside_the_checkout(tool: tuple[Path, dict[str, str]], tmp_path: Path) -> None:
    bin_dir, env = tool
    quizgen = str(bin_dir / "quizgen")
    run([quizgen, "init", "course"], tmp_path, env)
    course = tmp_path / "course"
    out = run([quizgen, "build", "-j", "2"], course, env)
    assert re.search(r"^\d+ cards in 1 deck verified", out, re.M), out
    assert list((course / "build" / "anki").glob("*.apkg"))
    assert (course / "build" / "quiz" / "index.html").is_file()

    server = subprocess.Popen(
        [quizgen, "serve", "--port", "0", "-j", "1"], cwd=course, env=env, stdout=subprocess.PIPE, text=True
    )
    try:
        assert server.stdout is not None
        for line in server.stdout:
            found = re.search(r"at (http://127\.0\.0\.1:\d+/)", line)
            if found:
                break
        else:
            pytest.fail("quizgen serve ended without serving")
        page = served(found.group(1))
        asset = re.search(r'src="(assets/[^"?]+\.js)\?v=', page)
        assert asset, page
        with urllib.request.urlopen(found.group(1) + asset.group(1), timeout=30) as response:
            assert response.status == 200
    finally:
        server.terminate()
        server.wait(timeout=60)
