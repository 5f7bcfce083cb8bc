"""The torch matrix (quizgen/torch_versions/matrix.py): a project's cards verified on several torch versions.

Fast tests stand in for an older torch with what the lock recorded for it: the session's cache
directory (conftest's) has no environment provisioned, as a machine that never ran `quizgen torch add`.
Slow tests run the real torch 1.13.1 (provisioned in the user's cache; in CI provisioned if missing).
"""

from __future__ import annotations

import json
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from quizgen import pipeline
from quizgen.cli import cli
from quizgen.constants import MAX_ANSWER_TEXT
from quizgen.errors import CardErrors
from quizgen.project import settings
from quizgen.torch_versions import changed, environments
from tests.support.paths import REPO
from tests.support.projects import write_project
from tests.support.torch_matrix import INSTALLED, OLD, deck, errors_of, make, published, record

# -- settings ------------------------------------------------------------------------------------------


def test_the_matrix_is_read_oldest_first_and_defaults_to_the_installed_torch(tmp_path: Path) -> None:
    (tmp_path / "cards").mkdir()
    assert settings.load(tmp_path / "cards").torch == ()
    (tmp_path / "quizgen.toml").write_text('torch = ["2.13.0", "1.13.1"]\n[quiz]\ntitle = "T"\n')
    assert settings.load(tmp_path / "cards").torch == ("1.13.1", "2.13.0")
    (tmp_path / "quizgen.toml").unlink()
    (tmp_path / "pyproject.toml").write_text('[tool.quizgen]\ntorch = ["1.13.1"]\n')
    assert settings.load(tmp_path / "cards").torch == ("1.13.1",)


@pytest.mark.parametrize(
    ("written", "message"),
    [
        ('torch = "1.13.1"', 'expected a list of torch versions, e.g. torch = ["1.13.1", "2.13.0"]'),
        ("torch = []", 'expected a list of torch versions, e.g. torch = ["1.13.1", "2.13.0"]'),
        (
            'torch = ["1.13"]',
            'expected a list of torch versions, e.g. torch = ["1.13.1", "2.13.0"]; \'1.13\' is not a torch '
            "release (three numbers: 1.13.1)",
        ),
        ('torch = ["1.13.1", "1.13.1"]', "torch version 1.13.1 is listed twice"),
    ],
)
def test_a_bad_matrix_is_an_error_at_its_line(tmp_path: Path, written: str, message: str) -> None:
    (tmp_path / "cards").mkdir()
    (tmp_path / "quizgen.toml").write_text(f"# the matrix\n{written}\n")
    with pytest.raises(CardErrors) as caught:
        settings.load(tmp_path / "cards")
    assert [str(p) for p in caught.value.problems] == [f"{tmp_path / 'quizgen.toml'}:2 -> torch: {message}"]


def test_a_bad_card_range_is_a_located_error(
    tmp_path: Path, options: Callable[..., pipeline.Options]
) -> None:
    root = make(tmp_path, deck('torch: "2.0"'), [INSTALLED])
    assert errors_of(options(root)).endswith(
        "card 'zero-grad-default' -> torch: expected a torch version range such as '>=2.0' or '>=1.13,<2.0' "
        "(operators >=, >, <=, <, ==, !=), not '2.0'"
    )
    make(tmp_path, deck('torch: "<2.0"'), [INSTALLED])
    assert errors_of(options(root)).endswith(
        f"card 'zero-grad-default' -> torch: the range leaves out the installed torch {INSTALLED}, which "
        "runs every card"
    )


# -- the default: the installed torch alone -----------------------------------------------------------


def test_a_project_without_a_matrix_builds_as_before(
    tmp_path: Path, options: Callable[..., pipeline.Options]
) -> None:
    write_project(tmp_path, {"deck.yaml": deck()})
    report = pipeline.build(options(tmp_path))
    assert report.torch_notes == []
    assert report.decks[0].cards[0].torch is None
    assert "torch" not in json.loads((tmp_path / "cards" / "quizgen.lock").read_text())
    shown = published(tmp_path)
    assert f'with torch <span class="torch-version">{report.decks[0].cards[0].torch_version}</span>.' in shown
    assert "torch-answers" not in shown and "qg-by-torch" not in shown


