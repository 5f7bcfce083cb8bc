"""What quizgen prints: text from a card repository (messages, outputs, card text, file names) reaches
the terminal with its control characters shown as `\\x1b`, never sent, so it cannot move the cursor,
rewrite a line ("all cards verified") or reach the terminal's clipboard (OSC 52)."""

from __future__ import annotations

import re
import shutil
import sys
import threading
import time
import traceback
import warnings
from collections.abc import Callable
from types import TracebackType
from typing import Protocol, TextIO

import click

from quizgen.execution.progress import PHASES


class Running(Protocol):
    """The jobs at work (execution.pool.Running): the one waited on longest, with its progress."""

    def longest(self) -> tuple[str, float, tuple[int, int, int] | None] | None: ...


# C0 but newline and tab, DEL, C1; and the bidirectional overrides, which reorder what a line shows.
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def visible(text: str) -> str:
    """The text with every control character but newline and tab written out (`\\x1b`, `\\u202e`)."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m[0]):02x}" if ord(m[0]) < 0x100 else f"\\u{ord(m[0]):04x}", text)


def echo(message: str = "", err: bool = False) -> None:
    """click.echo of the message made visible."""
    click.echo(visible(message), err=err)


def _excepthook(kind: type[BaseException], exc: BaseException, tb: TracebackType | None) -> None:
    sys.stderr.write(visible("".join(traceback.format_exception(kind, exc, tb))))


def _showwarning(
    message: Warning | str,
    category: type[Warning],
    filename: str,
    lineno: int,
    file: TextIO | None = None,
    line: str | None = None,
) -> None:
    (file or sys.stderr).write(visible(warnings.formatwarning(message, category, filename, lineno, line)))


def guard() -> None:
    """Make what Python itself prints (an unexpected traceback, a warning) visible too."""
    sys.excepthook = _excepthook
    warnings.showwarning = _showwarning


def progress_printer() -> ProgressLine | None:
    """A one-line progress display on stderr, for terminals only."""
    return ProgressLine(sys.stderr) if sys.stderr.isatty() else None


class ProgressLine:
    """Snippets run of all, on one line; when a job takes more than WAIT seconds, the card it is for
    and how long it has run (an order search says how far it is), redrawn every second meanwhile."""

    WAIT = 3.0  # seconds a job runs before the line names its card

    def __init__(self, stream: TextIO) -> None:
        self.stream, self.start = stream, time.perf_counter()
        self.done = self.total = 0
        self._lock = threading.Lock()
        self._running: Running | None = None
        self._describe: Callable[[str], str] = str
        self._ticker: threading.Thread | None = None
        self._shown = 0  # characters on the line now (a shorter line pads them away)

    def __call__(self, done: int, total: int) -> None:
        with self._lock:
            self.done, self.total = done, total
            if time.perf_counter() - self.start >= 1.0 or done >= total:
                self._draw()

    def watch(self, running: Running, describe: Callable[[str], str]) -> None:
        """Name the job of `running` waited on longest (`describe`: its key as the user knows it)."""
        with self._lock:
            self._running, self._describe = running, describe
        if self._ticker is None:
            self._ticker = threading.Thread(target=self._tick, daemon=True)
            self._ticker.start()

    def stop(self) -> None:
        """The jobs are over (all done, or the run stopped early): no more redrawing, and the next
        output starts on a line of its own."""
        with self._lock:
            self._running = None
            if self._shown:
                self.stream.write("\n")
                self.stream.flush()
                self._shown = 0

    def _tick(self) -> None:
        while True:
            time.sleep(1.0)
            with self._lock:
                if self._running is not None and self.done < self.total:
                    self._draw()

    def _draw(self) -> None:
        text = f"executing snippets: {self.done}/{self.total}"
        longest = self._running.longest() if self._running is not None else None
        if self.done < self.total and longest is not None and longest[1] >= self.WAIT:
            key, seconds, told = longest
            text += f", waiting on {visible(self._describe(key))} ({seconds:.0f} s"
            if told is not None:
                phase, done, total = told
                what = PHASES[phase] if phase < len(PHASES) else "its work"
                text += f"; searching {what}: {done:,} of {total:,} candidates decided"
            text += ")"
        width = max(20, shutil.get_terminal_size().columns - 1)
        if len(text) > width:
            text = text[: width - 1] + "…"
        end = "\n" if self.done >= self.total else ""
        self.stream.write("\r" + text + " " * max(0, self._shown - len(text)) + end)
        self.stream.flush()
        self._shown = 0 if end else len(text)
