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
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from quizgen import pipeline, serve
from quizgen.cli import cli
from quizgen.execution.pool import Pool
from quizgen.render import manifest
from quizgen.render.view import card_key
from tests.support.projects import copy_project
from tests.support.quiz import SAMPLE_PAGE, close_tab, open_tab
from tests.support.waiting import wait_for


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


def settled(page: Any, condition: str) -> bool:
    """`condition` holds in the page (False while it reloads). Not wait_for_function: the CSP forbids eval."""
    try:
        return bool(page.evaluate(condition))
    except Exception:  # the page is navigating
        return False


def _reader(stream: Any, into: queue.Queue[str]) -> None:
    for line in stream:
        into.put(line.rstrip("\n"))


# `python -m quizgen` with Ctrl-C raising KeyboardInterrupt, as a terminal starts it, whatever the suite's own
# process does with SIGINT (a process started while its parent ignores SIGINT ignores it too)
_CTRL_C_ON = (
    "import runpy, signal; signal.signal(signal.SIGINT, signal.default_int_handler); "
    "runpy.run_module('quizgen', run_name='__main__', alter_sys=True)"
)


def test_serve_previews_on_localhost_and_rebuilds_on_change(
    browser: Any, built: pipeline.Report, tmp_path: Path
) -> None:
    root = copy_project(built, tmp_path / "project")
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-c", _CTRL_C_ON, "serve", "--port", "0"],
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
        page.fill(f"#answer-{card_key('value-two-steps')}", "8")
        page.press(f"#answer-{card_key('value-two-steps')}", "Enter")
        assert page.inner_text(f"#card-{card_key('value-two-steps')} .outcome") == "Right"
        page.click(".modes [data-mode='review']")
        page.fill(f"#answer-{card_key('value-two-steps')}", "8")
        page.press(f"#answer-{card_key('value-two-steps')}", "Enter")
        page.keyboard.press("1")
        assert page.inner_text("#status").startswith("Review: 0 due, 6 new.")

        page.evaluate("window.__before = true")
        cards = root / "cards" / "sample.yaml"
        cards.write_text(cards.read_text().replace("What is `w.grad` after", "What does `w.grad` hold after"))
        wait_for(lambda: seen("built ") == 2, "the rebuild")
        assert seen("change detected") == 1
        wait_for(
            lambda: settled(page, "window.__before === undefined && document.readyState === 'complete'"),
            "the page's own reload",
        )
        # The rebuilt page still has the learner's progress (it is keyed by card key, not by build).
        assert page.inner_text("#status").startswith("Review: 0 due, 6 new.")
        stored = "JSON.parse(localStorage.getItem('quizgen.progress'))"
        kept = f"{stored}.cards['{card_key('value-two-steps')}'].reps"
        assert page.evaluate(kept) == 1
        page.goto(base + SAMPLE_PAGE + f"#card-{card_key('value-two-steps')}")  # the card's link opens it
        assert "What does w.grad hold after the second?" in page.inner_text(
            f"#card-{card_key('value-two-steps')} .prompt"
        )
        assert tab.outside((base,)) == []
        assert [u for u in tab.requests if u.startswith(base)]
    finally:
        if tab is not None:
            close_tab(tab)
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(120)  # (generous: what is asserted is that it stops, cleanly, not how fast)
        except subprocess.TimeoutExpired:
            pass
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    seen("")
    # (twice, in full runs only, serve did not stop: the output and the suite's own Ctrl-C handler tell
    # whether it got the signal; a process started while its parent ignores SIGINT ignores it too)
    assert proc.returncode == 0, (lines, signal.getsignal(signal.SIGINT))
    assert lines[-1] == "stopped", lines