# -- another version, from what the lock recorded -------------------------------------------------------


def test_a_card_that_differs_across_the_matrix_is_refused_until_declared(
    tmp_path: Path, options: Callable[..., pipeline.Options]
) -> None:
    root = make(tmp_path, deck(), [OLD, INSTALLED])
    record(root, {OLD: "tensor([0., 0.])"})
    assert errors_of(options(root)) == (
        f"{root / 'cards' / 'deck.yaml'}:14:13: card 'zero-grad-default' -> answer: answers "
        f"`tensor([0., 0.])` on torch {OLD} but `None` on torch {INSTALLED}; if the change is what the card "
        "teaches, declare it: `varies_with_torch: true`; if the card is about one side, give the versions it "
        "is about: "
        f'`torch: ">{OLD}"`, say'
    )
    make(root, deck("varies_with_torch: true"), [OLD, INSTALLED])
    record(root, {OLD: "tensor([0., 0.])"})
    report = pipeline.build(options(root))
    known = report.decks[0].cards[0].torch
    assert known is not None and known.answers == {OLD: "tensor([0., 0.])", INSTALLED: "None"}


def test_a_declared_card_shows_each_versions_answer_in_the_quiz_and_anki(
    tmp_path: Path, options: Callable[..., pipeline.Options]
) -> None:
    root = make(tmp_path, deck("varies_with_torch: true"), [OLD, INSTALLED])
    record(root, {OLD: "tensor([0., 0.])"})
    pipeline.build(options(root))
    shown = published(root)
    assert (  # 1.13.1 is not provisioned here: its answer is the lock's, which the build says, not the page
        '<p class="provenance">Verified with torch <span class="torch-version">1.13.1</span>, '
        f'<span class="torch-version">{INSTALLED}</span>.</p>'
    ) in shown
    assert (
        "The answer depends on the torch version: torch 1.13.1: <code>tensor([0., 0.])</code> · torch "
        f"{INSTALLED}: <code>None</code> (answers are judged on torch {INSTALLED})."
    ) in shown
    major_minor = ".".join(INSTALLED.split(".")[:2])
    assert (  # the Anki note's Torch field: "verified with torch 1.13, 2.13" and the answers
        f"1.13, {major_minor}"
        '<div class="qg-by-torch">the answer depends on it: torch 1.13.1: '
        '<code class="tex2jax_ignore">tensor(&#91;0., 0.])</code> · torch '
        f'{INSTALLED}: <code class="tex2jax_ignore">None</code> (judged on {INSTALLED})</div>'
    ) in shown
    lock = json.loads((root / "cards" / "quizgen.lock").read_text())
    assert lock["torch"][OLD]["zero-grad-default"]["answer"] == "tensor([0., 0.])"
    assert INSTALLED not in lock["torch"]  # the installed torch's answers are the build's own


def test_the_version_where_an_answer_changed_is_computed_for_the_text(
    tmp_path: Path, options: Callable[..., pipeline.Options]
) -> None:
    explain = "The default changed after torch {{changed_after}}: `None` since torch {{changed_in}}."
    root = make(tmp_path, deck("varies_with_torch: true", explain), [OLD, "2.0.0", "2.1.0", INSTALLED])
    record(root, {OLD: "tensor([0., 0.])", "2.0.0": "None", "2.1.0": "None"})
    report = pipeline.build(options(root))
    card = report.decks[0].cards[0].card
    assert card.explain == "The default changed after torch 1.13.1: `None` since torch 2.0.0."  # type: ignore[attr-defined]
    # An answer that changed back: the change that counts is the last one.
    record(root, {OLD: "None", "2.0.0": "tensor([0., 0.])", "2.1.0": "None"})
    card = pipeline.build(options(root)).decks[0].cards[0].card
    assert card.explain == "The default changed after torch 2.0.0: `None` since torch 2.1.0."  # type: ignore[attr-defined]


