"""Execution results on disk, addressed by everything that can change them."""

from __future__ import annotations

import hashlib
import json
import os
import sys
import tempfile
from functools import cache
from importlib import metadata
from pathlib import Path

from quizgen import __version__
from quizgen.constants import RESULT_FORMAT
from quizgen.execution.protocol import Job, Outcome


@cache
def torch_version() -> str:
    """The installed torch's version, read from its metadata: importing torch takes seconds."""
    try:
        return metadata.version("torch")
    except metadata.PackageNotFoundError:
        return "none"


def _without_places(job: object) -> object:
    """The job minus file names and line numbers: moving a card must not invalidate its result.

    Only a snippet's own place goes (a dict of exactly code, path and line); a cite named `line` stays.
    """
    if isinstance(job, dict):
        if set(job) == {"code", "path", "line"}:
            return {"code": job["code"]}
        return {k: _without_places(v) for k, v in job.items()}
    if isinstance(job, list):
        return [_without_places(v) for v in job]
    return job


def job_key(job: Job) -> str:
    """The cache key of a job: its content (not its place in the files) and every version it ran with."""
    material = {
        "job": _without_places(job),
        "quizgen": __version__,
        "format": RESULT_FORMAT,
        "python": sys.version,
        "torch": torch_version(),
    }
    return hashlib.sha256(json.dumps(material, sort_keys=True).encode()).hexdigest()


class Cache:
    def __init__(self, root: Path, enabled: bool = True) -> None:
        self.root = root
        self.enabled = enabled

    def _path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.json"

    def get(self, key: str) -> Outcome | None:
        """The stored outcome, or None when absent or unreadable (a corrupt entry is recomputed)."""
        if not self.enabled:
            return None
        try:
            data = json.loads(self._path(key).read_text(encoding="utf-8"))
            if data.get("key") != key:
                return None
            outcome = Outcome.from_result(data["outcome"])
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            return None
        if not outcome.ok:
            return None
        outcome.cached = True
        return outcome

    def put(self, key: str, outcome: Outcome) -> None:
        """Store a successful outcome; failures carry file locations and are always rerun."""
        if not self.enabled or not outcome.ok or outcome.contaminated:
            return  # a job that changed its worker's shared state is run again next time
        path = self._path(key)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump({"key": key, "outcome": outcome.to_json()}, f)
            os.replace(tmp, path)
        except OSError:
            pass  # a cache that cannot be written only costs time
