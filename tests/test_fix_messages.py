"""Messages that lead to the fix: errors before warnings, a warning told once, indentation slips named,
a timeout that says where it was and how to give more time, one cause reported once, and a command
typed as people guess it."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from click.testing import CliRunner

from quizgen.cli import cli

Project = Callable[[dict[str, str]], Path]

WARNED_AND_WRONG = """\
deck: A
setup: |
  import torch
cards:
  - id: warned
    kind: value
    ask: "What?"
    code: |
      x = 2.5
    answer_expr: x
    answer: 2.5
    explain: "It is 2.5 here."
  - id: wrong
    kind: value
    ask: "What?"
    code: |
      x = 3
    answer_expr: x
    answer: 4
"""

WARNING = (
    "warning: cards/a.yaml:12:14: card 'warned' -> explain: the explanation writes the answer 2.5 by hand: "
    "write {{answer}} to quote it"
)


# -- 1. errors first, then warnings, each warning once ------------------------------------------------


def test_a_failed_build_shows_its_errors_first_and_its_warnings_after(
    project: Project, runner: CliRunner, in_dir: Callable[[Path], None]
) -> None:
    in_dir(project({"a.yaml": WARNED_AND_WRONG}))
    result = runner.invoke(cli, ["check", "-j", "1"])
    assert result.exit_code == 1
    assert result.stderr.splitlines() == [
        "Error: cards/a.yaml:19:13: card 'wrong' -> answer: declared answer 4 but execution gives 3",
        "1 card error",
        "",
        WARNING,
    ]


def test_a_warning_is_shown_once_until_it_changes(
    project: Project, runner: CliRunner, in_dir: Callable[[Path], None]
) -> None:
    root = project({"a.yaml": WARNED_AND_WRONG.replace("answer: 4", "answer: 3")})
    in_dir(root)
    first = runner.invoke(cli, ["build", "-j", "1"])
    assert first.exit_code == 0, first.output
    assert WARNING in first.stderr.splitlines()
    again = runner.invoke(cli, ["build", "-j", "1"])  # unchanged: told already
    assert again.exit_code == 0, again.output
    assert "warning:" not in again.output
    assert "note: 1 warning shown before, not repeated (--all-warnings shows it)" in again.stderr
    # A card added above it moves its line, not the warning; a failed build does not repeat it either.
    moved = "cards:\n  - id: new\n    kind: basic\n    front: f\n    back: b\n"
    (root / "cards" / "a.yaml").write_text(WARNED_AND_WRONG.replace("cards:\n", moved))
    failed = runner.invoke(cli, ["build", "-j", "1"])
    assert failed.exit_code == 1
    assert failed.stderr.splitlines()[0].startswith("Error: cards/a.yaml:23:13: card 'wrong'")
    assert "warning:" not in failed.output
    every = runner.invoke(cli, ["check", "-j", "1", "--all-warnings"])
    assert WARNING.replace(":12:", ":16:") in every.stderr.splitlines()
    # A warning that says something else is new.
    (root / "cards" / "a.yaml").write_text(WARNED_AND_WRONG.replace("2.5", "3.5"))
    changed = runner.invoke(cli, ["check", "-j", "1"])
    assert WARNING.replace("2.5", "3.5") in changed.stderr.splitlines()


# -- 4. commands as people guess them ---------------------------------------------------------------


def test_quizgen_watch_points_to_build_watch(runner: CliRunner) -> None:
    result = runner.invoke(cli, ["watch"])
    assert result.exit_code == 2
    assert result.stderr.splitlines()[-1] == (
        "Error: No such command 'watch'. To rebuild on every change: quizgen build --watch "
        "(quizgen serve also serves the quiz)."
    )


def test_a_mistyped_command_gets_did_you_mean(runner: CliRunner) -> None:
    result = runner.invoke(cli, ["biuld"])
    assert result.exit_code == 2
    assert result.stderr.splitlines()[-1] == "Error: No such command 'biuld'. Did you mean 'quizgen build'?"
    assert runner.invoke(cli, ["zzz"]).stderr.splitlines()[-1] == "Error: No such command 'zzz'."


# -- 2. indentation slips name the key that slipped -------------------------------------------------

CARD = """\
deck: A
setup: |
  import torch
cards:
  - id: one
    kind: value
    ask: "What?"
    code: |
      x = 3
    answer_expr: x
    answer: 3
