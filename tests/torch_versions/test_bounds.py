"""Typed bounds, executed (quizgen/torch_versions/bounds.py): which releases stand at a range's bounds, the
verdicts from runs faked by release, and (slow) the real torch 1.13.1 finding a range too wide and one too
narrow through `quizgen check --matrix`."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from quizgen import pipeline
from quizgen.cards import loader
from quizgen.cards.model import Card
from quizgen.cli import cli
from quizgen.execution.protocol import Answer, Outcome
from quizgen.torch_versions import bounds, environments, installed
from tests.support.projects import write_project

INSTALLED = installed.release()
OLD = "1.13.1"
REAL_TORCHES = environments.root()  # where this user keeps them (read before conftest moves the cache)
RELEASES = ["1.13.1", "2.0.0", "2.1.0", "2.2.2", "2.3.0", INSTALLED]


@pytest.mark.parametrize(
    ("text", "clause", "inside", "outside"),
    [
        (">=2.1", (">=", "2.1"), ["2.1.0", "2.2.2", "2.3.0", INSTALLED], ["2.0.0", "1.13.1"]),
        (">2.1", (">", "2.1"), ["2.2.2", "2.3.0", INSTALLED], ["2.1.0", "2.0.0", "1.13.1"]),
        (">=2.2.1", (">=", "2.2.1"), ["2.2.2", "2.3.0", INSTALLED], ["2.1.0", "2.0.0", "1.13.1"]),
        ("<99", ("<", "99"), [INSTALLED, "2.3.0", "2.2.2", "2.1.0", "2.0.0", "1.13.1"], []),
        # Two bounds: each side is of its own clause, within the other.
        (">=2.0,<=2.3", (">=", "2.0"), ["2.0.0", "2.1.0", "2.2.2", "2.3.0"], ["1.13.1"]),
        (">=2.0,<=2.3", ("<=", "2.3"), ["2.3.0", "2.2.2", "2.1.0", "2.0.0"], [INSTALLED]),
    ],
)
def test_the_releases_on_either_side_of_a_bound_nearest_first(
    text: str, clause: bounds.Clause, inside: list[str], outside: list[str]
) -> None:
    assert bounds.sides(text, clause, RELEASES) == bounds.Sides(inside, outside)


def test_an_exact_or_excluded_version_is_no_bound() -> None:
    assert bounds.sides("!=2.0", ("!=", "2.0"), RELEASES) is None
    assert bounds.sides("==2.13", ("==", "2.13"), RELEASES) is None


def test_the_supported_range_moves_the_bound_or_drops_it() -> None:
    assert bounds.supported(">=2.5", (">=", "2.5"), "2.2.2") == ">=2.2.2"
    assert bounds.supported(">=2.5", (">=", "2.5"), "2.1.0") == ">=2.1"
    assert bounds.supported(">=2.0,<3", (">=", "2.0"), None) == "<3"
    assert bounds.supported(">=2.0, <3", ("<", "3"), "2.13.0") == ">=2.0,<=2.13"


# -- verdicts from runs faked by release -------------------------------------------------------------------

CARD = """\
deck: Bounds
setup: |
  import torch
cards:
  - id: ranged
    kind: value
    torch: "{range}"
    ask: "What is `x`?"
    code: |
      x = 1
    answer_expr: x
    answer: 1
    cite:
      n: x
    explain: "It is {{{{n}}}}."
