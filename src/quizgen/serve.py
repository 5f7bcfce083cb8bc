"""`quizgen build --watch` and `quizgen serve`: rebuild when cards or templates change; serve on localhost."""

from __future__ import annotations

import functools
import ipaddress
import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from functools import cache
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from quizgen import confine, pipeline, terminal, trees
from quizgen.cards.loader import card_files
from quizgen.errors import QuizgenError, UsageError, count, warning_lines
from quizgen.execution.pool import Pool

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

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._state: dict[str, Any] = {"build": 0, "ok": True, "error": "", "good": 0}

    def built(self) -> None:
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
    if report.sandbox_off:
        echo(f"note: snippets ran without a sandbox: {report.sandbox_off}")
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


class _Handler(SimpleHTTPRequestHandler):
    """Static files with caching off, so a reload after a rebuild shows the new pages; quiet logs. Pages
    get static/serve/live.js, which shows a failed build and reloads after a good one (`live`)."""

    live: Live

    def __init__(self, *args: Any, live: Live, **kw: Any) -> None:
        self.live = live
        super().__init__(*args, **kw)

    def do_GET(self) -> None:
        if not self._for_this_machine():
            return self.send_error(403, "this preview answers to localhost only")
        path = urlsplit(self.path).path
        if path == STATUS_PATH:
            return self._send(self.live.script(), "text/javascript; charset=utf-8")
        if path == LIVE_PATH:
            return self._send(_live_js(), "text/javascript; charset=utf-8")
        file = Path(self.translate_path(self.path))
        if path.endswith("/") and file.is_dir():
            file = file / "index.html"
        if file.suffix == ".html" and file.is_file():
            page = file.read_bytes()
            at = page.rfind(b"</body>")
            page = page[:at] + _LIVE_TAG + page[at:] if at >= 0 else page + _LIVE_TAG
            return self._send(page, "text/html; charset=utf-8")
        super().do_GET()

    def do_HEAD(self) -> None:
        if not self._for_this_machine():
            return self.send_error(403, "this preview answers to localhost only")
        super().do_HEAD()

    def _for_this_machine(self) -> bool:
        """Whether the request names this machine: a page elsewhere whose domain was re-pointed at
        127.0.0.1 (DNS rebinding) would name its own, and read the previews and a failed build's paths."""
        bound = self.server.server_address
        if isinstance(bound, tuple) and not ipaddress.ip_address(bound[0]).is_loopback:
            return True  # served on the network by choice (--host): reached by whatever name it has there
        host = urlsplit("//" + self.headers.get("Host", "")).hostname or ""
        return host in _LOCAL_NAMES

    def _send(self, body: bytes, content_type: str) -> None:
        self.send_response(200)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def end_headers(self) -> None:
        self.send_header("Cache-Control", "no-store")
        super().end_headers()

    def log_message(self, format: str, *args: Any) -> None:
        pass


@cache
def _live_js() -> bytes:
    return resources.files("quizgen").joinpath("static", "serve", "live.js").read_bytes()


def make_server(
    site: Path, host: str = "127.0.0.1", port: int = 8000, live: Live | None = None
) -> ThreadingHTTPServer:
    """An HTTP server for `site`; the folder is looked up per request, so a rebuild's swap is picked up."""
    handler = functools.partial(_Handler, directory=str(site), live=live or Live())
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
    live = Live()
    server = make_server(options.out_dir / "quiz", host, port, live)
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
