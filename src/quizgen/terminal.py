"""What quizgen prints: text from a card repository (messages, outputs, card text, file names) reaches
the terminal with its control characters shown as `\\x1b`, never sent, so it cannot move the cursor,
rewrite a line ("all cards verified") or reach the terminal's clipboard (OSC 52)."""

from __future__ import annotations

import re
import sys
import time
import traceback
import warnings
from collections.abc import Callable
from types import TracebackType
from typing import TextIO

import click

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


def progress_printer() -> Callable[[int, int], None] | None:
    """A one-line progress display on stderr, for terminals only."""
    if not sys.stderr.isatty():
        return None
    start = time.perf_counter()

    def show(done: int, total: int) -> None:
        if time.perf_counter() - start < 1.0 and done < total:
            return
        end = "\n" if done == total else ""
        sys.stderr.write(f"\rexecuting snippets: {done}/{total}{end}")
        sys.stderr.flush()

    return show