"""


def _value(display: str) -> Answer:
    return {"type": "repr", "value": display, "display": display}  # type: ignore[typeddict-item]


def _gives(answer: str, cited: str = "1") -> Outcome:
    return Outcome(ok=True, value=_value(answer), cited={"n": _value(cited)})


MISSING = Outcome(
    ok=False, error="Traceback ...\nAttributeError: module 'torch.amp' has no attribute 'GradScaler'"
)


def _verdict(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, range_: str, by_release: dict[str, Outcome]
) -> tuple[list[str], dict[str, str], list[str]]:
    """bounds.check of a card with range `range_`, each release giving `by_release`'s outcome: the
    problems, the notes and the releases run (in order)."""
    write_project(tmp_path, {"deck.yaml": CARD.format(range=range_)})
    card: Card = next(c for d in loader.load_project(tmp_path / "cards") for c in d.cards)
    provisioned = [environments.Environment(r, tmp_path / r, 0) for r in by_release if r != INSTALLED]
    monkeypatch.setattr(bounds.environments, "listing", lambda: provisioned)
    asked: list[str] = []

    def run(options: Any, needed: dict[tuple[str, str], Card], *rest: Any) -> None:
        ran = rest[-1]
        for release, card_id in needed:
            asked.append(release)
            ran[(release, card_id)] = by_release[release]

    monkeypatch.setattr(bounds, "_run", run)
    found = bounds.check(
        None,  # type: ignore[arg-type]
        (INSTALLED,),
        [card],
        {card.id: {}},  # type: ignore[dict-item]
        {},
        lambda c: by_release[INSTALLED],
        None,  # type: ignore[arg-type]
        10.0,
    )
    at = f"{tmp_path / 'cards' / 'deck.yaml'}:7:12: card 'ranged' -> torch: "
    return [str(p).removeprefix(at) for p in found.problems], found.notes, asked


def test_a_range_too_narrow_is_an_error_with_the_range_execution_supports(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The fp16 card, as it was: `>=2.5`, and 2.2.2 and 2.3.0 give the same answer and values.
    runs = {"2.0.0": MISSING, "2.1.0": MISSING, "2.2.2": _gives("True"), "2.3.0": _gives("True")}
    problems, notes, asked = _verdict(tmp_path, monkeypatch, ">=2.5", {**runs, INSTALLED: _gives("True")})
    assert problems == [
        f"torch 2.3.0 lies outside the range `>=2.5` but gives what torch {INSTALLED} inside it gives (the "
        "answer `True`, the same output and cited values): the range is too narrow, it claims a change that "
        "execution does not show; execution supports `>=2.2.2`, as far as the provisioned releases tell "
        f"(torch 2.0.0, 2.1.0, 2.2.2, 2.3.0, {INSTALLED}); torch 2.1.0 differs (the card: fails "
        f"(AttributeError: module 'torch.amp' has no attribute 'GradScaler') on torch 2.1.0, runs on torch "
        f"{INSTALLED})"
    ]
    assert asked == ["2.3.0", "2.2.2", "2.1.0"]  # outward from the bound until one differs, no further
    assert notes == {  # (conftest's index listing: 2.4.1 and 2.5.0 stand at the bound)
        "bound >=2.5": "the torch bound `>=2.5` (1 card) ran on the provisioned releases nearest it, torch "
        f"2.3.0 and {INSTALLED}; 2.4.1 and 2.5.0 stand at it: `quizgen torch add 2.4.1`, `quizgen torch add "
        "2.5.0` to check it there"
    }


def test_a_range_too_wide_is_an_error_naming_both_values(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    runs = {OLD: _gives("0"), "2.0.0": _gives("1", cited="2"), "2.1.0": _gives("1"), INSTALLED: _gives("1")}
    problems, _, asked = _verdict(tmp_path, monkeypatch, ">=2.0", runs)
    assert problems == [
        f"torch 2.0.0 lies in the range `>=2.0` but does not give what torch {INSTALLED} gives (the cited "
        f"value {{{{n}}}}: `2` on torch 2.0.0, `1` on torch {INSTALLED}): the range is too wide; execution "
        f"supports `>=2.1`, as far as the provisioned releases tell (torch 1.13.1, 2.0.0, 2.1.0, {INSTALLED})"
    ]
    assert asked == ["2.0.0", OLD, "2.1.0"]


def test_a_range_execution_bears_out_passes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    runs = {OLD: MISSING, "2.0.0": _gives("1"), INSTALLED: _gives("1")}
    problems, notes, asked = _verdict(tmp_path, monkeypatch, ">=2.0", runs)
    assert (problems, notes, asked) == ([], {}, ["2.0.0", OLD])  # its own releases ran: nothing to note
    runs = {OLD: _gives("0"), "2.0.0": _gives("1"), INSTALLED: _gives("1")}  # another answer is a change too
    assert _verdict(tmp_path, monkeypatch, ">=2.0", runs)[0] == []


def test_running_out_of_time_is_no_verdict(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    slow = Outcome(ok=False, error="the card ran past its 60 s (timeout)")
    problems, notes, _ = _verdict(
        tmp_path, monkeypatch, ">=2.0", {OLD: _gives("1"), "2.0.0": slow, INSTALLED: _gives("1")}
    )
    assert problems == []
    assert [n.partition(" -> torch: ")[2] for n in notes.values() if "ran out" in n] == [
        "the range could not be told on torch 2.0.0: the card ran out of time twice there (the machine's, "
        "not torch's); run `quizgen check --matrix` again"
    ]


def test_a_check_without_the_matrix_runs_no_bound(
    tmp_path: Path, options: Callable[..., pipeline.Options], monkeypatch: pytest.MonkeyPatch
) -> None:
    write_project(tmp_path, {"deck.yaml": CARD.format(range=">=2.0")})
    monkeypatch.setattr(bounds, "check", lambda *a: pytest.fail("bounds ran"))
    pipeline.check(options(tmp_path))


# -- the real torch 1.13.1 -------------------------------------------------------------------------------

ZERO_GRAD = """\
    ask: "What is `w.grad` after the default `opt.zero_grad()`?"
    code: |
      w = torch.nn.Parameter(torch.ones(2))
      opt = torch.optim.SGD([w], lr=0.1)
      w.sum().backward()
      opt.zero_grad()
    answer_expr: w.grad
    answer: null
"""
ONE_BACKWARD = """\
    ask: "What is `w.grad` after one backward of `w.sum()`?"
    code: |
      w = torch.nn.Parameter(torch.ones(2))
      w.sum().backward()
    answer_expr: w.grad.tolist()
    answer: [1.0, 1.0]
