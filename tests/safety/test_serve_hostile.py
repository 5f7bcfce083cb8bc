"""Issue 28 finding 3: `quizgen serve` sent a `build/quiz/` the repository shipped, and followed its links:
a secret in $HOME was served before the first build ended and after it failed, `/h/` listed the home
folder. Serve now sends only the files the last good build of the session wrote (its manifest), read
through no link, and each only while it is what the build wrote (quizgen/serve.py, project/files.py)."""

from __future__ import annotations

import hashlib
import os
import re
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from quizgen import pipeline, serve
from quizgen.execution.pool import Pool
from quizgen.project import files
from tests.support.projects import write_project
from tests.support.waiting import wait_for

SECRET = "s3cret-token-28-3"
SHIPPED = "shipped-by-the-repository"
# The page the repository ships: it fetches the linked secret and shows it in its title.
SHIPPED_PAGE = (
    f"<html><head><title>{SHIPPED}</title></head><body>{SHIPPED}<script>"
    "fetch('/k.txt').then(r => r.text()).then(t => { document.title = 'got:' + t; })"
    "</script></body></html>"
)
DECK = """\
deck: Hostile
cards:
  - id: two
    kind: value
    ask: What is x?
    code: |
      x = 1 + 1
    answer_expr: x
    answer: {answer}
"""


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The user's $HOME holding a secret; build state goes to its cache directory."""
    home = tmp_path / "home"
    home.mkdir()
    (home / "secret.txt").write_text(SECRET)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / ".cache"))
    monkeypatch.delenv("QUIZGEN_CACHE_DIR", raising=False)
    return home


@pytest.fixture
def hostile(tmp_path: Path, home: Path) -> Path:
    """A project whose only card fails, shipping build/quiz/ with k.txt -> ~/secret.txt and h -> ~."""
    root = write_project(tmp_path / "project", {"deck.yaml": DECK.format(answer=3)})
    quiz = root / "build" / "quiz"
    quiz.mkdir(parents=True)
    (quiz / "index.html").write_text(SHIPPED_PAGE)
    (quiz / "k.txt").symlink_to(home / "secret.txt")
    (quiz / "h").symlink_to(home)
    return root


class Served:
    """`quizgen serve` (serve.serve) on a free port in a thread, its first build held until `release`."""

    def __init__(self, root: Path, pool: Pool, monkeypatch: pytest.MonkeyPatch) -> None:
        self.gate = threading.Event()
        real = pipeline.build

        def held(options: pipeline.Options) -> pipeline.Report:
            self.gate.wait(60)
            return real(options)

        monkeypatch.setattr(pipeline, "build", held)
        self.lines: list[str] = []
        self.stop = threading.Event()
        options = pipeline.Options(cards_dir=root / "cards", out_dir=root / "build", pool=pool)
        self.thread = threading.Thread(target=serve.serve, args=(options, 0, self.lines.append, self.stop))
        self.thread.start()
        found = wait_for(lambda: re.search(r"at (http://127\.0\.0\.1:\d+)/", "\n".join(self.lines)), "serve")
        self.base = found.group(1)

    def get(self, path: str) -> tuple[int, str]:
        """(status, body) of GET `path`."""
        try:
            with urllib.request.urlopen(self.base + path, timeout=20) as response:
                return response.status, response.read().decode(errors="replace")
        except urllib.error.HTTPError as refused:
            return refused.code, refused.read().decode(errors="replace")

    def builds(self, prefix: str) -> int:
        return sum(line.startswith(prefix) for line in self.lines)

    def close(self) -> None:
        self.gate.set()
        self.stop.set()
        self.thread.join(30)
        assert not self.thread.is_alive()


@pytest.fixture
def served(hostile: Path, pool: Pool, monkeypatch: pytest.MonkeyPatch) -> Iterator[Served]:
    running = Served(hostile, pool, monkeypatch)
    try:
        yield running
    finally:
        running.close()


# The secret first: on a serve that follows links, the first failure shows it served.
PROBES = ("/k.txt", "/h/", "/h", "/h/secret.txt", "/%68/secret.txt", "/../secret.txt", "/", "/index.html")


def assert_nothing_shipped(served: Served) -> None:
    """No probe gets the secret, a listing of $HOME or the shipped page; each gets serve's own answer."""
    for path in PROBES:
        status, body = served.get(path)
        assert SECRET not in body and "secret.txt" not in body and SHIPPED not in body, (path, body)
        assert status in (404, 503), (path, status)


