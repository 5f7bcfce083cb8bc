"""Shared fixtures: small card projects in tmp_path, one warm build shared by the renderer tests,
and the real clients (Chromium through Playwright)."""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from quizgen import pipeline
from quizgen.execution.pool import Pool
from quizgen.torch_versions import changed
from tests.support.projects import SAMPLE_DECK, write_project
from tests.support.releases import TORCH_RELEASES
from tests.support.tools import missing

CHROMIUM = "/usr/bin/chromium"
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


@pytest.fixture(scope="session", autouse=True)
def _state_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Build state (caches, manifests, journals) goes to a folder of this test run, never to the user's
    cache directory; builds run as subprocesses inherit it."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("QUIZGEN_CACHE_DIR", str(tmp_path_factory.mktemp("quizgen-state")))
        changed.keep(TORCH_RELEASES)  # the package index's listing, as if asked: tests never ask it
        yield


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

    Tests read it; a test that changes a project works on
    `copy_project(built, tmp_path)` (tests.support.projects).
    """
    from tests.support.quiz import quiz_build

    return quiz_build(tmp_path_factory, pool)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark tests by the real clients they use, so `make test-fast` can leave them out."""
    for item in items:
        fixtures = getattr(item, "fixturenames", ())
        if "browser" in fixtures:
            item.add_marker(pytest.mark.browser)
        module = getattr(item, "module", None)
        uses_anki = any(getattr(v, "__module__", None) == "tests.support.anki" for v in vars(module).values())
        if "anki_build" in fixtures or uses_anki:
            item.add_marker(pytest.mark.anki)


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    """Debian's Chromium driven by Playwright (its own browser download cannot work here)."""
    if not shutil.which(CHROMIUM):
        missing(CHROMIUM)
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        missing("playwright")
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture(scope="session")
def anki_build(tmp_path_factory: pytest.TempPathFactory, pool: Pool) -> pipeline.Report:
    """The sample deck plus a sub-deck of awkward text, built once; Anki tests copy it before changing it."""
    from tests.support.anki import TRICKY_DECK

    files = {"sample.yaml": SAMPLE_DECK, "tricky.yaml": TRICKY_DECK}
    root = write_project(tmp_path_factory.mktemp("anki"), files)
    report = pipeline.build(pipeline.Options(cards_dir=root / "cards", out_dir=root / "build", pool=pool))
    report.root = root  # type: ignore[attr-defined]
    return report


@pytest.fixture(scope="module")
def warm_search() -> Iterator[None]:
    """This process warmed up as a worker is, for order searches run in it (support/order_puzzles.py)."""
    import warnings

    from tests.support.order_puzzles import warm

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        warm()
        yield