def test_a_change_cited_but_not_computed_is_an_error(
    tmp_path: Path, options: Callable[..., pipeline.Options]
) -> None:
    root = make(tmp_path, deck("varies_with_torch: true", "Since torch {{changed_in}}."), [OLD, INSTALLED])
    record(root, {OLD: "None"})
    assert errors_of(options(root)).endswith(
        "card 'zero-grad-default' -> explain: cites {{changed_in}}, but its answer is `None` on every torch "
        f"version known (torch {OLD}, {INSTALLED}); `quizgen build --matrix` runs every version of the matrix"
    )


def test_without_the_older_environment_the_lock_is_used_and_said_once(
    tmp_path: Path, runner: CliRunner, in_dir: Callable[[Path], None]
) -> None:
    root = make(tmp_path, deck("varies_with_torch: true"), [OLD, INSTALLED])
    record(root, {OLD: "tensor([0., 0.])"})
    assert environments.python_for(OLD) is None  # conftest's cache directory: nothing provisioned
    in_dir(root)
    result = runner.invoke(cli, ["build", "-j", "1"])
    assert result.exit_code == 0, result.output
    note = (
        f"note: torch {OLD} not provisioned: using the answers recorded in quizgen.lock; "
        f"`quizgen torch add {OLD}` to verify"
    )
    assert result.output.count(note) == 1
    assert "tensor([0., 0.])" in published(root)
    # A card changed since: nothing recorded for what it runs now, and the note says so.
    (root / "cards" / "deck.yaml").write_text(
        textwrap.dedent(deck("varies_with_torch: true")).replace("torch.ones(2)", "torch.ones(3)")
    )
    result = runner.invoke(cli, ["check", "-j", "1"])
    assert result.exit_code == 0, result.output
    assert result.output.count(f"note: torch {OLD} not provisioned") == 1
    assert "(1 of 1 cards have none recorded for what they run now)" in result.output
    # A recorded answer over the size an executed one may have is not one (a lock is the repository's).
    record(root, {OLD: "x" * (MAX_ANSWER_TEXT + 1)})
    result = runner.invoke(cli, ["build", "-j", "1"])
    assert result.exit_code == 0, result.output
    assert "(1 of 1 cards have none recorded for what they run now)" in result.output
    assert "x" * MAX_ANSWER_TEXT not in published(root)


def test_a_lock_nested_past_pythons_recursion_is_a_clear_error(
    tmp_path: Path, runner: CliRunner, in_dir: Callable[[Path], None]
) -> None:
    root = make(tmp_path, deck("varies_with_torch: true"), [OLD, INSTALLED])  # the matrix reads the lock
    nested = '{"format": 1, "torch": ' + "[" * 100_000 + "]" * 100_000 + "}"
    (root / "cards" / "quizgen.lock").write_text(nested)
    in_dir(root)
    result = runner.invoke(cli, ["build", "-j", "1"])
    assert result.exit_code == 1 and not isinstance(result.exception, RecursionError)
    assert "cards/quizgen.lock: not a quizgen lock file (maximum recursion depth exceeded" in result.output


def test_verifying_the_whole_matrix_refuses_a_version_not_provisioned(
    tmp_path: Path, runner: CliRunner, in_dir: Callable[[Path], None]
) -> None:
    root = make(tmp_path, deck("varies_with_torch: true"), [OLD, INSTALLED])
    record(root, {OLD: "tensor([0., 0.])"})
    in_dir(root)
    for command in ("check", "build"):
        result = runner.invoke(cli, [command, "--matrix", "-j", "1"])
        assert result.exit_code == 1
        assert result.output == (
            f"Error: torch {OLD} of the project's matrix is not provisioned: `quizgen torch add {OLD}`, "
            "then run again\n"
        )
    assert not (root / "build" / "quiz").exists()


