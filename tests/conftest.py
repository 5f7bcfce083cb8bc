"""Shared fixtures: small card projects in tmp_path, one warm build shared by the renderer tests,
and the real clients (Chromium through Playwright)."""

from __future__ import annotations

import importlib
import os
import shutil
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from quizgen import pipeline
from quizgen.execution.pool import Pool
from quizgen.project import state
from quizgen.torch_versions import changed

CHROMIUM = "/usr/bin/chromium"
# The torch releases the package index has for this Python (`pip index versions torch`, as it answered).
TORCH_RELEASES = [
    *("1.13.0", "1.13.1", "2.0.0", "2.0.1", "2.1.0", "2.1.1", "2.1.2", "2.2.0", "2.2.1", "2.2.2", "2.3.0"),
    *("2.3.1", "2.4.0", "2.4.1", "2.5.0", "2.5.1", "2.6.0", "2.7.0", "2.7.1", "2.8.0", "2.9.0", "2.9.1"),
    *("2.10.0", "2.11.0", "2.12.0", "2.12.1", "2.13.0", "2.14.0", "2.14.1", "2.15.0"),
]
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]

SAMPLE_DECK = """\
deck: Sample::Gradients
description: A small deck with every kind of card.
tags: [sample]
setup: |
  import torch
cards:
  - id: value-two-steps
    kind: value
    tags: [accumulation]
    ask: "No `zero_grad` between the two backward calls. What is `w.grad` after the second?"
    code: |
      w = torch.tensor(2.0, requires_grad=True)
      (0.75 * w**2).backward()
      (1.25 * w**2).backward()
    answer_expr: w.grad.item()
    answer: 8.0
    explain: "Gradients add up: 3.0 + 5.0 = 8.0."
  - id: value-grad-none
    kind: value
    ask: "What is `w.grad` before any backward call?"
    code: |
      w = torch.tensor([1.0, 2.0], requires_grad=True)
    answer_expr: w.grad
    answer: null
  - id: value-shape
    kind: value
    ask: "What is the shape of `w.grad`?"
    code: |
      w = torch.ones(2, 3, requires_grad=True)
      w.sum().backward()
    answer_expr: w.grad.shape
    answer: {shape: [2, 3]}
  - id: value-raises
    kind: value
    ask: "What happens on the second backward through the same graph?"
    code: |
      w = torch.tensor(1.0, requires_grad=True)
      y = (w * w).exp()
      y.backward()
      y.backward()
    answer: {raises: RuntimeError}
  - id: myth-zero-grad-zeros
    kind: myth
    claim: "`optimizer.zero_grad()` fills every `.grad` with zeros."
    verdict: false
    explain: "Since torch 2.0 it sets them to `None`."
    proof: |
      w = torch.nn.Parameter(torch.ones(2))
      opt = torch.optim.SGD([w], lr=0.1)
      w.sum().backward()
      opt.zero_grad()
      print(w.grad)
      assert w.grad is None
    holds: w.grad is not None and bool((w.grad == 0).all())
  - id: order-train-step
    kind: order
    ask: "Put one training step in order."
    setup: |
      model = torch.nn.Linear(2, 1)
      opt = torch.optim.SGD(model.parameters(), lr=0.1)
      x = torch.ones(4, 2)
      y = torch.zeros(4, 1)
      ref = torch.nn.Linear(2, 1)
      ref.load_state_dict(model.state_dict())
      ref_opt = torch.optim.SGD(ref.parameters(), lr=0.1)
      for _ in range(2):
          ref_opt.zero_grad()
          ((ref(x) - y) ** 2).mean().backward()
          ref_opt.step()
    lines:
      - opt.zero_grad()
      - loss = ((model(x) - y) ** 2).mean()
      - loss.backward()
      - opt.step()
    distractors:
      - x = x * 2
    repeat: 2
    check: |
      assert torch.allclose(model.weight, ref.weight)
  - id: basic-why-accumulate
    kind: basic
    front: "Why does PyTorch accumulate gradients instead of overwriting them?"
    back: "So that several backward passes can add into one update (micro-batches)."
    code: |
      print("accumulate")
"""


@pytest.fixture(scope="session", autouse=True)
def _state_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Build state (caches, manifests, journals) goes to a folder of this test run, never to the user's
    cache directory; builds run as subprocesses inherit it."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("QUIZGEN_CACHE_DIR", str(tmp_path_factory.mktemp("quizgen-state")))
        changed.keep(TORCH_RELEASES)  # the package index's listing, as if asked: tests never ask it
        yield


def write_project(root: Path, files: dict[str, str]) -> Path:
    """Write card files (name -> YAML text) under root/cards and return root."""
    cards = root / "cards"
    cards.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (cards / name).write_text(textwrap.dedent(text), encoding="utf-8")
    return root


