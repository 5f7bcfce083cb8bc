"""Fixtures of the safety tests: a fake $HOME holding a key."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.hostile import HOME_SECRET


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fake $HOME with a planted key, the cache folder inside it."""
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text(HOME_SECRET)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / ".cache"))
    return home
