"""`quizgen check --locked` (project/locked.py): fails, naming each card, when a build would change the lock,
and writes nothing."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from click.testing import CliRunner

from quizgen.cli import cli
from quizgen.errors import count
from quizgen.torch_versions import installed
from tests.support.projects import SAMPLE_DECK, write_project
from tests.support.torch_matrix import deck, make, record

INSTALLED = installed.release()
LOCK = "cards/quizgen.lock"


def locked(runner: CliRunner) -> str:
    """`check --locked` that fails: the error it printed (after the check's own summary)."""
    result = runner.invoke(cli, ["check", "--locked", "-j", "1"])
    assert result.exit_code == 1, result.output
    return result.output[result.output.index("Error: ") :]


def refused(cards: int, *lines: str) -> str:
    """The whole error of a lock out of date for `cards` cards, one line per difference."""
    return "".join(
        [
            f"Error: {LOCK} is not the lock these cards build (--locked):\n",
            *(line + "\n" for line in lines),
            f"the lock is out of date for {count(cards, 'card')}: run `quizgen build`, then commit {LOCK} "
            "with the cards\n",
        ]
    )


def test_a_lock_as_the_build_writes_it_passes(
    tmp_path: Path, runner: CliRunner, in_dir: Callable[[Path], None]
) -> None:
    write_project(tmp_path, {"sample.yaml": SAMPLE_DECK})
    in_dir(tmp_path)
    assert runner.invoke(cli, ["build", "-j", "1"]).exit_code == 0
    result = runner.invoke(cli, ["check", "--locked", "-j", "1"])
    assert result.exit_code == 0, result.output
    assert "7 cards in 1 deck verified" in result.output


def test_each_card_the_build_would_change_is_named_and_nothing_is_written(
    tmp_path: Path, runner: CliRunner, in_dir: Callable[[Path], None]
) -> None:
    root = write_project(tmp_path, {"sample.yaml": SAMPLE_DECK})
    in_dir(root)
    assert runner.invoke(cli, ["build", "-j", "1"]).exit_code == 0
    edited = SAMPLE_DECK.replace("Gradients add up", "Gradients accumulate").replace(
        "  - id: value-grad-none", "  - id: value-grad-none-renamed"
    )
    (root / "cards" / "sample.yaml").write_text(edited, encoding="utf-8")
    before = (root / "cards" / "quizgen.lock").read_bytes()
    built = sorted(p.relative_to(root) for p in (root / "build").rglob("*"))
    assert locked(runner) == refused(
        3,
        "cards/sample.yaml:7:5: card 'value-two-steps': its Anki note is not the one the lock records",
        "cards/sample.yaml:18:5: card 'value-grad-none-renamed': new: the lock has no entry for it",
        f"{LOCK}: card 'value-grad-none': no card has this id now, but the lock has it as a card",
    )
    assert (root / "cards" / "quizgen.lock").read_bytes() == before  # nothing written
    assert sorted(p.relative_to(root) for p in (root / "build").rglob("*")) == built


def test_no_lock_at_all_names_every_card(
    tmp_path: Path, runner: CliRunner, in_dir: Callable[[Path], None]
) -> None:
    write_project(tmp_path, {"sample.yaml": SAMPLE_DECK})
    in_dir(tmp_path)
    said = locked(runner)
    assert said.count(": new: the lock has no entry for it\n") == 7 and not (tmp_path / LOCK).exists()
    assert said.endswith(refused(7).split("\n", 1)[1])


def test_an_answer_on_another_torch_the_lock_records_otherwise(
    tmp_path: Path, runner: CliRunner, in_dir: Callable[[Path], None]
) -> None:
    root = make(tmp_path, deck("varies_with_torch: true"), ["1.13.1", INSTALLED])
    record(root, {"1.13.1": "tensor([0., 0.])"})
    in_dir(root)
    assert runner.invoke(cli, ["build", "-j", "1"]).exit_code == 0
    assert runner.invoke(cli, ["check", "--locked", "-j", "1"]).exit_code == 0
    lock = json.loads((root / LOCK).read_text())
    # A record of the card as it was before an edit: this build has no answer of it on 1.13.1.
    lock["torch"]["1.13.1"]["zero-grad-default"]["job"] = "0" * 16
    (root / LOCK).write_text(json.dumps(lock, indent=1, sort_keys=True, ensure_ascii=False) + "\n")
    assert locked(runner) == refused(
        1,
        "cards/deck.yaml:5:5: card 'zero-grad-default': its Anki note is not the one the lock records",
        "cards/deck.yaml:5:5: card 'zero-grad-default': the lock records an answer of it on torch 1.13.1, "
        "which this build does not have",
    )
