"""Starting and configuring a project: `quizgen init` then `quizgen build` in an empty folder, settings in
pyproject.toml's [tool.quizgen] (quizgen.toml wins when both exist), and counts written as words."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from quizgen import cli as cli_module
from quizgen.cli import cli
from quizgen.errors import CardErrors
from quizgen.execution.pool import Pool
from quizgen.project import settings
from tests.support.quiz import as_shown


@pytest.fixture
def warm_cli(monkeypatch: pytest.MonkeyPatch, pool: Pool) -> None:
    """The CLI's own options, with the session's warm worker pool (torch is imported once per run)."""
    make = cli_module.run_options
    monkeypatch.setattr(cli_module, "run_options", lambda **kw: dataclasses.replace(make(**kw), pool=pool))


def test_init_then_build_in_an_empty_folder(
    runner: CliRunner, tmp_path: Path, in_dir: Callable[[Path], None], warm_cli: None
) -> None:
    in_dir(tmp_path)
    created = runner.invoke(cli, ["init"])
    assert created.exit_code == 0, created.output
    files = sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*") if p.is_file())
    assert files == [".gitignore", "build/quizgen.schema.json", "cards/example.yaml", "quizgen.toml"]
    built = runner.invoke(cli, ["build"])
    assert built.exit_code == 0, built.output
    assert "warning" not in built.output and "note types changed" not in built.output
    assert built.output.splitlines()[0].startswith("4 cards in 1 deck verified (")
    assert (
        "updated cards/quizgen.lock (4 new, 0 changed, 0 removed): commit it with the cards" in built.output
    )
    page = as_shown((tmp_path / "build" / "quiz" / "decks" / "example-gradients.html").read_text())
    assert '<math display="inline"' in page  # the example's math, as MathML


PYPROJECT = """\
[project]
name = "my-cards"

[tool.quizgen.quiz]
title = "From pyproject"

[tool.quizgen.defaults]
timeout = 12
rtol = 0.02
"""


def test_settings_may_live_in_pyproject(tmp_path: Path) -> None:
    (tmp_path / "cards").mkdir()
    (tmp_path / "pyproject.toml").write_text(PYPROJECT)
    found = settings.load(tmp_path / "cards")
    assert (found.title, found.timeout, found.tolerance.rtol) == ("From pyproject", 12.0, 0.02)
    (tmp_path / "pyproject.toml").write_text(PYPROJECT.replace("rtol = 0.02", "rtl = 0.02"))
    with pytest.raises(CardErrors) as caught:
        settings.load(tmp_path / "cards")
    assert caught.value.format_message() == (
        f"{tmp_path / 'pyproject.toml'}:9 -> tool.quizgen.defaults.rtl: unknown setting 'rtl'; "
        "[tool.quizgen.defaults] has timeout, rtol, atol\n1 settings error"
    )


def test_quizgen_toml_wins_over_pyproject(tmp_path: Path) -> None:
    (tmp_path / "cards").mkdir()
    (tmp_path / "pyproject.toml").write_text(PYPROJECT)
    (tmp_path / "quizgen.toml").write_text('[quiz]\ntitle = "From quizgen.toml"\n')
    found = settings.load(tmp_path / "cards")
    assert (found.title, found.timeout) == ("From quizgen.toml", settings.Settings().timeout)
    assert settings.source(tmp_path / "cards") == (tmp_path / "quizgen.toml", "")


def test_a_pyproject_without_quizgen_settings_is_not_read(tmp_path: Path) -> None:
    (tmp_path / "cards").mkdir()
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n[tool.ruff]\nline-length = 1\n")
    assert settings.source(tmp_path / "cards") is None
    assert settings.load(tmp_path / "cards") == settings.Settings()


def test_counts_are_words() -> None:
    from quizgen.errors import count
    from quizgen.project.lock import Changes
    from quizgen.render.anki import _messages

    assert [count(n, "deck") for n in (0, 1, 2)] == ["0 decks", "1 deck", "2 decks"]
    removed = _messages(Changes(removed=["gone"]), None)
    assert removed[0].startswith("1 card removed since the last build: gone. ")
    assert _messages(Changes(removed=["a", "b"]), None)[0].startswith("2 cards removed since the last build")
