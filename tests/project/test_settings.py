"""`quizgen init` and the project's settings (`quizgen.toml`)."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from quizgen import pipeline
from quizgen.cli import cli
from quizgen.errors import CardErrors
from quizgen.project import settings

THIRD = (
    "deck: T\ncards:\n  - id: third\n    kind: value\n    ask: q\n    code: x = 1 / 3\n"
    "    answer_expr: x\n    answer: 0.33\n"
)


def test_init_makes_a_project_that_builds_without_a_warning(
    runner: CliRunner,
    tmp_path: Path,
    in_dir: Callable[[Path], None],
    options: Callable[..., pipeline.Options],
) -> None:
    root = tmp_path / "week-3"
    result = runner.invoke(cli, ["init", str(root)])
    assert result.exit_code == 0, result.output
    assert (
        result.output.splitlines()[-1]
        == f"next: cd {root} && quizgen build (then open build/quiz/index.html)"
    )
    example = (root / "cards" / "example.yaml").read_text()
    assert example.startswith("# yaml-language-server: $schema=../build/quizgen.schema.json\n")
    schema = json.loads((root / "build" / "quizgen.schema.json").read_text())  # before any build
    assert schema["title"] == "quizgen card file"
    assert 'title = "Week 3"' in (root / "quizgen.toml").read_text()
    assert (root / ".gitignore").read_text() == "build/\n"
    report = pipeline.build(options(root))
    assert report.warnings == [] and report.cards == 4
    assert sorted(vc.card.kind for vc in report.decks[0].cards) == ["basic", "myth", "order", "value"]
    assert "<title>Week 3</title>" in (root / "build" / "quiz" / "index.html").read_text()

    again = runner.invoke(cli, ["init", str(root)])
    assert again.exit_code == 2
    assert again.output == (
        f"Error: {root} already has card files ({root / 'cards' / 'example.yaml'}): nothing was written\n"
    )


def test_defaults_come_from_quizgen_toml(
    project: Callable[..., Path], options: Callable[..., pipeline.Options]
) -> None:
    root = project({"t.yaml": THIRD})
    with pytest.raises(CardErrors):  # 0.33 is not 1/3 within the default rtol of 1e-3
        pipeline.check(options(root))
    (root / "quizgen.toml").write_text(
        '[quiz]\ntitle = "Gradients"\n\n[defaults]\nrtol = 0.02\ntimeout = 12\n'
    )
    report = pipeline.check(options(root))
    assert report.settings == settings.Settings(
        title="Gradients", timeout=12.0, tolerance=settings.Tolerance(rtol=0.02, atol=1e-6)
    )
    [vc] = report.decks[0].cards
    assert vc.card.tolerance == settings.Tolerance(rtol=0.02, atol=1e-6)  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            '[quiz]\ntitle = "x"\n\n[defaults]\nrtol = "big"\n',
            "quizgen.toml:5 -> defaults.rtol: expected a number",
        ),
        ("[defaults]\ntimeout = 0\n", "quizgen.toml:2 -> defaults.timeout: must be > 0"),
        (
            "[defaults]\natol = 1\ncolour = 3\n",
            "quizgen.toml:3 -> defaults.colour: unknown setting 'colour'; [defaults] has timeout, rtol, atol",
        ),
        ("[theme]\nx = 1\n", "quizgen.toml:1: unknown section [theme]; sections: quiz, defaults, export"),
        ('[export]\nscorm = "1.3"\n', 'quizgen.toml:2 -> export.scorm: expected true, "1.2" or "2004"'),
        ("[export]\nqti = 1\n", "quizgen.toml:2 -> export.qti: expected true or false"),
        (
            "[export]\nscorm = true\npassing_score = 80\n",
            "quizgen.toml:3 -> export.passing_score: expected a share from 0 to 1 "
            "(0.8: four cards in five right)",
        ),
        (
            "[export]\nhtml = true\n",
            "quizgen.toml:2 -> export.html: unknown setting 'html'; "
            "[export] has scorm, qti, moodle, passing_score",
        ),
        ("[quiz\n", "quizgen.toml:1:6: invalid TOML: Expected ']' at the end of a table declaration"),
    ],
)
def test_a_wrong_setting_is_an_error_at_its_line(
    project: Callable[..., Path], options: Callable[..., pipeline.Options], text: str, message: str
) -> None:
    root = project({"t.yaml": THIRD.replace("answer: 0.33", "answer: 0.3333333")})
    (root / "quizgen.toml").write_text(text)
    with pytest.raises(CardErrors) as info:
        pipeline.check(options(root))
    assert [str(p) for p in info.value.problems] == [f"{root}/{message}"]


# -- a hostile settings file: a located error in bounded time, never a traceback or a hang -------------


def _problems(root: Path) -> list[str]:
    with pytest.raises(CardErrors) as info:
        settings.load(root / "cards")
    return [str(p) for p in info.value.problems]


@pytest.mark.parametrize("name", ["quizgen.toml", "pyproject.toml"])
def test_a_deeply_nested_settings_file_is_an_error_not_a_traceback(tmp_path: Path, name: str) -> None:
    (tmp_path / "cards").mkdir()
    prefix = "[tool.quizgen]\n" if name == "pyproject.toml" else ""
    (tmp_path / name).write_text(f"{prefix}x = {'[' * 100_000}{']' * 100_000}\n")
    assert _problems(tmp_path) == [f"{tmp_path}/{name}: invalid TOML: nested too deeply"]


def test_a_settings_file_over_1_mib_is_refused_unread(tmp_path: Path) -> None:
    (tmp_path / "cards").mkdir()
    (tmp_path / "pyproject.toml").write_text("#" * (settings.MAX_BYTES + 1))
    assert _problems(tmp_path) == [f"{tmp_path}/pyproject.toml: over 1 MiB: not a settings file"]


def test_blank_lines_and_many_wrong_keys_take_linear_time(tmp_path: Path) -> None:
    # `^\s*` over many lines, and finding each wrong key's line from the top, were quadratic: 80,000
    # blank lines took ~20 s of CPU, 8,000 wrong keys ~30 s (1 MiB of either, hours).
    (tmp_path / "cards").mkdir()
    (tmp_path / "pyproject.toml").write_text("\n" * 80_000)
    started = time.process_time()
    assert settings.load(tmp_path / "cards") == settings.Settings()
    keys = "".join(f"k{n} = 1\n" for n in range(8_000))
    (tmp_path / "quizgen.toml").write_text(f"[quiz]\n{keys}")
    problems = _problems(tmp_path)
    assert time.process_time() - started < 5  # ~0.1 s
    assert len(problems) == 8_000
    assert problems[-1] == (
        f"{tmp_path}/quizgen.toml:8001 -> quiz.k7999: unknown setting 'k7999'; [quiz] has title, "
        "value_answers, attempts, shuffle"
    )


@pytest.mark.parametrize(
    ("text", "exports"),
    [
        ("", settings.Exports()),
        ("[export]\nscorm = true\n", settings.Exports(scorm=("1.2", "2004"))),
        ('[export]\nscorm = "2004"\nqti = true\n', settings.Exports(scorm=("2004",), qti=True)),
        (
            "[export]\nscorm = false\nmoodle = true\npassing_score = 1\n",
            settings.Exports(moodle=True, passing_score=1.0),
        ),
    ],
)
def test_the_outputs_for_an_lms_are_asked_for_in_export(
    tmp_path: Path, text: str, exports: settings.Exports
) -> None:
    (tmp_path / "cards").mkdir()
    (tmp_path / "quizgen.toml").write_text(text)
    assert settings.load(tmp_path / "cards").exports == exports
