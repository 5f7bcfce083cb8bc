"""Per-deck outputs made again only when what they are made from changed.

A build after one edit used to render every deck's page and package again (keeping the old bytes of
those that came out the same). Each such output is now named by a digest of everything it is made
from (its inputs, quizgen's code, the templates); the store remembers the digest of the bytes that
made, and an output whose target still holds exactly those bytes is copied from it instead.
"""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

from quizgen.project import files
from quizgen.project.store import Store, code_stamp


def _digest(path: Path) -> str | None:
    """The file's digest; None when it is not a regular file (a shipped output folder may hold a link
    to /dev/zero where the last build's output was)."""
    try:
        return files.digest(path)
    except OSError:
        return None


class Reuse:
    """Outputs made before from the same inputs (`key`), copied from their targets rather than made."""

    def __init__(self, out_dir: Path, enabled: bool = True) -> None:
        self.cache = Store.for_output(out_dir, enabled)
        self.salt = code_stamp() if enabled else ""

    def key(self, *inputs: str) -> str:
        """The name of an output made from `inputs` (text that says all they hold) by this quizgen."""
        digest = hashlib.sha256(self.salt.encode())
        for part in inputs:
            digest.update(b"\0" + part.encode())
        return digest.hexdigest()

    def copied(self, key: str, target: Path, staged: Path) -> bool:
        """Copy `target` to `staged` when it holds what `key` made; False: make it."""
        made = self.cache.lookup("outputs", [key]).get(key) if self.cache.enabled else None
        if made is None or _digest(target) != made:
            return False
        staged.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(target, staged)
        return True

    def made(self, key: str, staged: Path) -> None:
        """Remember what `key` made (written to the store when the build closes it)."""
        digest = _digest(staged)
        if digest is not None:
            self.cache.store("outputs", [(key, digest)])

    def close(self) -> None:
        self.cache.close()