"""


def real(too_wide: str = ">=1.13", too_narrow: str = ">=2.0") -> str:
    """Three cards: a range too wide, one too narrow (by default) and one that execution bears out."""
    ranged = [("too-wide", too_wide, ZERO_GRAD), ("too-narrow", too_narrow, ONE_BACKWARD)]
    cards = [*ranged, ("borne-out", ">=2.0", ZERO_GRAD)]
    return "deck: Bounds\nsetup: |\n  import torch\ncards:\n" + "".join(
        f"  - id: {card_id}\n    kind: value\n" + (f'    torch: "{range_}"\n' if range_ else "") + body
        for card_id, range_, body in cards
    )


@pytest.fixture
def torch_113_alone(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> str:
    """The real torch 1.13.1 (in CI provisioned where this user keeps environments when missing), alone
    in a folder of environments: what else this machine has provisioned does not change the verdicts."""
    monkeypatch.setenv("QUIZGEN_TORCH_DIR", str(REAL_TORCHES))
    if environments.python_for(OLD) is None:
        if os.environ.get("CI") != "true":
            pytest.skip(f"torch {OLD} is not provisioned (`quizgen torch add {OLD}`); CI provisions it")
        environments.provision(OLD)
    alone = tmp_path_factory.mktemp("torches")
    (alone / OLD).symlink_to(REAL_TORCHES / OLD, target_is_directory=True)
    monkeypatch.setenv("QUIZGEN_TORCH_DIR", str(alone))
    return OLD


@pytest.mark.slow
def test_real_torch_113_finds_a_range_too_wide_and_one_too_narrow(
    tmp_path: Path, torch_113_alone: str, runner: CliRunner, in_dir: Callable[[Path], None]
) -> None:
    write_project(tmp_path, {"deck.yaml": real()})
    (tmp_path / "quizgen.toml").write_text(f"torch = {json.dumps([INSTALLED])}\n", encoding="utf-8")
    in_dir(tmp_path)
    assert runner.invoke(cli, ["check", "-j", "1"]).exit_code == 0  # (a check runs no other torch)
    result = runner.invoke(cli, ["check", "--matrix", "-j", "1"])
    assert result.exit_code == 1
    shown = [line.removeprefix("Error: ") for line in result.output.splitlines() if "-> torch:" in line]
    assert shown == [
        f"cards/deck.yaml:7:12: card 'too-wide' -> torch: torch 1.13.1 lies in the range `>=1.13` but does "
        f"not give what torch {INSTALLED} gives (the answer: `tensor([0., 0.])` on torch 1.13.1, `None` on "
        f"torch {INSTALLED}): the range is too wide; execution supports `>={INSTALLED[:-2]}`, as far as the "
        f"provisioned releases tell (torch 1.13.1, {INSTALLED})",
        f"cards/deck.yaml:18:12: card 'too-narrow' -> torch: torch 1.13.1 lies outside the range `>=2.0` but "
        f"gives what torch {INSTALLED} inside it gives (the answer `[1.0, 1.0]`, the same output and cited "
        "values): the range is too narrow, it claims a change that execution does not show; execution "
        f"supports no range, as far as the provisioned releases tell (torch 1.13.1, {INSTALLED})",
    ]
    # The ranges execution supports, as it said: the check passes, and names what it could not run.
    fixed = real(too_wide=f">={INSTALLED[:-2]}", too_narrow="")
    write_project(tmp_path, {"deck.yaml": fixed})
    result = runner.invoke(cli, ["check", "--matrix", "-j", "1"])
    assert result.exit_code == 0, result.output
    assert (  # the bound's own releases are named, to provision
        "note: the torch bound `>=2.0` (1 card) ran on the provisioned releases nearest it, torch 1.13.1 "
        f"and {INSTALLED}; 2.0.0 stands at it: `quizgen torch add 2.0.0` to check it there"
    ) in result.output


@pytest.mark.slow
def test_timings_name_a_cards_run_on_another_torch_of_the_matrix(
    tmp_path: Path, torch_113_alone: str, runner: CliRunner, in_dir: Callable[[Path], None]
) -> None:
    """`--timings` lists each card's jobs run on another torch of the matrix too, named with the version
    (a card slow on torch 1.13.1 alone was not listed before)."""
    deck = (
        "deck: Timed\nsetup: |\n  import torch\ncards:\n  - id: two\n    kind: value\n    ask: q\n"
        "    code: |\n      x = torch.ones(2).sum().item()\n    answer_expr: x\n"
    )
    write_project(tmp_path, {"deck.yaml": deck})
    (tmp_path / "quizgen.toml").write_text(f"torch = {json.dumps([OLD, INSTALLED])}\n", encoding="utf-8")
    in_dir(tmp_path)
    result = runner.invoke(cli, ["check", "--matrix", "-j", "1", "--timings"])
    assert result.exit_code == 0, result.output
    timed = result.output.split("slowest cards run in this build:\n")[1].splitlines()
    assert {line.split(" s  ", 1)[1] for line in timed} == {
        "cards/deck.yaml:5:5: card 'two'",
        f"cards/deck.yaml:5:5: card 'two' (torch {OLD})",
    }
