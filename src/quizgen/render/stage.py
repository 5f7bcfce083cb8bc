"""Staged outputs: every renderer writes beside its targets, and nothing replaces a target until all
renderers have finished, so a failed build leaves every earlier output (and the lock) as it was."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from quizgen.errors import OutputError


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _cannot(path: Path, exc: OSError) -> OutputError:
    return OutputError(f"{path}: cannot write: {exc.strerror or exc}")


class Stage:
    """Temporary files and folders beside their targets; `commit` moves them into place."""

    def __init__(self) -> None:
        self._files: list[tuple[Path, Path]] = []  # (temporary, target)
        self._dirs: list[tuple[Path, Path]] = []

    def file(self, target: Path) -> Path:
        """A temporary path that becomes `target` on commit."""
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
            os.fchmod(fd, 0o666 & ~_umask())  # mkstemp makes it private; an output is an ordinary file
            os.close(fd)
        except OSError as exc:
            raise _cannot(target, exc) from None
        self._files.append((Path(tmp), target))
        return Path(tmp)

    def folder(self, target: Path) -> Path:
        """A fresh folder that takes `target`'s place whole on commit."""
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            tmp = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".{target.name}."))
            tmp.chmod(0o777 & ~_umask())  # a web server must be able to read a published folder
        except OSError as exc:
            raise _cannot(target, exc) from None
        self._dirs.append((tmp, target))
        return tmp

    def commit(self) -> None:
        """Move everything staged into place (each target is replaced whole)."""
        try:
            for tmp, target in self._files:
                os.replace(tmp, target)
            for tmp, target in self._dirs:
                _swap(tmp, target)
        except OSError as exc:
            raise OutputError(f"cannot put the new outputs in place: {exc.strerror or exc}") from None
        finally:
            self.discard()

    def discard(self) -> None:
        """Remove whatever is still staged."""
        for tmp, _ in self._files:
            if tmp.exists():
                tmp.unlink()
        for tmp, _ in self._dirs:
            shutil.rmtree(tmp, ignore_errors=True)
        self._files.clear()
        self._dirs.clear()

    def __enter__(self) -> Stage:
        return self

    def __exit__(self, *exc: object) -> None:
        self.discard()  # after a commit there is nothing left; after a failure, nothing is kept


def _swap(tmp: Path, target: Path) -> None:
    old = target.parent / f".{target.name}.old"
    shutil.rmtree(old, ignore_errors=True)
    if target.exists():
        os.replace(target, old)
    os.replace(tmp, target)
    shutil.rmtree(old, ignore_errors=True)