def test_a_card_restricted_by_its_range_is_not_run_on_the_versions_outside(
    tmp_path: Path, options: Callable[..., pipeline.Options]
) -> None:
    root = make(tmp_path, deck('torch: ">=2.0"'), [OLD, INSTALLED])
    record(root, {OLD: "tensor([0., 0.])"})  # left out: the card is not about 1.13.1
    report = pipeline.build(options(root))
    known = report.decks[0].cards[0].torch
    assert known is not None and known.answers == {INSTALLED: "None"}
    assert f'with torch <span class="torch-version">{INSTALLED}</span>.</p>' in published(root)
    assert "torch" not in json.loads((root / "cards" / "quizgen.lock").read_text())


def test_the_lock_is_stable_from_build_to_build(
    tmp_path: Path, options: Callable[..., pipeline.Options]
) -> None:
    root = make(tmp_path, deck("varies_with_torch: true"), [OLD, INSTALLED])
    record(root, {OLD: "tensor([0., 0.])"})
    pipeline.build(options(root))
    first = (root / "cards" / "quizgen.lock").read_bytes()
    pipeline.build(options(root, use_cache=False))
    assert (root / "cards" / "quizgen.lock").read_bytes() == first
    assert b'"torch": {\n  "1.13.1": {\n   "zero-grad-default": {\n    "answer": "tensor([0., 0.])",' in first


def test_declaring_a_change_on_a_matrix_of_one_version_is_a_warning(
    tmp_path: Path, options: Callable[..., pipeline.Options]
) -> None:
    root = make(tmp_path, deck("varies_with_torch: true"), [INSTALLED])
    report = pipeline.check(options(root))
    assert [p.message for p in report.warnings] == [
        f"varies_with_torch, but the project's torch matrix is torch {INSTALLED} alone"
    ]


# -- the real torch 1.13.1 -------------------------------------------------------------------------------