@pytest.fixture
def project(tmp_path: Path) -> Callable[..., Path]:
    """project({"deck.yaml": text}) -> a project folder in tmp_path."""

    def make(files: dict[str, str]) -> Path:
        return write_project(tmp_path, files)

    return make


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


@pytest.fixture
def in_dir(monkeypatch: pytest.MonkeyPatch) -> Callable[[Path], None]:
    return lambda path: monkeypatch.chdir(path)


@pytest.fixture(scope="session")
def pool() -> Iterator[Pool]:
    """One warm torch worker pool for the whole session: torch is imported once, not per test."""
    with Pool(2) as p:
        yield p


@pytest.fixture
def options(pool: Pool) -> Callable[..., pipeline.Options]:
    """options(root, **overrides) -> pipeline Options for a project folder, using the shared pool."""

    def make(root: Path, **kw: Any) -> pipeline.Options:
        kw.setdefault("pool", pool)
        return pipeline.Options(cards_dir=root / "cards", out_dir=root / "build", **kw)

    return make


@pytest.fixture(scope="session")
def sample_build(tmp_path_factory: pytest.TempPathFactory, pool: Pool) -> pipeline.Report:
    """The sample deck built once for the whole session (renderer tests read its outputs)."""
    root = write_project(tmp_path_factory.mktemp("sample"), {"sample.yaml": SAMPLE_DECK})
    options = pipeline.Options(cards_dir=root / "cards", out_dir=root / "build", jobs=2, pool=pool)
    report = pipeline.build(options)
    report.root = root  # type: ignore[attr-defined]
    return report


@pytest.fixture(scope="session")
def built(tmp_path_factory: pytest.TempPathFactory, pool: Pool) -> pipeline.Report:
    """The sample and hostile decks built once per test run (`report.root` is the project folder).

    Tests read it; a test that changes a project works on `copy_project(built, tmp_path)`.
    """
    from .quiz_support import quiz_build

    return quiz_build(tmp_path_factory, pool)


def copy_project(report: pipeline.Report, dest: Path) -> Path:
    """A copy of a built project (cards, lock, build and cache), to change without touching the original."""
    root: Path = report.root  # type: ignore[attr-defined]
    shutil.copytree(root, dest)
    copy_state(root / "build", dest / "build")
    return dest


def copy_state(out_dir: Path, to: Path) -> None:
    """Give the project building into `to` the cache of the one building into `out_dir` (build state is
    kept by output folder, in the user's cache directory); the manifest and journal stay the original's."""
    source = state.where(out_dir)
    if source.is_dir():
        ignore = shutil.ignore_patterns("outputs.json*", ".quizgen-commit.json*")
        shutil.copytree(source, state.folder(to), ignore=ignore, dirs_exist_ok=True)


def require(module: str) -> Any:
    """An optional test tool: its tests are skipped where it is missing, but in CI (CI=true) they fail."""
    if os.environ.get("CI") == "true":
        return importlib.import_module(module)
    return pytest.importorskip(module)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark tests by the real clients they use, so `make test-fast` can leave them out."""
    for item in items:
        fixtures = getattr(item, "fixturenames", ())
        if "browser" in fixtures:
            item.add_marker(pytest.mark.browser)
        module = getattr(item, "module", None)
        uses_anki = any(getattr(v, "__module__", None) == "tests.anki_support" for v in vars(module).values())
        if "anki_build" in fixtures or uses_anki:
            item.add_marker(pytest.mark.anki)


def _missing(what: str) -> None:
    if os.environ.get("CI") == "true":
        pytest.fail(f"{what} is required in CI")
    pytest.skip(f"{what} is not installed")


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    """Debian's Chromium driven by Playwright (its own browser download cannot work here)."""
    if not shutil.which(CHROMIUM):
        _missing(CHROMIUM)
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _missing("playwright")
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture(scope="session")
def anki_build(tmp_path_factory: pytest.TempPathFactory, pool: Pool) -> pipeline.Report:
    """The sample deck plus a sub-deck of awkward text, built once; Anki tests copy it before changing it."""
    from .anki_support import TRICKY_DECK

    files = {"sample.yaml": SAMPLE_DECK, "tricky.yaml": TRICKY_DECK}
    root = write_project(tmp_path_factory.mktemp("anki"), files)
    report = pipeline.build(pipeline.Options(cards_dir=root / "cards", out_dir=root / "build", pool=pool))
    report.root = root  # type: ignore[attr-defined]
    return report


@pytest.fixture(scope="module")
def warm_search() -> Iterator[None]:
    """This process warmed up as a worker is, for order searches run in it (tests/order_puzzles.py)."""
    import warnings

    from .order_puzzles import warm

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        warm()
        yield
