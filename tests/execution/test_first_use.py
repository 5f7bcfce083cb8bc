"""Caching that does not depend on luck (issue 21, items 1 and 4): what torch changes the first time a
feature is used is not a card's change, a job that ran from a clean state is cached whatever it changed
afterwards, a card that really patches torch still runs last in its worker and is named, and a worker
that ends is noticed when it ends, not when a process it forked lets go of its pipe."""

from __future__ import annotations

import sys
import textwrap
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from quizgen import pipeline
from quizgen.cli import cli
from quizgen.errors import CardErrors
from quizgen.execution.pool import Pool
from tests.support.hostile import running
from tests.support.projects import write_project
from tests.support.waiting import wait_until

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="pidfds are Linux's")

HEADER = "deck: Training\nsetup: |\n  import torch\n  import torch.nn as nn\ncards:\n"


def value(card_id: str, code: str, expr: str) -> str:
    body = textwrap.indent(textwrap.dedent(code).strip("\n"), "      ")
    return f"  - id: {card_id}\n    kind: value\n    ask: q\n    code: |\n{body}\n    answer_expr: {expr}\n"


def basic(card_id: str, code: str) -> str:
    body = textwrap.indent(textwrap.dedent(code).strip("\n"), "      ")
    return f"  - id: {card_id}\n    kind: basic\n    front: f\n    back: b\n    code: |\n{body}\n"


def in_one_worker(tmp_path: Path, text: str) -> tuple[pipeline.Report, pipeline.Report]:
    """The deck checked twice by one warm worker: (the first check, the second)."""
    root = write_project(tmp_path / "p", {"t.yaml": text})
    with Pool(1, warm=True) as pool:
        options = pipeline.Options(cards_dir=root / "cards", out_dir=root / "build", jobs=1, pool=pool)
        return pipeline.check(options), pipeline.check(options)


def answers_of(report: pipeline.Report) -> dict[str, str]:
    return {vc.card.id: vc.answer["display"] for d in report.decks for vc in d.cards}  # type: ignore[index]


STEPS = """
    torch.manual_seed(0)
    model = nn.Linear(3, 1)
    opt = torch.optim.{cls}(model.parameters(), lr=0.1)
    for _ in range(2):
        opt.zero_grad()
        model(torch.ones(2, 3)).pow(2).mean().backward()
        opt.step()
"""
SCHEDULER = """
    model = nn.Linear(2, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=0.1, total_steps=10)
    lrs = []
    for _ in range(3):
        opt.zero_grad()
        model(torch.ones(1, 2)).sum().backward()
        opt.step()
        sched.step()
        lrs.append(round(opt.param_groups[0]["lr"], 6))
"""
HOOKS = """
    layer = nn.Linear(2, 2)
    seen = []
    handle = layer.register_forward_hook(lambda m, i, o: seen.append(tuple(o.shape)))
    layer(torch.ones(3, 2))
    handle.remove()
"""
AMP = """
    model = nn.Linear(4, 2)
    opt = torch.optim.AdamW(model.parameters(), lr=0.01)
    scaler = torch.amp.GradScaler("cpu")
    with torch.autocast("cpu", dtype=torch.bfloat16):
        out = model(torch.ones(2, 4))
    scaler.scale(out.float().sum()).backward()
    scaler.step(opt)
    scaler.update()
"""
ORDINARY = (
    value("adam", STEPS.format(cls="Adam"), "round(model.weight.sum().item(), 4)")
    + value("rmsprop", STEPS.format(cls="RMSprop"), "round(model.weight.sum().item(), 4)")
    + value("adagrad", STEPS.format(cls="Adagrad"), "round(model.weight.sum().item(), 4)")
    + value("one-cycle", SCHEDULER, "lrs")
    + value("hooks", HOOKS, "(seen, handle.id)")
    + value("amp", AMP, "str(out.dtype)")
)


