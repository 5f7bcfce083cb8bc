"""Cards judged on one torch version of the matrix (quizgen/torch_versions/judged.py): `judged_on: "1.13.1"`.

Fast tests stand in for torch 1.13.1 with what the lock recorded of the card's run there: no environment
is provisioned (QUIZGEN_TORCH_DIR points at an empty folder, as on a machine that never ran `quizgen
torch add`). The slow test builds such a card from scratch with the real torch 1.13.1.
"""

from __future__ import annotations

import json
import os
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from quizgen import pipeline, planning
from quizgen.cards import loader
from quizgen.cards.model import Tolerance
from quizgen.cli import cli
from quizgen.errors import CardErrors
from quizgen.execution.cache import Cache
from quizgen.torch_versions import environments, judged
from tests.support.torch_matrix import INSTALLED, OLD, REAL_TORCHES, published
from tests.support.torch_matrix import make as make_project

CARD = """\
deck: Judged
setup: |
  import torch
cards:
  - id: old-zero-grad
    kind: value
    judged_on: "{version}"
    ask: "On torch {version}, what is `w.grad` after `opt.zero_grad()`?"
    code: |
      w = torch.nn.Parameter(torch.ones({size}))
      opt = torch.optim.SGD([w], lr=0.1)
      w.sum().backward()
      opt.zero_grad()
    answer_expr: w.grad
    answer: {answer}
    variants:
      - label: "the 2.0 default"
        replace: {{"opt.zero_grad()": "opt.zero_grad(set_to_none=True)"}}
      - label: "nothing cleared"
        remove: opt.zero_grad()
    cite:
      default: __import__("inspect").signature(opt.zero_grad).parameters["set_to_none"].default
    explain: "It is `{{{{answer}}}}`: the default there is `set_to_none={{{{default}}}}`."
"""

ZEROS = "tensor([0., 0.])"


def deck(answer: str = f'"{ZEROS}"', version: str = OLD, size: int = 2) -> str:
    return CARD.format(answer=answer, version=version, size=size)


def make(root: Path, text: str, versions: list[str] | None = None) -> Path:
    return make_project(root, text, versions or [OLD, INSTALLED])


def tensor(values: list[float]) -> dict[str, Any]:
    shown = "tensor([" + ", ".join(f"{v:g}." for v in values) + "])"
    return {"type": "tensor", "value": values, "display": shown, "dtype": "float32", "shape": [len(values)]}


def ran(value: dict[str, Any], **more: Any) -> dict[str, Any]:
    return {"ok": True, "output": "", "value": value, "torch_version": f"{OLD}+cu117", **more}


def record(root: Path, main: dict[str, Any] | None = None) -> None:
    """Write a lock that recorded the card's run on torch 1.13.1 (its jobs as they are now)."""
    decks, problems = loader.load(root / "cards", Tolerance(), "choice")
    assert not problems
    plan = planning.plan_jobs(decks, Cache(root / "no-cache", enabled=False))
    card = decks[0].cards[0]
    none = {"type": "none", "value": None, "display": "None"}
    parts = {"variants[0]": ran(none), "variants[1]": ran(tensor([1.0, 1.0]))}
    default = {"default": {"type": "bool", "value": False, "display": "False"}}
    outcome = main or ran(tensor([0.0, 0.0]), cited=default, parts=parts)
    entry = {"torch": OLD, "job": judged.content(plan, card), "outcome": outcome}
    lock = {"format": 1, "cards": {}, "notetypes": {}, "removed": {}, "judged": {card.id: entry}}
    (root / "cards" / "quizgen.lock").write_text(json.dumps(lock), encoding="utf-8")


def errors_of(options: pipeline.Options) -> list[str]:
    with pytest.raises(CardErrors) as caught:
        pipeline.check(options)
    return [str(p) for p in caught.value.problems]