def test_serve_shows_a_failed_build_in_the_page_and_reloads_on_a_good_one(
    browser: Any, built: pipeline.Report, tmp_path: Path, pool: Pool
) -> None:
    """Issue 22 item 11: the page said nothing when the last build failed and never reloaded."""
    root = copy_project(built, tmp_path / "project")
    options = pipeline.Options(cards_dir=root / "cards", out_dir=root / "build", pool=pool)
    lines: list[str] = []
    stop = threading.Event()
    thread = threading.Thread(target=serve.serve, args=(options, 0, lines.append, stop))
    thread.start()
    tab = None
    try:
        wait_for(lambda: any(line.startswith("built ") for line in lines), "the first build")
        url = re.search(r"at (http://127\.0\.0\.1:\d+/)", "\n".join(lines))
        assert url, lines
        base = url.group(1)
        tab = open_tab(browser, base + SAMPLE_PAGE)
        page = tab.page
        wait_for(lambda: settled(page, "window.QuizgenServe !== undefined"), "the live script")
        assert page.locator("#quizgen-serve-failed").count() == 0
        page.evaluate("window.__before = true")  # gone after a reload

        cards = root / "cards" / "sample.yaml"
        good = cards.read_text()
        bad_id = "<img src=x onerror=window.__pwned=1>"
        cards.write_text(good.replace("id: value-two-steps", f'id: "{bad_id}"'))
        box = page.locator("#quizgen-serve-failed")
        box.wait_for(timeout=30000)
        # The error as text: its file, line and message, the card text in it escaped, nothing run.
        text = box.locator("pre").inner_text()
        assert "sample.yaml:" in text and bad_id in text and "an id is a slug" in text
        assert box.locator("img").count() == 0
        assert page.evaluate("window.__pwned") is None
        assert page.evaluate("window.__before") is True  # the last good page stays under it
        assert page.is_visible(f"#card-{card_key('value-two-steps')}")

        cards.write_text(good.replace("Gradients add up", "Gradients pile up"))
        reloaded = "!window.__before && window.QuizgenServe && document.readyState === 'complete'"
        wait_for(lambda: settled(page, reloaded), "a reload", timeout=30)
        assert page.locator("#quizgen-serve-failed").count() == 0
        page.fill(f"#answer-{card_key('value-two-steps')}", "8")
        page.press(f"#answer-{card_key('value-two-steps')}", "Enter")
        assert "Gradients pile up" in page.inner_text(f"#card-{card_key('value-two-steps')} .explain")
        assert tab.outside((base,)) == []
        assert tab.errors == []
    finally:
        if tab is not None:
            close_tab(tab)
        stop.set()
        thread.join(20)
    assert not thread.is_alive()
    # Only what serve sends carries the live script: the built quiz stays static.
    assert "__quizgen" not in (root / "build" / "quiz" / SAMPLE_PAGE).read_text()


def site_of(folder: Path, state_dir: Path) -> serve.Site:
    """A Site for `folder` as a good build leaves it: its files recorded in a manifest, loaded."""
    manifest.remember(state_dir, "fingerprint", manifest.Kept([folder]), [])
    site = serve.Site(folder, state_dir)
    site.load()
    return site


def test_serve_answers_only_on_localhost_and_sends_status(tmp_path: Path) -> None:
    (tmp_path / "quiz").mkdir()
    (tmp_path / "quiz" / "index.html").write_text("<html><body><p>hi</p></body></html>")
    live = serve.Live()
    server = serve.make_server(site_of(tmp_path / "quiz", tmp_path), port=0, live=live)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        assert server.server_address[0] == "127.0.0.1"
        port = server.server_port
        import urllib.error
        import urllib.request

        def get(path: str) -> str:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}") as response:
                return str(response.read().decode())

        assert get("/").endswith('<script src="/__quizgen/live.js"></script></body></html>')
        assert "QuizgenServe" in get("/__quizgen/live.js")
        live.failed("cards/a.yaml:1:1: </script><script>alert(1)</script>")
        status = get("/__quizgen/status.js")
        assert "</script>" not in status and "\\u003c/script>" in status
        assert '"ok": false' in status and '"good": 0' in status
        live.built()
        assert '"ok": true, "error": "", "good": 2' in get("/__quizgen/status.js")
        # A page of another site whose name now points at 127.0.0.1 (DNS rebinding) is refused.
        hosts = (("evil.example", 403), (f"evil.example:{port}", 403), (f"localhost:{port}", 200))
        for host, status in hosts:
            for path in ("/", "/__quizgen/status.js", "/index.html"):
                request = urllib.request.Request(f"http://127.0.0.1:{port}{path}", headers={"Host": host})
                try:
                    with urllib.request.urlopen(request) as response:
                        assert (host, response.status) == (host, status)
                except urllib.error.HTTPError as refused:
                    assert (host, refused.code) == (host, status)
    finally:
        server.shutdown()
        server.server_close()
