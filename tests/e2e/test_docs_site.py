"""The documentation site builds as `make docs` builds it, with every warning an error (a link to a page
or an anchor that does not exist, a page left out of the nav), and the README stays a newcomer's page."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.support.paths import REPO


def test_the_site_builds_with_warnings_as_errors(tmp_path: Path) -> None:
    site = tmp_path / "site"
    config = ["--config-file", str(REPO / "mkdocs.yml"), "--site-dir", str(site)]
    built = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", *config],
        capture_output=True,
        text=True,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        check=False,
    )
    assert built.returncode == 0, built.stderr
    assert "WARNING" not in built.stderr, built.stderr
    # The home page is the README, tutorial and all, with its links into docs/ made site links.
    home = (site / "index.html").read_text(encoding="utf-8")
    assert "Your first deck in five minutes" in home
    assert 'href="kinds/#value-a-question-whose-answer-is-computed"' in home
    assert (site / "safety" / "index.html").exists()


def test_the_readme_keeps_to_what_a_new_user_needs() -> None:
    assert len((REPO / "README.md").read_text(encoding="utf-8").splitlines()) < 300