@pytest.fixture(autouse=True)
def _nothing_provisioned(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("QUIZGEN_TORCH_DIR", str(tmp_path_factory.mktemp("no-torches")))


def test_the_declared_answer_is_checked_against_the_named_versions_value(
    tmp_path: Path, options: Callable[..., pipeline.Options]
) -> None:
    root = make(tmp_path, deck("null"))  # the installed torch's answer: wrong for torch 1.13.1
    record(root)
    where = f"{root / 'cards' / 'deck.yaml'}:15:13: card 'old-zero-grad' -> answer"
    assert errors_of(options(root)) == [
        f"{where}: on torch {OLD}, which the card is judged on: declared answer None but execution gives "
        f"{ZEROS}: null was declared, execution gives a float32 tensor of shape [2]"
    ]
    make(root, deck())
    record(root)
    report = pipeline.check(options(root))
    assert report.decks[0].cards[0].answer == tensor([0.0, 0.0])


def test_learners_are_judged_on_the_named_versions_recorded_run(
    tmp_path: Path, options: Callable[..., pipeline.Options]
) -> None:
    root = make(tmp_path, deck())
    record(root)
    lock_before = (root / "cards" / "quizgen.lock").read_text()
    report = pipeline.build(options(root))
    assert report.torch_notes == [
        f"torch {OLD} not provisioned: using the answers recorded in quizgen.lock; `quizgen torch add {OLD}` "
        "to verify"
    ]
    vc = report.decks[0].cards[0]
    assert vc.answer == tensor([0.0, 0.0])  # the answer typed or picked is judged against
    assert vc.outcome is not None and vc.outcome.parts is not None
    assert [p.value for p in vc.outcome.parts.values()] == [  # the wrong choices: 1.13.1's too
        {"type": "none", "value": None, "display": "None"},
        tensor([1.0, 1.0]),
    ]
    assert vc.card.explain == f"It is `{ZEROS}`: the default there is `set_to_none=False`."  # type: ignore[attr-defined]
    assert vc.torch is not None and vc.torch.answers == {OLD: ZEROS} and vc.torch.judged == OLD
    cards = json.loads((root / "build" / "cards.json").read_text())
    shown = json.dumps(cards)
    assert '"judged_on": "1.13.1"' in shown and '"display": "tensor([1., 1.])"' in shown
    raw = "".join(p.read_text() for p in (root / "build" / "quiz").rglob("*.html"))
    judge = '"judge": {"answer": {"dtype": "float32", "shape": [2], "type": "tensor", "value": [0.0, 0.0]}'
    assert judge in raw  # what the quiz judges a typed or picked answer against: 1.13.1's zeros
    page = published(root)
    version = f'<span class="torch-version">{OLD}</span>'
    # Judged on the lock's record (the build says so once): the page and note say what it is verified
    # and judged on, as a build that ran 1.13.1 writes them.
    assert f'<p class="provenance">Verified with torch {version}.</p>' in page
    assert f"The question is about torch {OLD}: answers are judged on torch {OLD}." in page
    assert f'1.13<div class="qg-judged-on">judged on torch {OLD}</div>' in page
    # The lock keeps the record as it was (a stable, diffable form), and not as the matrix's answers.
    lock = json.loads((root / "cards" / "quizgen.lock").read_text())
    entry, before = lock["judged"]["old-zero-grad"], json.loads(lock_before)["judged"]["old-zero-grad"]
    assert (entry["torch"], entry["job"]) == (before["torch"], before["job"])
    assert entry["outcome"]["value"] == tensor([0.0, 0.0])
    assert entry["outcome"]["parts"]["variants[1]"]["value"] == tensor([1.0, 1.0])
    assert "torch" not in lock
    first = (root / "cards" / "quizgen.lock").read_bytes()
    pipeline.build(options(root, use_cache=False))
    assert (root / "cards" / "quizgen.lock").read_bytes() == first


def test_a_forged_record_is_the_repositorys_word_said_by_the_build(
    tmp_path: Path, runner: CliRunner, in_dir: Callable[[Path], None]
) -> None:
    # An attacker's lock records 7s for a card whose code gives zeros, and declares 7s: without torch
    # 1.13.1 here nothing can check it, so the build uses it and says so; `check --matrix` verifies it.
    root = make(tmp_path, deck(answer='"tensor([7., 7.])"'))
    none = {"type": "none", "value": None, "display": "None"}
    parts = {"variants[0]": ran(none), "variants[1]": ran(tensor([1.0, 1.0]))}
    default = {"default": {"type": "bool", "value": False, "display": "False"}}
    record(root, ran(tensor([7.0, 7.0]), cited=default, parts=parts))
    in_dir(root)
    result = runner.invoke(cli, ["build", "-j", "1"])
    assert result.exit_code == 0, result.output
    assert f"note: torch {OLD} not provisioned: using the answers recorded in quizgen.lock" in result.output
    assert "1 card in 1 deck verified (0 executed, 0 from cache, 3 from quizgen.lock)" in result.output
    page = published(root)
    assert "tensor([7., 7.])" in page
    info = json.loads((root / "build" / "build-info.json").read_text())
    assert info["torch"][OLD] == {"cards": 1, "ran here": 0, "from lock": ["old-zero-grad"]}
    result = runner.invoke(cli, ["check", "--matrix", "-j", "1"])  # what verifies it
    assert result.exit_code == 1 and f"`quizgen torch add {OLD}`, then run again" in result.output


def test_a_card_edited_since_its_record_is_refused_until_provisioned(
    tmp_path: Path, runner: CliRunner, in_dir: Callable[[Path], None]
) -> None:
    root = make(tmp_path, deck())
    record(root)
    (root / "cards" / "deck.yaml").write_text(textwrap.dedent(deck(size=3)))  # edited after it ran
    in_dir(root)
    result = runner.invoke(cli, ["build", "-j", "1"])
    assert result.exit_code == 1
    assert (
        "cards/deck.yaml:7:16: card 'old-zero-grad' -> judged_on: judged on torch 1.13.1, which is not "
        "provisioned, and quizgen.lock records it as it was before it was edited: `quizgen torch add "
        "1.13.1`, then build again"
    ) in result.output
    assert "Traceback" not in result.output and not (root / "build" / "quiz").exists()
    (root / "cards" / "quizgen.lock").unlink()  # no record at all
    result = runner.invoke(cli, ["check", "-j", "1"])
    assert result.exit_code == 1
    assert "quizgen.lock records no run of it: `quizgen torch add 1.13.1`, then build again" in result.output
    record(root)  # recorded as it is now: it builds
    result = runner.invoke(cli, ["build", "-j", "1"])
    assert result.exit_code == 0, result.output
    for command in ("check", "build"):  # verifying the whole matrix needs the version itself
        result = runner.invoke(cli, [command, "--matrix", "-j", "1"])
        assert result.exit_code == 1
        assert result.output == (
            f"Error: torch {OLD} of the project's matrix is not provisioned: `quizgen torch add {OLD}`, "
            "then run again\n"
        )


@pytest.mark.parametrize(
    ("version", "extra", "field", "message"),
    [
        (
            "1.12.1",
            "",
            "judged_on",
            f"torch 1.12.1 is not in the project's torch matrix (torch {OLD}, {INSTALLED}): a card is judged "
            "on a version the project is verified on; add it to quizgen.toml's `torch` list",
        ),
        (
            "1.13",
            "",
            "judged_on",
            "expected a torch release of the project's matrix, three numbers like '1.13.1', not '1.13'",
        ),
        (
            OLD,
            "varies_with_torch: true",
            "varies_with_torch",
            "a card judged on one torch version runs on it alone: its answer cannot vary across versions",
        ),
        (
            OLD,
            'torch: ">=1.13"',
            "torch",
            "a card judged on one torch version runs on it alone: leave out its `torch` range",
        ),
    ],
)
def test_a_version_the_card_cannot_be_judged_on_is_a_located_error(
    tmp_path: Path,
    options: Callable[..., pipeline.Options],
    version: str,
    extra: str,
    field: str,
    message: str,
) -> None:
    text = deck(version=version)
    if extra:
        text = text.replace("    kind: value\n", f"    kind: value\n    {extra}\n")
    root = make(tmp_path, text)
    found = errors_of(options(root))
    assert len(found) == 1 and found[0].endswith(f"card 'old-zero-grad' -> {field}: {message}")


def test_a_card_judged_on_the_installed_torch_runs_with_the_rest(
    tmp_path: Path, options: Callable[..., pipeline.Options]
) -> None:
    text = deck("null", version=INSTALLED).replace("set_to_none=True", "set_to_none=False")
    root = make(tmp_path, text, [INSTALLED])
    report = pipeline.build(options(root))
    assert report.torch_notes == [] and report.decks[0].cards[0].answer == {
        "type": "none",
        "value": None,
        "display": "None",
    }
    assert f"answers are judged on torch {INSTALLED}" in published(root)
    assert "judged" not in json.loads((root / "cards" / "quizgen.lock").read_text())


# -- the real torch 1.13.1 -------------------------------------------------------------------------------


@pytest.mark.slow
def test_real_torch_113_judges_a_card_built_from_scratch(
    tmp_path: Path, options: Callable[..., pipeline.Options], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("QUIZGEN_TORCH_DIR", str(REAL_TORCHES))
    if environments.python_for(OLD) is None:
        if os.environ.get("CI") != "true":
            pytest.skip(f"torch {OLD} is not provisioned (`quizgen torch add {OLD}`); CI provisions it")
        environments.provision(OLD)
    root = make(tmp_path, deck("null"))  # no lock: nothing recorded
    assert "declared answer None but execution gives tensor([0., 0.])" in errors_of(options(root))[0]
    make(root, deck())
    report = pipeline.build(options(root, matrix=True))
    assert report.torch_notes == []
    vc = report.decks[0].cards[0]
    assert vc.answer == tensor([0.0, 0.0]) and vc.torch_version.startswith(OLD)
    assert vc.outcome is not None and vc.outcome.parts is not None
    assert [p.value["display"] for p in vc.outcome.parts.values() if p.value] == ["None", "tensor([1., 1.])"]
    assert vc.card.explain == f"It is `{ZEROS}`: the default there is `set_to_none=False`."  # type: ignore[attr-defined]
    recorded = json.loads((root / "cards" / "quizgen.lock").read_text())["judged"]["old-zero-grad"]
    assert recorded["torch"] == OLD and recorded["outcome"]["value"] == tensor([0.0, 0.0])
    shown = published(root)
    # Without the environment (elsewhere, and no build cache): the record, the same outputs but for
    # where they say the answers came from.
    monkeypatch.setenv("QUIZGEN_TORCH_DIR", str(tmp_path / "elsewhere"))
    report = pipeline.build(options(root, use_cache=False))
    assert report.torch_notes[0].startswith(f"torch {OLD} not provisioned: using the answers recorded")
    recalled = published(root)
    assert recalled == shown  # the build says where the answers came from, not the pages and notes


@pytest.mark.slow
def test_real_torch_113_drift_leaves_out_a_card_about_one_version(
    tmp_path: Path, runner: CliRunner, in_dir: Callable[[Path], None], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("QUIZGEN_TORCH_DIR", str(REAL_TORCHES))
    if environments.python_for(OLD) is None:
        pytest.skip(f"torch {OLD} is not provisioned (`quizgen torch add {OLD}`)")
    # Judged on the installed torch (None), and a card about every version: drift compares the latter.
    text = deck("null", version=INSTALLED).replace("set_to_none=True", "set_to_none=False")
    text += (
        "  - id: sum\n"
        "    kind: value\n"
        '    ask: "What is `torch.ones(2).sum().item()`?"\n'
        "    code: s = torch.ones(2).sum().item()\n"
        "    answer_expr: s\n"
        "    answer: 2.0\n"
    )
    root = make(tmp_path, text, [INSTALLED])
    in_dir(root)
    result = runner.invoke(cli, ["check", "-j", "1", "--torch", OLD])
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[-1].startswith(
        f"0 cards of 1 answer differently on torch {OLD} (1 executed, "
    )


def test_a_version_is_told_once_when_both_the_matrix_and_a_judged_card_use_its_record(
    tmp_path: Path, options: Callable[..., pipeline.Options]
) -> None:
    plain = """\
  - id: ones
    kind: value
    ask: "What is `torch.ones(2).sum()`?"
    code: |
      total = torch.ones(2).sum()
    answer_expr: total
"""
    root = make(tmp_path, deck() + plain)
    record(root)
    report = pipeline.build(options(root))
    assert report.torch_notes == [  # the matrix's note (it counts cards without a record) alone
        f"torch {OLD} not provisioned: using the answers recorded in quizgen.lock (1 of 1 cards have none "
        f"recorded for what they run now); `quizgen torch add {OLD}` to verify"
    ]
