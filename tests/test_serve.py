"""`quizgen serve` and `quizgen build --watch`: rebuild on a change of cards or templates, keep the last good
quiz when a change is broken, and serve the quiz on localhost to a real browser."""

from __future__ import annotations

import os
import queue
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from quizgen import pipeline, serve
from quizgen.cli import cli
from quizgen.execution.pool import Pool

from .quiz_support import SAMPLE_PAGE, close_tab, copy_project, open_tab


def wait_for(condition: Callable[[], Any], what: str, timeout: float = 20.0) -> Any:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        value = condition()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def test_a_change_is_a_card_file_or_a_template_not_what_the_build_writes(tmp_path: Path) -> None:
    (tmp_path / "cards").mkdir()
    (tmp_path / "cards" / "a.yaml").write_text("deck: A\n")
    (tmp_path / "cards" / "quizgen.lock").write_text("{}")
    options = pipeline.Options(cards_dir=tmp_path / "cards", out_dir=tmp_path / "build")
    before = serve.snapshot(options)
    assert sorted(p.name for p in before) == ["a.yaml"]
    (tmp_path / "cards" / "quizgen.lock").write_text('{"written": "by the Anki output"}')
    assert serve.snapshot(options) == before
    (tmp_path / "templates" / "quiz").mkdir(parents=True)
    (tmp_path / "templates" / "quiz" / "deck.html").write_text("x")
    assert sorted(p.name for p in serve.snapshot(options)) == ["a.yaml", "deck.html"]
    shutil.rmtree(tmp_path / "cards")
    assert sorted(p.name for p in serve.snapshot(options)) == ["deck.html"]  # no folder: no crash


@pytest.fixture
def watching(built: pipeline.Report, tmp_path: Path, pool: Pool) -> Iterator[tuple[Path, list[str]]]:
    """A copy of the built project watched by serve.watch in a thread; yields (root, echoed lines)."""
    root = copy_project(built, tmp_path / "project")
    options = pipeline.Options(cards_dir=root / "cards", out_dir=root / "build", pool=pool)
    lines: list[str] = []
    stop = threading.Event()
    thread = threading.Thread(target=serve.watch, args=(options, lines.append, stop, 0.05))
    thread.start()
    try:
        wait_for(lambda: any(line.startswith("built ") for line in lines), "the first build")
        yield root, lines
    finally:
        stop.set()
        thread.join(10)
    assert not thread.is_alive()


def builds(lines: list[str]) -> int:
    return sum(line.startswith(("built ", "build failed")) for line in lines)


def test_watch_rebuilds_on_change_and_keeps_the_last_good_quiz(watching: tuple[Path, list[str]]) -> None:
    root, lines = watching
    page = root / "build" / "quiz" / SAMPLE_PAGE
    time.sleep(0.3)
    assert builds(lines) == 1, lines  # the build's own writes (build/, the Anki lock) are no change
    assert (
        lines[-1] == "built 11 cards in 2 decks (0 executed, 11 from cache) in " + lines[-1].split(" in ")[-1]
    )

    override = root / "templates" / "quiz" / "deck.html"
    override.parent.mkdir(parents=True)
    override.write_text('{% extends "default:quiz/deck.html" %}{% block title %}Watched{% endblock %}')
    wait_for(lambda: builds(lines) == 2, "a rebuild after a new template")
    assert "<title>Watched</title>" in page.read_text()

    override.write_text('{% extends "default:quiz/deck.html" %}{% block title %}{{ oops( }}{% endblock %}')
    wait_for(lambda: "build failed; the previous outputs are unchanged" in lines, "the failed build")
    assert any(re.search(r"deck\.html:1: ", line) for line in lines), lines
    assert "<title>Watched</title>" in page.read_text()

    cards = root / "cards" / "sample.yaml"
    cards.write_text(cards.read_text().replace("Gradients add up", "Gradients pile up"))
    override.unlink()
    wait_for(lambda: builds(lines) == 4, "a rebuild after a card edit")
    assert "Gradients pile up" in page.read_text()
    assert "<title>Watched</title>" not in page.read_text()
    assert lines[-1].startswith("built 11 cards"), lines


def test_build_watch_and_serve_are_commands() -> None:
    runner = CliRunner()
    assert "--watch" in runner.invoke(cli, ["build", "--help"]).output
    result = runner.invoke(cli, ["serve", "--help"])
    assert result.exit_code == 0 and "--port" in result.output and "127.0.0.1" in result.output


def test_serve_on_a_busy_port_says_so(tmp_path: Path) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        result = CliRunner().invoke(cli, ["serve", "--port", str(port), "--cards", str(tmp_path)])
    assert result.exit_code == 2
    assert f"cannot serve on 127.0.0.1:{port}" in result.output
    assert "Traceback" not in result.output


def _reader(stream: Any, into: queue.Queue[str]) -> None:
    for line in stream:
        into.put(line.rstrip("\n"))


def test_serve_previews_on_localhost_and_rebuilds_on_change(
    browser: Any, built: pipeline.Report, tmp_path: Path
) -> None:
    root = copy_project(built, tmp_path / "project")
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "quizgen", "serve", "--port", "0"],
        cwd=root,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
    )
    out: queue.Queue[str] = queue.Queue()
    threading.Thread(target=_reader, args=(proc.stdout, out), daemon=True).start()
    lines: list[str] = []

    def seen(prefix: str) -> int:
        while not out.empty():
            lines.append(out.get())
        return sum(line.startswith(prefix) for line in lines)

    tab = None
    try:
        wait_for(lambda: seen("built "), "the first build")
        url = re.search(r"at (http://127\.0\.0\.1:\d+/)", "\n".join(lines))
        assert url, lines
        base = url.group(1)
        tab = open_tab(browser, base)
        page = tab.page
        assert "Sample::Gradients" in page.inner_text(".deck-list")
        page.click("text=Sample::Gradients")
        page.fill("#answer-value-two-steps", "8")
        page.press("#answer-value-two-steps", "Enter")
        assert page.inner_text("#card-value-two-steps .outcome") == "Right"
        page.click(".modes [data-mode='review']")
        page.fill("#answer-value-two-steps", "8")
        page.press("#answer-value-two-steps", "Enter")
        page.keyboard.press("1")
        assert page.inner_text("#status").startswith("Review: 0 due, 6 new.")

        cards = root / "cards" / "sample.yaml"
        cards.write_text(cards.read_text().replace("What is `w.grad` after", "What does `w.grad` hold after"))
        wait_for(lambda: seen("built ") == 2, "the rebuild")
        assert seen("change detected") == 1
        page.reload()
        assert "What does w.grad hold after the second?" in page.inner_text("#card-value-two-steps .prompt")
        # The rebuilt page still has the learner's progress (it is keyed by card id, not by build).
        assert page.inner_text("#status").startswith("Review: 0 due, 6 new.")
        kept = "JSON.parse(localStorage.getItem('quizgen.progress')).cards['value-two-steps'].reps"
        assert page.evaluate(kept) == 1
        assert tab.outside((base,)) == []
        assert [u for u in tab.requests if u.startswith(base)]
    finally:
        if tab is not None:
            close_tab(tab)
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(20)
        finally:
            if proc.poll() is None:
                proc.kill()
    seen("")
    assert proc.returncode == 0, lines
    assert lines[-1] == "stopped", lines
