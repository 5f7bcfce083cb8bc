"""Test tools that may be missing here (a Python package, node, npm packages): a test that needs one is
skipped where it is missing, but in CI (CI=true) it fails."""

from __future__ import annotations

import importlib
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest


def require(module: str) -> Any:
    """An optional test tool: its tests are skipped where it is missing, but in CI (CI=true) they fail."""
    if os.environ.get("CI") == "true":
        return importlib.import_module(module)
    return pytest.importorskip(module)


def npm_file(package: str, version: str, name: str) -> Path:
    """A file of an npm package installed once into the tests' cache folder (.ci/run installs each there
    first; test tools, never shipped)."""
    cache = Path(os.environ.get("QUIZGEN_TEST_CACHE", Path.home() / ".cache" / "quizgen-tests"))
    script = cache / "node_modules" / package / name
    if not script.exists():
        npm = shutil.which("npm")
        if npm is None:
            missing(f"npm (to install {package})")
        cache.mkdir(parents=True, exist_ok=True)
        done = subprocess.run(
            [npm, "install", "--no-audit", "--no-fund", "--prefix", str(cache), f"{package}@{version}"],
            capture_output=True,
            text=True,
            timeout=300,
        )
        if done.returncode != 0 or not script.exists():
            missing(f"{package} (npm install failed: {done.stderr.strip()[-300:]})")
    return script


def missing(what: str) -> None:
    """Skip a test for a tool that is not installed here; in CI, fail instead."""
    if os.environ.get("CI") == "true":
        pytest.fail(f"{what} is required in CI")
    pytest.skip(f"{what} is not available")