@pytest.mark.parametrize("warm", [True, False], ids=["warm-pool", "cold-pool"])
def test_ordinary_training_cards_are_cached_after_one_build(tmp_path: Path, warm: bool) -> None:
    """An Adam card, a scheduler card, hooks and AMP: the second check executes nothing. On a warm pool
    none of them changes what a later card sees (no note); on a cold one torch's first use may retire
    workers, but the results stand."""
    root = write_project(tmp_path / "p", {"t.yaml": HEADER + ORDINARY})
    with Pool(1, warm=warm) as pool:
        options = pipeline.Options(cards_dir=root / "cards", out_dir=root / "build", jobs=1, pool=pool)
        first = pipeline.check(options)
        again = pipeline.check(options)
    assert first.executed == 6
    assert (again.executed, again.cached) == (0, 6)
    answers = {vc.card.id: vc.answer for d in again.decks for vc in d.cards}
    assert answers == {vc.card.id: vc.answer for d in first.decks for vc in d.cards}


def test_a_hook_handle_id_does_not_depend_on_the_cards_before_it(tmp_path: Path) -> None:
    """torch counts hook handles in a class attribute; each job starts from the zygote's count."""
    cards = [value(f"hooks-{i}", HOOKS + f"\n    # {i}", "handle.id") for i in range(3)]
    root = write_project(tmp_path / "p", {"t.yaml": HEADER + "".join(cards)})
    with Pool(1) as pool:
        report = pipeline.check(
            pipeline.Options(cards_dir=root / "cards", out_dir=root / "build", jobs=1, pool=pool)
        )
    ids = {str(vc.answer) for d in report.decks for vc in d.cards}
    assert len(ids) == 1, ids


PATCHER = basic("patches-zero-grad", "torch.optim.Optimizer.zero_grad = lambda self, set_to_none=True: None")
VICTIM = value(
    "victim",
    """
    w = nn.Parameter(torch.tensor(2.0))
    opt = torch.optim.SGD([w], lr=0.1)
    (w * w).backward()
    opt.zero_grad()
    """,
    "w.grad",
)


def test_a_card_that_patches_torch_changes_no_later_card_and_is_cached(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / ".cache"))
    root = write_project(tmp_path / "p", {"t.yaml": HEADER + PATCHER + VICTIM + value("after", "x = 1", "x")})
    monkeypatch.chdir(root)
    first = CliRunner().invoke(cli, ["check", "-j", "1"])
    assert first.exit_code == 0, first.output + first.stderr
    # Its change stayed in its own process: nothing to tell (each job runs in a process of its own).
    assert "note:" not in first.stderr
    # The victim ran after it (one worker) and still saw torch's own zero_grad.
    report = pipeline.check(pipeline.Options(cards_dir=root / "cards", out_dir=root / "build", jobs=1))
    answers = {vc.card.id: vc.answer for d in report.decks for vc in d.cards}
    assert answers["victim"] == {"type": "none", "value": None, "display": "None"}
    # It ran from a clean state: its result is cached like any other.
    assert (report.executed, report.cached) == (0, 3)


def test_a_snippet_that_forks_and_exits_is_reported_with_its_exit_and_leaves_nothing(
    project: Callable[..., Path], options: Callable[..., pipeline.Options], pool: Pool
) -> None:
    """The forked child holds the worker's result pipe for 300 s (and has started a `sleep` of its own);
    the timeout is far away (120 s), so a worker's end noticed only at its pipe's end shows as the
    timeout message. Both processes must be gone once the job is reported."""
    token = f"{300 + uuid.uuid4().int % 1000}.{uuid.uuid4().int % 10**9}"
    code = f"""
        import os, subprocess, time
        if os.fork() == 0:
            subprocess.Popen(["sleep", "{token}"])
            time.sleep(300)
        time.sleep(0.5)
        os._exit(3)
    """
    root = project({"t.yaml": HEADER + basic("forks-and-exits", code) + value("after", "x = 2", "x")})
    with pytest.raises(CardErrors) as info:
        pipeline.check(options(root, timeout=120.0))
    message = str(info.value)
    assert "card 'forks-and-exits'" in message
    assert "exit status 3" in message and "timeout" not in message
    assert "card 'after'" not in message  # the next card ran in a fresh worker
    assert wait_until(lambda: not running(token), 10), running(token)


