"""`quizgen build --watch` and `quizgen serve`: rebuild when cards or templates change; serve on localhost."""

from __future__ import annotations

import functools
import hashlib
import ipaddress
import json
import mimetypes
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from functools import cache
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from quizgen import pipeline, terminal
from quizgen.cards.loader import card_files
from quizgen.errors import QuizgenError, UsageError, count, warning_lines
from quizgen.execution.pool import Pool
from quizgen.project import confine, files, state, trees
from quizgen.render import manifest

Echo = Callable[[str], None]
POLL_SECONDS = 0.5
_LOCAL_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})  # what a browser on this machine sends as Host


def templates_dir(options: pipeline.Options) -> Path:
    return options.cards_dir.parent / "templates"


def snapshot(options: pipeline.Options) -> dict[Path, tuple[int, int]]:
    """(mtime, size) of every card file and template: what a rebuild depends on.

    Only card files count under cards/, so files a build writes there (the Anki lock) never trigger one.
    """
    try:
        files = card_files(options.cards_dir)
    except UsageError:
        files = []  # the folder is gone for now; the rebuild will say so
    templates = templates_dir(options)
    if templates.is_dir():
        files += [p for p in trees.walk(templates) if p.is_file()]
    seen = {}
    for path in files:
        try:
            stat = path.stat()
        except OSError:
            continue  # deleted while we looked
        seen[path] = (stat.st_mtime_ns, stat.st_size)
    return seen


class Live:
    """How the builds went, for the pages `serve` sends: they ask for it (`script`) and show a failed
    build's error, or reload after a new good one. Read by the server's threads, set by the watcher."""

    def __init__(self, on_built: Callable[[], None] | None = None) -> None:
        self._lock = threading.Lock()
        self._state: dict[str, Any] = {"build": 0, "ok": True, "error": "", "good": 0}
        self._on_built = on_built  # before a page hears of the build, so its reload finds the new files

    def built(self) -> None:
        if self._on_built is not None:
            self._on_built()
        with self._lock:
            n = self._state["build"] + 1
            self._state = {"build": n, "ok": True, "error": "", "good": n}

    def failed(self, error: str) -> None:
        with self._lock:
            self._state = {**self._state, "build": self._state["build"] + 1, "ok": False, "error": error}

    def state(self) -> dict[str, Any]:
        with self._lock:
            return dict(self._state)

    def script(self) -> bytes:
        """status.js: the state as a call to static/serve/live.js (JSON is a JavaScript expression)."""
        data = json.dumps(self.state()).replace("<", "\\u003c")
        return f"window.QuizgenServe && window.QuizgenServe.status({data});\n".encode()


def rebuild(options: pipeline.Options, echo: Echo, live: Live | None = None) -> pipeline.Report | None:
    """One build; a mistake in the cards or templates is reported and the previous outputs stay."""
    try:
        report = pipeline.build(options)
    except QuizgenError as exc:
        echo(exc.format_message())
        echo("build failed; the previous outputs are unchanged")
        if live is not None:
            live.failed(exc.format_message())
        return None
    if live is not None:
        live.built()
    for line in warning_lines(report.warnings, report.repeated):
        echo(line)
    echo(
        f"built {count(report.cards, 'card')} in {count(len(report.decks), 'deck')} "
        f"({report.sources}) in {report.seconds:.2f} s"
    )
    return report


def watch(
    options: pipeline.Options,
    echo: Echo,
    stop: threading.Event,
    interval: float = POLL_SECONDS,
    live: Live | None = None,
) -> None:
    """Build now, then again after every change, until `stop` is set; `live` hears how each went."""
    seen = snapshot(options)
    rebuild(options, echo, live)
    while not stop.wait(interval):
        now = snapshot(options)
        if now == seen:
            continue
        # Editors often write a file in steps: wait for it to settle before building.
        time.sleep(min(interval, 0.2))
        seen = snapshot(options)
        echo("change detected, rebuilding")
        rebuild(options, echo, live)


@contextmanager
def _warm(options: pipeline.Options) -> Iterator[pipeline.Options]:
    """Options with a worker pool kept across rebuilds, so an edited snippet does not wait for torch again."""
    if options.pool is not None:
        yield options
        return
    with Pool(max(1, options.jobs), options.memory) as pool:
        yield replace(options, pool=pool)


def watch_forever(options: pipeline.Options, echo: Echo) -> None:
    """`quizgen build --watch`: rebuild on change until Ctrl-C."""
    echo(f"watching {options.cards_dir} and {templates_dir(options)} (Ctrl-C to stop)")
    with _warm(options) as warm:
        try:
            watch(warm, echo, threading.Event())
        except KeyboardInterrupt:
            echo("stopped")