"""


def _first_error(runner: CliRunner, root: Path, text: str) -> str:
    (root / "cards").mkdir(exist_ok=True)
    (root / "cards" / "a.yaml").write_text(text)
    result = runner.invoke(cli, ["check", "-j", "1"])
    assert result.exit_code == 1, result.output
    assert result.stderr.splitlines()[1] == "1 card error"  # one cause, told once
    return result.stderr.splitlines()[0]


def test_a_key_a_space_too_far_is_named(
    runner: CliRunner, tmp_path: Path, in_dir: Callable[[Path], None]
) -> None:
    in_dir(tmp_path)
    assert _first_error(runner, tmp_path, CARD.replace("    ask:", "     ask:")) == (
        "Error: cards/a.yaml:7:9: invalid YAML: mapping values are not allowed in this context "
        "(`ask:` at line 7 is indented 1 space more than `kind:` at line 6: line it up with it)"
    )
    assert _first_error(runner, tmp_path, CARD.replace("    code:", "   code:")) == (
        "Error: cards/a.yaml:8:4: invalid YAML: did not find expected '-' indicator "
        "(`code:` at line 8 is indented 1 space less than `ask:` at line 7: line it up with it)"
    )
    assert _first_error(runner, tmp_path, CARD.replace("    answer_expr", "     answer_expr")) == (
        "Error: cards/a.yaml:10:6: invalid YAML: did not find expected key "
        "(`answer_expr:` at line 10 is indented 1 space more than `code:` at line 8: line it up with it)"
    )
    # A value holding ': ' on a key's own line still gets the quoting hint.
    assert _first_error(runner, tmp_path, CARD.replace('"What?"', "Why: this?")) == (
        "Error: cards/a.yaml:7:13: invalid YAML: mapping values are not allowed in this context "
        "(a value holding ': ' needs quotes, e.g. front: \"Why: this?\")"
    )


def test_a_key_swallowed_by_code_is_named(
    runner: CliRunner, tmp_path: Path, in_dir: Callable[[Path], None]
) -> None:
    in_dir(tmp_path)
    assert _first_error(runner, tmp_path, CARD.replace("    answer_expr", "      answer_expr")) == (
        "Error: cards/a.yaml:10:7: card 'one' -> code: `answer_expr:` at line 10 is indented into `code: |` "
        "above: un-indent to line up with `code:`"
    )
    both = CARD.replace("    answer_expr", "      answer_expr").replace("    answer: 3", "      answer: 3")
    assert _first_error(runner, tmp_path, both) == (
        "Error: cards/a.yaml:10:7: card 'one' -> code: `answer_expr:` and `answer:` from line 10 on are "
        "indented into `code: |` above: un-indent to line up with `code:`"
    )


def test_code_that_only_looks_like_a_key_runs(
    runner: CliRunner, tmp_path: Path, in_dir: Callable[[Path], None]
) -> None:
    in_dir(tmp_path)
    (tmp_path / "cards").mkdir()
    annotated = CARD.replace("      x = 3\n", "      answer_expr: int = 3\n      x = answer_expr\n")
    (tmp_path / "cards" / "a.yaml").write_text(annotated.replace("    answer_expr: x\n", ""))
    result = runner.invoke(cli, ["check", "-j", "1"])
    assert "indented into" not in result.output


# -- 3. one cause, reported once ------------------------------------------------------------------

TYPO = """\
deck: A
setup: |
  import torch
cards:
  - id: one
    kind: value
    ask: "What?"
    code: |
      w = torch.ones(2)
      y = w.sun()
    answer_expr: y.item()
    answer: 2.0
    variants:
      - label: "forgetting the sum"
        replace:
          "y = w.sun()": "y = w.sun() * 2"
"""


def test_a_typo_in_the_code_is_not_also_a_variant_problem(
    project: Project, runner: CliRunner, in_dir: Callable[[Path], None]
) -> None:
    in_dir(project({"a.yaml": TYPO}))
    result = runner.invoke(cli, ["check", "-j", "1"])
    assert result.exit_code == 1
    lines = result.stderr.splitlines()
    assert lines[0].startswith("Error: cards/a.yaml:10: card 'one' -> code: the snippet raised an exception")
    assert "AttributeError: 'Tensor' object has no attribute 'sun'" in result.stderr
    assert "variant" not in result.stderr
    assert lines[-1] == "1 card error"


# -- 3. a timeout says where the snippet was and how to give it longer ------------------------------

SLOW = """\
deck: A
setup: |
  import torch
