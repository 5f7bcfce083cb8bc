"""Warnings told once: a warning an earlier run showed is not repeated. A warning is the same while its
file, card, field and message are (not its line: editing the cards above it moves it). What was shown
is kept in the project's state folder (quizgen/project/state.py), so `build`, `check`, `build --watch` and
`serve` rebuilds share it; a warning that goes away and comes back is shown again."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from pathlib import Path

from quizgen.errors import OutputError, Problem
from quizgen.project import state

SHOWN = "warnings-shown.json"


def _key(warning: Problem) -> str:
    """What makes a warning the same one: where it is, but for its line and column, and what it says."""
    at = warning.location
    return hashlib.sha256(json.dumps([at.path, at.card, at.field, warning.message]).encode()).hexdigest()


def fresh(out_dir: Path, warnings: list[Problem]) -> tuple[list[Problem], int]:
    """The warnings not shown before, and how many are held back; the given ones are remembered as
    shown (only these: one that goes and comes back is shown again)."""
    try:
        record = state.folder(out_dir) / SHOWN
    except OutputError:
        return warnings, 0  # no state folder: every run shows every warning
    shown: set[str] = set()
    with contextlib.suppress(OSError, ValueError, TypeError):
        shown = {str(k) for k in json.loads(record.read_text())}
    keys = [_key(w) for w in warnings]
    new = [w for w, k in zip(warnings, keys, strict=True) if k not in shown]
    with contextlib.suppress(OSError):
        partial = record.with_suffix(f".{os.getpid()}.tmp")
        partial.write_text(json.dumps(sorted(set(keys))))
        partial.replace(record)
    return new, len(warnings) - len(new)