def test_serve_sends_nothing_shipped_before_the_first_build_ends_nor_after_it_fails(
    served: Served, hostile: Path
) -> None:
    assert_nothing_shipped(served)  # the first build is held: it has not ended
    status, body = served.get("/")
    assert status == 503 and "No good build to show yet" in body and serve.LIVE_PATH in body

    served.gate.set()
    wait_for(lambda: served.builds("build failed"), "the failed build", timeout=60)
    assert (hostile / "build" / "quiz" / "k.txt").is_symlink()  # the shipped folder is still there
    assert_nothing_shipped(served)
    status, script = served.get(serve.STATUS_PATH)
    assert status == 200 and '"ok": false' in script and "deck.yaml" in script  # the page shows the error


def test_serve_follows_no_link_planted_after_a_good_build(served: Served, hostile: Path, home: Path) -> None:
    served.gate.set()
    (hostile / "cards" / "deck.yaml").write_text(DECK.format(answer=2))
    wait_for(lambda: served.builds("built "), "a good build", timeout=60)
    quiz = hostile / "build" / "quiz"
    status, page = served.get("/")
    assert status == 200 and "Hostile" in page and serve.LIVE_PATH in page and SHIPPED not in page

    # Planted after the build: new links; a written file replaced by a link to its own bytes elsewhere
    # (only the link is wrong), and the index by other bytes.
    (quiz / "k.txt").symlink_to(home / "secret.txt")
    (quiz / "h").symlink_to(home)
    deck = next(p for p in (quiz / "decks").iterdir() if p.suffix == ".html")
    elsewhere = hostile / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / deck.name).write_bytes(deck.read_bytes())
    deck.unlink()
    deck.symlink_to(elsewhere / deck.name)
    (quiz / "index.html").write_text(SHIPPED_PAGE)
    assert_nothing_shipped(served)
    assert served.get(f"/decks/{deck.name}")[0] == 503
    # The decks folder replaced by a link to a folder holding the file as built: nothing is read through it.
    deck.unlink()
    (quiz / "decks").rename(elsewhere / "decks")
    (elsewhere / "decks" / deck.name).write_bytes((elsewhere / deck.name).read_bytes())
    (quiz / "decks").symlink_to(elsewhere / "decks")
    assert served.get(f"/decks/{deck.name}")[0] == 503


def test_a_file_is_read_through_no_link_and_only_if_regular(tmp_path: Path) -> None:
    (tmp_path / "top" / "a").mkdir(parents=True)
    (tmp_path / "top" / "a" / "f").write_text("ok")
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "f").write_text("secret")
    (tmp_path / "top" / "b").symlink_to(tmp_path / "elsewhere")
    (tmp_path / "top" / "l").symlink_to(tmp_path / "elsewhere" / "f")
    os.mkfifo(tmp_path / "top" / "fifo")  # opened without blocking, then refused
    top = tmp_path / "top"
    assert files.read_beneath(top, "a/f", 10) == b"ok"
    assert files.read_beneath(top, "a/f", 1) is None  # over the bound
    for name in ("b/f", "l", "fifo", "a", "a/../a/f", "../elsewhere/f", "/etc/passwd", "", "a//f/"):
        assert files.read_beneath(top, name, 100) is None, name
    assert files.digest_beneath(top, "a/f") == (2, hashlib.sha256(b"ok").hexdigest())
    assert files.digest_beneath(top, "l") is None


FETCH = "fetch('/k.txt').then(r => r.text().then(t => r.status + ' ' + t)).catch(e => 'failed: ' + e)"


def test_the_shipped_page_cannot_fetch_the_linked_secret_in_a_browser(
    served: Served, browser: Any, hostile: Path
) -> None:
    page = browser.new_page()
    try:
        for moment in ("before the first build ends", "after it failed"):
            page.goto(served.base + "/")
            got = page.evaluate(FETCH)  # what the shipped page's script asks, from the page at /
            assert SECRET not in got and "got:" not in page.title(), (moment, got)
            assert SHIPPED not in page.content(), moment  # serve's own page, never the shipped one
            served.gate.set()
            wait_for(lambda: served.builds("build failed"), "the failed build", timeout=60)
        (hostile / "cards" / "deck.yaml").write_text(DECK.format(answer=2))
        wait_for(lambda: served.builds("built "), "a good build", timeout=60)
        (hostile / "build" / "quiz" / "k.txt").symlink_to(Path.home() / "secret.txt")
        page.goto(served.base + "/")
        assert page.title() == "Quizzes" and SECRET not in page.evaluate(FETCH)
    finally:
        page.close()