@pytest.fixture(autouse=True)
def _nothing_provisioned(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """No torch environment but those a test asks for (`torch_113`), wherever the user keeps them."""
    monkeypatch.setenv("QUIZGEN_TORCH_DIR", str(tmp_path_factory.mktemp("no-torches")))


@pytest.mark.slow
def test_real_torch_113_refuses_the_undeclared_change_then_shows_both_answers(
    tmp_path: Path, torch_113: str, options: Callable[..., pipeline.Options], monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make(tmp_path, deck(), [OLD, INSTALLED])
    assert "answers `tensor([0., 0.])` on torch 1.13.1 but `None` on torch" in errors_of(options(root))
    make(root, deck("varies_with_torch: true", "None since torch {{changed_in}}."), [OLD, INSTALLED])
    report = pipeline.build(options(root, matrix=True))
    assert report.torch_notes == []
    assert report.torch_ran == {OLD: (0, 1)}  # its run on 1.13.1 was cached, by that version
    vc = report.decks[0].cards[0]
    assert vc.torch is not None and vc.torch.answers == {OLD: "tensor([0., 0.])", INSTALLED: "None"}
    assert vc.card.explain == f"None since torch {INSTALLED}."  # type: ignore[attr-defined]
    shown = published(root)
    # The same build without the environment (the cache directory elsewhere): the lock's answers, the
    # same outputs (the build, not the page, says where 1.13.1's answers came from).
    monkeypatch.delenv("QUIZGEN_TORCH_DIR")
    monkeypatch.setenv("QUIZGEN_CACHE_DIR", str(tmp_path / "elsewhere"))
    report = pipeline.build(options(root, use_cache=False))
    assert report.torch_notes == [
        f"torch {OLD} not provisioned: using the answers recorded in quizgen.lock; `quizgen torch add {OLD}` "
        "to verify"
    ]
    recalled = published(root)
    assert recalled == shown


@pytest.mark.slow
def test_real_torch_113_a_missing_api_needs_the_cards_range(
    tmp_path: Path, torch_113: str, runner: CliRunner, in_dir: Callable[[Path], None]
) -> None:
    card = """\
    deck: Amp
    setup: |
      import torch
    cards:
      - id: cpu-scaler
        kind: value
        {range}ask: "What is the CPU GradScaler's default scale?"
        code: |
          scaler = torch.amp.GradScaler("cpu")
        answer_expr: scaler.get_scale()
        answer: 65536.0
    """
    root = make(tmp_path, textwrap.dedent(card).format(range=""), [OLD, INSTALLED])
    in_dir(root)
    result = runner.invoke(cli, ["check", "--matrix", "-j", "1"])
    assert result.exit_code == 1
    assert (
        f"card 'cpu-scaler' -> code: fails on torch {OLD} (it runs on torch {INSTALLED}); a card about the "
        f'versions that have what it uses says so: `torch: ">{OLD}"`, or a range that leaves {OLD} out:'
    ) in result.output
    assert "AttributeError: module 'torch.amp' has no attribute 'GradScaler'" in result.output
    make(root, textwrap.dedent(card).format(range='torch: ">=2.3"\n    '), [OLD, INSTALLED])
    result = runner.invoke(cli, ["check", "--matrix", "-j", "1"])
    assert result.exit_code == 0, result.output


@pytest.mark.slow
def test_real_torch_113_verifies_the_shipped_deck(
    torch_113: str, runner: CliRunner, in_dir: Callable[[Path], None], tmp_path: Path
) -> None:
    in_dir(REPO)
    result = runner.invoke(cli, ["check", "--matrix", "-j", "2", "--out", str(tmp_path / "build")])
    assert result.exit_code == 0, result.output


@pytest.mark.slow
def test_real_torch_113_its_pool_starts_with_the_installed_ones_and_runs_its_jobs(
    tmp_path: Path, torch_113: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Cards changed since the last check: the pool of every other version of the matrix starts with the
    installed torch's, before a card is read (its torch imports on an idle core meanwhile), and runs that
    version's jobs; an unchanged project starts none."""
    from quizgen.execution import pool as pools

    started: list[tuple[str, bool]] = []  # (the pool's torch: "installed" or a version, read yet)
    loaded: list[bool] = []

    class Recorded(pools.Pool):
        def __init__(self, *args: object, **kwargs: object) -> None:
            python = kwargs.get("python", args[4] if len(args) > 4 else None)
            started.append((OLD if python else "installed", bool(loaded)))
            super().__init__(*args, **kwargs)  # type: ignore[arg-type]

    def load(*args: object) -> object:
        loaded.append(True)
        return reading(*args)

    reading = pipeline._load
    monkeypatch.setattr(pools, "Pool", Recorded)
    monkeypatch.setattr(pipeline, "_load", load)
    root = make(tmp_path, deck("varies_with_torch: true"), [OLD, INSTALLED])
    report = pipeline.build(pipeline.Options(cards_dir=root / "cards", out_dir=root / "build", jobs=1))
    assert started == [("installed", False), (OLD, False)]  # both before the cards were read; no other
    assert report.torch_ran == {OLD: (1, 0)}
    known = report.decks[0].cards[0].torch
    assert known is not None and known.answers == {OLD: "tensor([0., 0.])", INSTALLED: "None"}
    started.clear()
    pipeline.build(pipeline.Options(cards_dir=root / "cards", out_dir=root / "build", jobs=1))
    assert started == []


@pytest.mark.slow
def test_real_torch_113_its_jobs_run_beside_the_installed_ones(
    tmp_path: Path, torch_113: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The 1.13.1 job runs on its early pool before the installed torch runs a job (a job is the same
    whatever that torch answers), and the matrix takes its outcome: nothing more runs there."""
    from quizgen.torch_versions import versioned

    made: list[versioned.Ahead] = []
    ran: list[list[str]] = []  # the cards of each run under 1.13.1
    before: list[int] = []  # outcomes in when the installed torch's run began

    class Recorded(versioned.Ahead):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            made.append(self)

    def run_under(options: Any, work: Any, cards: Any, *args: Any, **kwargs: Any) -> Any:
        ran.append(sorted(c.id for key in work for c in cards[key]))
        return running(options, work, cards, *args, **kwargs)

    def execute(*args: Any) -> Any:
        before.extend(len(ahead.wait(None)) for ahead in made)
        return executing(*args)

    running, executing = versioned.run_under, pipeline._execute
    monkeypatch.setattr(versioned, "Ahead", Recorded)
    monkeypatch.setattr(versioned, "run_under", run_under)
    monkeypatch.setattr(pipeline, "_execute", execute)
    root = make(tmp_path, deck("varies_with_torch: true"), [OLD, INSTALLED])
    report = pipeline.build(pipeline.Options(cards_dir=root / "cards", out_dir=root / "build", jobs=1))
    assert before == [1] and ran == [["zero-grad-default"]]
    assert report.torch_ran == {OLD: (1, 0)}
    known = report.decks[0].cards[0].torch
    assert known is not None and known.answers == {OLD: "tensor([0., 0.])", INSTALLED: "None"}
    assert made[0].pool.proc.poll() is not None  # stopped with the build


@pytest.mark.slow
def test_real_torch_113_a_build_that_fails_on_the_installed_torch_leaves_no_pool_running(
    tmp_path: Path, torch_113: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from quizgen.execution import pool as pools

    made: list[pools.Pool] = []

    class Recorded(pools.Pool):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            made.append(self)

    monkeypatch.setattr(pools, "Pool", Recorded)
    root = make(
        tmp_path, deck("varies_with_torch: true").replace("answer: null", "answer: 0.5"), [OLD, INSTALLED]
    )
    with pytest.raises(CardErrors, match="zero-grad-default"):
        pipeline.build(pipeline.Options(cards_dir=root / "cards", out_dir=root / "build", jobs=1))
    assert len(made) == 2 and all(p.proc.poll() is not None for p in made)


@pytest.mark.slow
def test_real_torch_113_an_early_pool_that_cannot_start_stops_the_one_started(
    tmp_path: Path, torch_113: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from quizgen.execution import pool as pools

    made: list[pools.Pool] = []

    class Refused(pools.Pool):
        def __init__(self, *args: object, **kwargs: object) -> None:
            if kwargs.get("python", args[4] if len(args) > 4 else None) is not None:
                raise pools.SandboxUnavailable("the sandbox cannot start: refused")
            super().__init__(*args, **kwargs)  # type: ignore[arg-type]
            made.append(self)

    monkeypatch.setattr(pools, "Pool", Refused)
    root = make(tmp_path, deck("varies_with_torch: true"), [OLD, INSTALLED])
    with pytest.raises(pools.SandboxUnavailable, match="refused"):
        pipeline.build(pipeline.Options(cards_dir=root / "cards", out_dir=root / "build", jobs=1))
    assert len(made) == 1 and made[0].proc.poll() is not None  # the installed torch's: stopped


def test_learners_are_judged_on_the_installed_torch_when_the_matrix_lists_a_newer_one(
    tmp_path: Path, options: Callable[..., pipeline.Options]
) -> None:
    from tests.support.releases import TORCH_RELEASES

    newer = TORCH_RELEASES[-1]  # a release the package index has (not provisioned: its lock's answer)
    root = make(tmp_path, deck("varies_with_torch: true"), [INSTALLED, newer])
    record(root, {newer: "tensor([0., 0.])"})
    report = pipeline.build(options(root))
    assert report.decks[0].cards[0].answer == {"type": "none", "value": None, "display": "None"}
    assert (
        f"torch {INSTALLED}: <code>None</code> · torch {newer}: <code>tensor([0., 0.])</code> (answers are "
        f"judged on torch {INSTALLED})."
    ) in published(root)


def test_float_noise_between_versions_is_no_change(
    tmp_path: Path, options: Callable[..., pipeline.Options]
) -> None:
    text = """\
    deck: Noise
    setup: |
      import torch
    cards:
      - id: step
        kind: value
        ask: "What is `w` after one SGD step?"
        code: |
          w = torch.nn.Parameter(torch.tensor(1.0))
          w.grad = torch.tensor(1.0)
          torch.optim.SGD([w], lr=0.1).step()
        answer_expr: w.item()
        answer: 0.9
    """
    root = make(tmp_path, textwrap.dedent(text), [OLD, INSTALLED])
    record(root, {OLD: "0.90000004"}, "step")  # within the card's tolerance: as a learner would be judged
    known = pipeline.build(options(root)).decks[0].cards[0].torch
    assert known is not None and known.answers == {OLD: "0.9", INSTALLED: "0.9"} and not known.differ
    record(root, {OLD: "0.85"}, "step")
    assert "answers `0.85` on torch 1.13.1 but `0.9` on torch" in errors_of(options(root))


# -- versions the package index has -------------------------------------------------------------------


@pytest.mark.parametrize("settings_file", ["quizgen.toml", "pyproject.toml"])
def test_a_matrix_version_the_index_has_not_for_this_python_is_an_error_at_it(
    tmp_path: Path, options: Callable[..., pipeline.Options], settings_file: str
) -> None:
    from tests.support.releases import TORCH_RELEASES

    root = make(tmp_path, deck(), [OLD, INSTALLED])  # the index's listing: conftest's, as if asked
    table = "[tool.quizgen]\n" if settings_file == "pyproject.toml" else ""
    (root / "quizgen.toml").unlink()
    written = f'{table}# the matrix\ntorch = [\n  "{OLD}", "9.9.9",\n  "1.12.0", "{INSTALLED}",\n]\n'
    (root / settings_file).write_text(written, encoding="utf-8")
    where = f"{root / settings_file}"
    first = 4 if table else 3
    field = "tool.quizgen.torch" if table else "torch"
    listed = ", ".join(TORCH_RELEASES)
    python = f"Python {sys.version_info[0]}.{sys.version_info[1]}"  # what the index lists releases for
    assert errors_of(options(root)).splitlines() == [
        f"{where}:{first}:13 -> {field}: torch 9.9.9 is not a torch release (the newest the package index "
        f"has is 2.15.0); the releases for {python}: {listed}",
        f"{where}:{first + 1}:3 -> {field}: torch 1.12.0 has no wheel for {python} (the oldest torch the "
        f"package index has for it is 1.13.0); the releases for {python}: {listed}",
    ]


def test_the_index_is_asked_once_a_day_and_again_for_a_version_it_left_out(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("QUIZGEN_CACHE_DIR", str(tmp_path))
    asked: list[str] = []
    answers = [["1.13.1", "2.0.0"], ["1.13.1", "2.0.0", "2.1.0"]]

    def index(quick: bool = False) -> list[str]:
        asked.append("index")
        if not answers:
            raise changed.QuizgenError("offline")
        return answers.pop(0)

    monkeypatch.setattr(changed, "index_releases", index)
    assert changed.listed("2.0.0") == ["1.13.1", "2.0.0"]
    assert changed.listed("2.0.0") == ["1.13.1", "2.0.0"] and len(asked) == 1  # kept
    assert changed.release_problem("2.1.0") != "" and len(asked) == 1  # asked an hour ago: not again
    assert changed.release_problem("2.1.0", fresh=True) == "" and len(asked) == 2  # (`torch add`)
    assert changed.release_problem("2.2.0", fresh=True).startswith("torch 2.2.0 is not a torch release")
    assert len(asked) == 3  # the index could not be asked: the listing kept stands
    (tmp_path / changed.LISTING).unlink()
    assert changed.listed("2.0.0") is None and changed.release_problem("9.9.9") == ""  # pip will say


def test_the_index_is_asked_beside_the_run_when_the_matrix_will_want_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """pip takes ~0.5 s to answer: asked once the run was done, a fresh clone's first build waited for it."""
    import threading

    monkeypatch.setenv("QUIZGEN_CACHE_DIR", str(tmp_path))
    asked: list[str] = []
    go = threading.Event()

    def index(quick: bool = False) -> list[str]:
        go.wait(10)
        asked.append(threading.current_thread().name)
        return ["1.13.1", "2.0.0"]

    monkeypatch.setattr(changed, "index_releases", index)
    changed.ask_early()
    changed.ask_early()  # (asking already)
    go.set()
    assert changed.listed("2.0.0") == ["1.13.1", "2.0.0"]  # waits for the thread's answer, kept
    assert asked == ["quizgen-index"]