LIVE_PATH = "/__quizgen/live.js"
STATUS_PATH = "/__quizgen/status.js"
_LIVE_TAG = f'<script src="{LIVE_PATH}"></script>'.encode()
WAITING_ID = "quizgen-serve-waiting"  # static/serve/live.js words its error box for this page
_WAITING = f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>quizgen serve: no good build to show</title></head>
<body id="{WAITING_ID}"><main><h1>No good build to show yet</h1>
<p>quizgen serve sends only the files a good build of this session wrote: the build is under way, it
failed (its error shows here), or the file changed since. This page reloads after the next good build.</p>
</main>{_LIVE_TAG.decode()}</body></html>
""".encode()
_WAITING_POLICY = "default-src 'none'; script-src 'self'"


class Site:
    """What serve sends: the files the last good build of this session wrote, as its manifest records
    them (render/manifest.py), each read beneath the output folder through no link (project/files.py) and sent
    only while its size and SHA-256 are those recorded. Before the first good build, nothing: never a
    folder a repository shipped. No folder is ever listed."""

    def __init__(self, folder: Path, state_dir: Path) -> None:
        self.folder = folder
        self.state_dir = state_dir
        self._lock = threading.Lock()
        self._files: dict[str, tuple[int, str]] | None = None

    def load(self) -> None:
        """Take the manifest of the build that just succeeded."""
        published = manifest.published(self.state_dir, self.folder)
        with self._lock:
            self._files = published

    def files(self) -> dict[str, tuple[int, str]] | None:
        """The files by name ('decks/a.html') as (size, SHA-256); None before the first good build."""
        with self._lock:
            return self._files

    def read(self, name: str) -> bytes | None:
        """The bytes of `name` as the build wrote them; None when it was not written, or changed since."""
        written = self.files() or {}
        if name not in written:
            return None
        size, sha = written[name]
        data = files.read_beneath(self.folder.parent, f"{self.folder.name}/{name}", size)
        if data is None or len(data) != size or hashlib.sha256(data).hexdigest() != sha:
            return None
        return data


class _Handler(BaseHTTPRequestHandler):
    """The site's files with caching off, so a reload after a rebuild shows the new pages; quiet logs.
    Pages get static/serve/live.js, which shows a failed build and reloads after a good one (`live`)."""

    def __init__(self, *args: Any, site: Site, live: Live, **kw: Any) -> None:
        self.site = site
        self.live = live
        super().__init__(*args, **kw)

    def do_GET(self) -> None:
        self._answer(body=True)

    def do_HEAD(self) -> None:
        self._answer(body=False)

    def _answer(self, body: bool) -> None:
        if not self._for_this_machine():
            return self.send_error(403, "this preview answers to localhost only")
        path = unquote(urlsplit(self.path).path)
        if path == STATUS_PATH:
            return self._send(self.live.script(), "text/javascript; charset=utf-8", body)
        if path == LIVE_PATH:
            return self._send(_live_js(), "text/javascript; charset=utf-8", body)
        files = self.site.files()
        name = path.lstrip("/")
        name += "index.html" if name == "" or name.endswith("/") else ""
        if files is not None and name not in files:
            if f"{name}/index.html" in files:  # a folder named without its slash, as a static server does
                self.send_response(301)
                self.send_header("Location", urlsplit(self.path).path + "/")
                self.send_header("Content-Length", "0")
                return self.end_headers()
            return self.send_error(404, "not a file the build wrote")
        data = self.site.read(name)
        if data is None:  # no good build yet, or the file changed since: never what is on disk instead
            return self._send(_WAITING, "text/html; charset=utf-8", body, 503, _WAITING_POLICY)
        if name.endswith(".html"):
            at = data.rfind(b"</body>")
            data = data[:at] + _LIVE_TAG + data[at:] if at >= 0 else data + _LIVE_TAG
            return self._send(data, "text/html; charset=utf-8", body)
        return self._send(data, mimetypes.guess_type(name)[0] or "application/octet-stream", body)

    def _for_this_machine(self) -> bool:
        """Whether the request names this machine: a page elsewhere whose domain was re-pointed at
        127.0.0.1 (DNS rebinding) would name its own, and read the previews and a failed build's paths."""
        bound = self.server.server_address
        if isinstance(bound, tuple) and not ipaddress.ip_address(bound[0]).is_loopback:
            return True  # served on the network by choice (--host): reached by whatever name it has there
        host = urlsplit("//" + self.headers.get("Host", "")).hostname or ""
        return host in _LOCAL_NAMES

    def _send(self, data: bytes, kind: str, body: bool, code: int = 200, policy: str = "") -> None:
        self.send_response(code)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(data)))
        self.send_header("X-Content-Type-Options", "nosniff")
        if policy:
            self.send_header("Content-Security-Policy", policy)
        self.end_headers()
        if body:
            self.wfile.write(data)

    def end_headers(self) -> None:
        self.send_header("Cache-Control", "no-store")
        super().end_headers()

    def log_message(self, format: str, *args: Any) -> None:
        pass


@cache
def _live_js() -> bytes:
    return resources.files("quizgen").joinpath("static", "serve", "live.js").read_bytes()


def make_server(
    site: Site, host: str = "127.0.0.1", port: int = 8000, live: Live | None = None
) -> ThreadingHTTPServer:
    """An HTTP server for `site`; its files are looked up per request, so a rebuild is picked up."""
    handler = functools.partial(_Handler, site=site, live=live or Live())
    try:
        return ThreadingHTTPServer((host, port), handler)
    except OSError as exc:
        raise UsageError(
            f"cannot serve on {host}:{port}: {exc.strerror or exc}; try another --port"
        ) from None


def serve(
    options: pipeline.Options,
    port: int = 8000,
    echo: Echo = terminal.echo,
    stop: threading.Event | None = None,
    host: str = "127.0.0.1",
) -> None:
    """`quizgen serve`: serve build/quiz on localhost and rebuild it on change until Ctrl-C or `stop`."""
    confine.output_folder(options.out_dir / "quiz", options.cards_dir)  # never serve a folder outside
    site = Site(options.out_dir / "quiz", state.where(options.out_dir))
    live = Live(on_built=site.load)
    server = make_server(site, host, port, live)
    thread = threading.Thread(target=server.serve_forever, name="quizgen-serve", daemon=True)
    thread.start()
    url = f"http://{host}:{server.server_port}/"
    try:
        with _warm(options) as warm:
            echo(f"serving {options.out_dir / 'quiz'} at {url} (Ctrl-C to stop)")
            watch(warm, echo, stop or threading.Event(), live=live)
    except KeyboardInterrupt:
        echo("stopped")
    finally:
        server.shutdown()
        server.server_close()