cards:
  - id: slow
    kind: value
    ask: "What?"
    timeout: 1
    code: |
      x = 0
      while True:
          x += 1
    answer_expr: x
    answer: 3
"""


def test_a_timeout_names_the_line_reached_and_the_cards_own_limit(
    project: Project, runner: CliRunner, in_dir: Callable[[Path], None]
) -> None:
    in_dir(project({"a.yaml": SLOW}))
    result = runner.invoke(cli, ["check", "-j", "1"])
    assert result.exit_code == 1
    lines = result.stderr.splitlines()
    assert lines[0] == (
        "Error: cards/a.yaml:9:11: card 'slow' -> code: the snippet did not finish within 1 s (timeout): "
        f"it was at cards/a.yaml:{lines[1].split()[0]} when stopped"
    )
    assert lines[1] in ("    11 | while True:", "    12 | x += 1")
    assert lines[1:] == [
        lines[1],
        "    the limit is the card's `timeout: 1`: raise it (at most --max-timeout, 300 s), or run with "
        "--timeout 2",
        "1 card error",
    ]


def test_a_timeout_says_how_to_raise_the_limit_it_met(
    project: Project, runner: CliRunner, in_dir: Callable[[Path], None]
) -> None:
    root = project({"a.yaml": SLOW.replace("    timeout: 1\n", "")})
    (root / "quizgen.toml").write_text("[defaults]\ntimeout = 1\n")
    in_dir(root)
    result = runner.invoke(cli, ["check", "-j", "1"])
    assert result.exit_code == 1
    assert result.stderr.splitlines()[2] == (
        "    the limit is quizgen.toml's timeout (1 s): to give it longer, write `timeout: 2` on the card "
        "(at most --max-timeout, 300 s), set `timeout = 2` under [defaults] in quizgen.toml, or run with "
        "--timeout 2"
    )
    given = runner.invoke(cli, ["check", "-j", "1", "--timeout", "0.5"])  # the user's word replaces both
    assert "within 0.5 s (timeout)" in given.stderr.splitlines()[0]
    assert given.stderr.splitlines()[2] == "    the limit is --timeout 0.5: give a larger one (--timeout 1)"


def test_a_cards_timeout_may_not_pass_the_users_ceiling(
    project: Project, runner: CliRunner, in_dir: Callable[[Path], None]
) -> None:
    in_dir(project({"a.yaml": SLOW.replace("timeout: 1", "timeout: 400")}))
    result = runner.invoke(cli, ["check", "-j", "1"])
    assert result.exit_code == 1
    assert result.stderr.splitlines() == [
        "Error: cards/a.yaml:8:14: card 'slow' -> timeout: timeout 400 is over the 300 seconds this machine "
        "allows a card; to allow it, run with --max-timeout 400 (or set QUIZGEN_MAX_TIMEOUT), or give "
        "--timeout yourself",
        "1 card error",
    ]
    lowered = runner.invoke(cli, ["check", "-j", "1", "--max-timeout", "0.5"])
    assert "timeout 400 is over the 0.5 seconds" in lowered.stderr
    in_dir(project({"a.yaml": SLOW.replace("timeout: 1", "timeout: soon")}))
    typed = runner.invoke(cli, ["check"])
    assert typed.exit_code == 1
    assert "timeout is a number of seconds > 0, not 'soon'" in typed.stderr


def test_a_job_in_a_child_of_its_own_names_its_line_too(tmp_path: Path) -> None:
    """Workers run each job in a child of its own and stop it themselves: they ask it for its line."""
    import subprocess
    import sys

    code = (
        "import tempfile, sys\n"
        "import torch\n"  # imported before, as in a warm worker
        "from quizgen.execution.worker import isolate, runner\n"
        "runner.reset_state()\n"
        "isolate.become_subreaper()\n"  # as a worker does: its jobs' orphans are its to end
        "job = {'type': 'run', 'answer': True, 'setup': [], 'expr': None,\n"
        "       'code': {'code': 'x = 0\\nwhile True:\\n    x += 1\\n', 'path': 'cards/a.yaml', 'line': 8}}\n"
        "print(isolate.run_isolated(job, tempfile.mkdtemp(dir=sys.argv[1]), 3.0)['error'])\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, timeout=120
    )
    assert out.stdout.strip() in (
        f"the snippet did not finish within 3 s (timeout): it was at cards/a.yaml:{line} when stopped"
        for line in (9, 10)
    ), out.stderr
