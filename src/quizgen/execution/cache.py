"""Execution results on disk, addressed by everything that can change them: the `results` table of the
build's store (project/store.py). A failure is never kept: it runs again."""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Iterable
from pathlib import Path

from quizgen import __version__
from quizgen.constants import RESULT_FORMAT
from quizgen.execution.protocol import Job, Outcome
from quizgen.project.store import Store
from quizgen.torch_versions import installed


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


def job_key(job: Job, torch: str | None = None) -> str:
    """The cache key of a job: its content (not its place in the files) and every version it runs with;
    `torch` is the version of the torch that runs it (torch_versions/environments.py), by default the
    installed one."""
    material = {
        "job": _without_places(job),
        "quizgen": __version__,
        "format": RESULT_FORMAT,
        "python": sys.version,
        "torch": torch or installed.version(),
    }
    return hashlib.sha256(json.dumps(material, sort_keys=True).encode()).hexdigest()


class Cache(Store):
    """The build's store, with execution's results."""

    def get_many(self, keys: Iterable[str]) -> dict[str, Outcome]:
        """The stored outcomes of those `keys` that have a readable one (a corrupt entry is recomputed)."""
        found = {}
        for key, text in self.lookup("results", keys).items():
            outcome = _outcome(key, text)
            if outcome is not None:
                found[key] = outcome
        return found

    def get(self, key: str) -> Outcome | None:
        """The stored outcome, or None when absent or unreadable."""
        return self.get_many([key]).get(key)

    def put(self, key: str, outcome: Outcome) -> None:
        """Store a successful outcome; failures carry file locations and are always rerun. A job that
        changed its worker's shared state is stored too: it ran from the clean state, so its result
        stands (the worker it changed ran nothing after it)."""
        if not outcome.ok:
            return
        self.store("results", [(key, json.dumps({"key": key, "outcome": outcome.to_json()}))])


def for_output(out_dir: Path, enabled: bool = True) -> Cache:
    """The store of the project whose outputs go to `out_dir`, with its results (Store.for_output)."""
    return Cache.for_output(out_dir, enabled)


def _outcome(key: str, text: str) -> Outcome | None:
    try:
        data = json.loads(text)
        if data.get("key") != key:
            return None
        outcome = Outcome.from_result(data["outcome"])
    except (ValueError, KeyError, TypeError, AttributeError):
        return None
    if not outcome.ok:
        return None
    outcome.cached = True
    return outcome