def test_cards_in_shapes_nobody_here_wrote_keep_their_worker_and_are_cached(tmp_path: Path) -> None:
    """One card of each shape of support/unseen_cards.py (its own seed): snippets that warn, print, leave
    the default dtype, grad mode, deterministic algorithms or a `torch.backends` switch set, define
    dataclasses and autograd Functions, checkpoint activations, set DDP's MASTER_ADDR in the
    environment, iterate a loader with worker processes. Before: a dataclass did not compile as a card
    (its annotations strings, under quizgen's own `from __future__ import annotations`), and six cards
    retired their worker with a shared-state note (settings the next job resets anyway, the environment,
    torch's first use of activation checkpointing and of a loader's workers)."""
    from tests.support.unseen_cards import TEMPLATES, deck_text, make_cards

    first, again = in_one_worker(tmp_path, deck_text(make_cards(len(TEMPLATES))))
    assert first.executed == len(TEMPLATES)
    assert (again.executed, again.cached) == (0, len(TEMPLATES))


SETS = value(
    "sets",
    """
    import os
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    torch.set_default_dtype(torch.float64)
    torch.backends.cudnn.deterministic = True
    torch.backends.mkldnn.enabled = False
    torch.set_float32_matmul_precision("medium")
    torch.backends.cuda.matmul.allow_tf32 = True
    """,
    "1",
)
READS = value(
    "reads",
    """
    import os
    seen = (
        os.environ.get("MASTER_ADDR"),
        str(torch.get_default_dtype()),
        torch.backends.cudnn.deterministic,
        torch.backends.mkldnn.enabled,
        torch.get_float32_matmul_precision(),
    )
    """,
    "seen",
)


def test_a_card_that_leaves_settings_changed_changes_no_later_cards_answer(tmp_path: Path) -> None:
    """In one worker, the second card sees the settings every card starts with, and the first keeps its
    worker. Before: `reads` raised (torch's two spellings of the matmul precision set differently) and
    `sets` retired its worker."""
    report, _ = in_one_worker(tmp_path, HEADER + SETS + READS)
    assert answers_of(report)["reads"] == "(None, 'torch.float32', False, True, 'highest')"


def test_a_cards_backend_switches_do_not_reach_the_next_card(tmp_path: Path) -> None:
    """torch.backends switches live in C: neither reset nor watched before, so the next card in the
    worker answered (True, False)."""
    sets = value(
        "flips", "torch.backends.cudnn.deterministic = True\ntorch.backends.mkldnn.enabled = False", "1"
    )
    reads = value(
        "reads-flags", "f = (torch.backends.cudnn.deterministic, torch.backends.mkldnn.enabled)", "f"
    )
    report, _ = in_one_worker(tmp_path, HEADER + sets + reads)
    assert answers_of(report)["reads-flags"] == "(False, True)"


def test_a_module_one_card_imports_is_not_there_for_the_next_card(tmp_path: Path) -> None:
    """A card that imports a submodule hands its worker back (quietly, its result cached): the next card
    in the worker finds the module where a fresh one would (not there), whichever card ran first.
    Before: `uses` answered in a build where `imports` had run before it in the same worker."""
    imports = value("imports", "import torch.nn.utils.prune\nm = torch.nn.utils.prune.Identity", "1")
    uses = value("uses", "found = hasattr(torch.nn.utils, 'prune')", "found")
    report, again = in_one_worker(tmp_path, HEADER + imports + uses)
    assert answers_of(report)["uses"] == "False"
    assert (again.executed, again.cached) == (0, 2)
