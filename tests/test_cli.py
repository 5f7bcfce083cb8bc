"""The command line: exit codes, messages, outputs kept on failure, and a --help that never loads torch."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import jsonschema
import pytest
import yaml
from click.testing import CliRunner

from quizgen import __version__
from quizgen.cli import cli
from tests.support.paths import REPO
from tests.support.projects import SAMPLE_DECK


def test_help_and_version_never_import_torch() -> None:
    code = (
        "import sys\n"
        "from click.testing import CliRunner\n"
        "from quizgen.cli import cli\n"
        "import quizgen.pipeline, quizgen.execution.pool\n"
        "for args in (['--help'], ['build', '--help'], ['--version']):\n"
        "    assert CliRunner().invoke(cli, args).exit_code == 0\n"
        "print('torch' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_version(runner: CliRunner) -> None:
    result = runner.invoke(cli, ["--version"])
    assert result.exit_code == 0, result.output
    assert result.output == f"quizgen, version {__version__}\n"


def test_schema_validates_the_sample_and_the_shipped_cards(runner: CliRunner) -> None:
    result = runner.invoke(cli, ["schema"])
    assert result.exit_code == 0, result.output
    schema = json.loads(result.output)
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.validate(yaml.safe_load(SAMPLE_DECK), schema)
    shipped = sorted((REPO / "cards").glob("*.yaml"))
    assert shipped
    for path in shipped:
        jsonschema.validate(yaml.safe_load(path.read_text()), schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"deck": "D", "cards": [{"id": "x", "kind": "value", "ask": "q"}]}, schema)


def test_usage_errors_exit_2(runner: CliRunner, tmp_path: Path) -> None:
    result = runner.invoke(cli, ["check", "--cards", str(tmp_path / "missing")])
    assert result.exit_code == 2, result.output
    assert "cards folder not found" in result.output
    result = runner.invoke(cli, ["check", "--jobs", "0"])
    assert result.exit_code == 2, result.output


def test_card_errors_exit_1_with_locations_and_no_traceback(
    runner: CliRunner, project: Callable[..., Path]
) -> None:
    root = project({"a.yaml": "deck: A\ncards:\n  - id: x\n    kind: basic\n    front: f\n    bak: b\n"})
    result = runner.invoke(cli, ["check", "--cards", str(root / "cards"), "--out", str(root / "build")])
    assert result.exit_code == 1, result.output
    path = root / "cards" / "a.yaml"
    assert result.output == (
        f"Error: {path}:3:5: card 'x': missing required field 'back'\n"
        f"{path}:6:5: card 'x' -> bak: unknown key 'bak'; did you mean 'back'?\n"
        "2 card errors\n"
    )
    assert "Traceback" not in result.output


def test_build_writes_outputs_and_a_failed_build_keeps_them(
    runner: CliRunner, project: Callable[..., Path]
) -> None:
    root = project({"sample.yaml": SAMPLE_DECK})
    args = ["build", "--cards", str(root / "cards"), "--out", str(root / "build")]
    result = runner.invoke(cli, args)
    assert result.exit_code == 0, result.output
    assert "7 cards in 1 deck verified (7 executed, 0 from cache)" in result.output
    cards_json = root / "build" / "cards.json"
    schema = json.loads((root / "build" / "quizgen.schema.json").read_text())
    assert schema["title"] == "quizgen card file"
    before = cards_json.read_bytes()
    data = json.loads(before)
    assert [c["id"] for c in data["decks"][0]["cards"]][:2] == ["value-two-steps", "value-grad-none"]

    deck = root / "cards" / "sample.yaml"
    deck.write_text(deck.read_text().replace("answer: 8.0", "answer: 9.0"))
    result = runner.invoke(cli, args)
    assert result.exit_code == 1, result.output
    assert "declared answer 9.0 but execution gives 8.0" in result.output
    assert cards_json.read_bytes() == before

    deck.write_text(deck.read_text().replace("answer: 9.0", "answer: 8.0"))
    result = runner.invoke(cli, [*args[:-1], str(root / "build")])
    assert result.exit_code == 0, result.output
    assert "(0 executed, 7 from cache)" in result.output
    assert cards_json.read_bytes() == before  # the same sources build the same bytes


def test_unwritable_output_is_a_clear_error(runner: CliRunner, project: Callable[..., Path]) -> None:
    root = project({"sample.yaml": SAMPLE_DECK})
    (root / "blocker").write_text("a file where the output folder should be")
    args = ["build", "--cards", str(root / "cards"), "--out", str(root / "blocker")]
    result = runner.invoke(cli, args)
    assert result.exit_code == 1, result.output
    assert "cannot write" in result.output and "Traceback" not in result.output


def test_outputs_are_readable_by_others(sample_build: object) -> None:
    import stat

    root = sample_build.root  # type: ignore[attr-defined]
    for path in [root / "build" / "cards.json", root / "build" / "anki", root / "build" / "quiz"]:
        mode = stat.S_IMODE(path.stat().st_mode)
        assert mode & 0o044 == 0o044, (path, oct(mode))


def test_timings_list_the_cards_that_ran_longest_and_only_those_that_ran(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.support.projects import write_project

    deck = (
        "deck: Slow\nsetup: |\n  import time\ncards:\n"
        "  - id: slow\n    kind: value\n    ask: q\n    code: |\n      time.sleep(0.3)\n    answer_expr: 1\n"
        "  - id: quick\n    kind: value\n    ask: q\n    code: |\n      x = 2\n    answer_expr: x\n"
    )
    root = write_project(tmp_path / "project", {"slow.yaml": deck})
    monkeypatch.chdir(root)
    monkeypatch.setenv("QUIZGEN_CACHE_DIR", str(tmp_path / "cache"))
    first = CliRunner().invoke(cli, ["check", "-j", "1", "--timings"])
    assert first.exit_code == 0, first.output
    lines = first.output.splitlines()
    start = lines.index("slowest cards run in this build:")
    timed = lines[start + 1 :]
    assert len(timed) == 2 and timed[0].endswith("cards/slow.yaml:5:5: card 'slow'"), timed
    assert float(timed[0].split()[0]) >= 0.3
    again = CliRunner().invoke(cli, ["check", "-j", "1", "--timings"])  # all from the cache now
    assert again.output.splitlines()[-1] == "no card ran in this build (all from cache)"
