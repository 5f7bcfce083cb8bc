"""Staged outputs: every renderer writes beside its targets, and nothing replaces a target until all
renderers have finished, so a failed build leaves every earlier output (and the lock) as it was.

A build killed at any moment (SIGKILL, power loss) is safe too: before the first target is replaced,
the list of moves is written to a journal, and the next build finishes an interrupted commit from it
(`recover`) before it starts, so the outputs are always the old set or the new set, never a mix.
Each move is idempotent to redo: whether a staged file or folder still exists says how far it got.
The journal is kept in the project's state folder in the user's cache directory (quizgen/project/state.py),
never in the project, and even so a move is replayed only when it is one a build of this project makes:
a staged entry directly beside its target, the target in the output folder or the project's lock.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from quizgen.constants import LOCK_NAME
from quizgen.errors import OutputError
from quizgen.project import confine, trees


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _cannot(path: Path, exc: OSError) -> OutputError:
    return OutputError(f"{path}: cannot write: {exc.strerror or exc}")


STAGED = ".quizgen-staged-"  # the prefix of everything staged: what an interrupted build leaves
JOURNAL = ".quizgen-commit.json"  # in the project's state folder, while a commit is under way
LOCK = ".quizgen-build.lock"  # in the output folder: one build at a time


class Stage:
    """Temporary files and folders beside their targets; `commit` moves them into place."""

    def __init__(self, journal: Path | None = None) -> None:
        self._files: list[tuple[Path, Path]] = []  # (temporary, target)
        self._dirs: list[tuple[Path, Path]] = []
        self.journal = journal  # where the moves are written before they start (None: no journal)

    def file(self, target: Path) -> Path:
        """A temporary path that becomes `target` on commit."""
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f"{STAGED}{target.name}.", suffix=".tmp")
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
            tmp = Path(tempfile.mkdtemp(dir=target.parent, prefix=f"{STAGED}{target.name}."))
            tmp.chmod(0o777 & ~_umask())  # a web server must be able to read a published folder
        except OSError as exc:
            raise _cannot(target, exc) from None
        self._dirs.append((tmp, target))
        return tmp

    def files(self) -> list[tuple[Path, Path]]:
        """The staged files as (temporary, target)."""
        return list(self._files)

    def folders(self) -> list[tuple[Path, Path]]:
        """The staged folders as (temporary, target)."""
        return list(self._dirs)

    def adopt(self, files: list[tuple[Path, Path]], folders: list[tuple[Path, Path]]) -> None:
        """Take over what another stage (another process's) staged: committed or discarded with this one's."""
        self._files += files
        self._dirs += folders

    def moves(self) -> list[Callable[[], None]]:
        """The commit, step by step (each step can be redone after a crash)."""
        moves = [_entry(tmp, target, False) for tmp, target in self._files]
        moves += [_entry(tmp, target, True) for tmp, target in self._dirs]
        steps: list[Callable[[], None]] = []
        if self.journal is not None:
            journal = self.journal
            steps.append(lambda: _write_journal(journal, moves))
        steps += [lambda move=move: _move(move) for move in moves]  # type: ignore[misc]
        if self.journal is not None:
            steps.append(journal.unlink)
        return steps

    def keep_unchanged(self) -> None:
        """Leave alone every target the build made again byte for byte: a staged file equal to its target
        is dropped, and one in a staged folder becomes a link to the target's (same bytes, same times)."""
        for tmp, target in list(self._files):
            if not target.is_symlink() and _same(tmp, target):
                tmp.unlink()
                self._files.remove((tmp, target))
        for tmp, target in list(self._dirs):
            if target.is_dir() and not target.is_symlink() and _adopt(tmp, target):
                shutil.rmtree(tmp, ignore_errors=True)
                self._dirs.remove((tmp, target))

    def commit(self) -> None:
        """Move everything staged into place (each target is replaced whole; an unchanged one stays)."""
        try:
            self.keep_unchanged()
            for step in self.moves():
                step()
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


def _same(a: Path, b: Path) -> bool:
    try:
        return a.stat().st_size == b.stat().st_size and a.read_bytes() == b.read_bytes()
    except OSError:
        return False


def _adopt(staged: Path, target: Path) -> bool:
    """Link each file of `staged` that is the same as in `target` to the target's; True when every file
    and folder of both is the same, so the whole target can stay."""
    names = {p.relative_to(staged) for p in trees.walk(staged)}
    whole = names == {p.relative_to(target) for p in trees.walk(target)}
    real = target.resolve()
    for name in names:
        new, old = staged / name, target / name
        away = old.is_symlink() or not old.resolve().is_relative_to(real)  # through a symlink, maybe out
        if new.is_dir() or new.is_symlink() or away or not _same(new, old):
            whole = whole and new.is_dir() and old.is_dir()
            continue
        try:
            link = new.with_name(f"{STAGED}{new.name}.link")
            os.link(old, link)  # the same file: its times, its inode
            os.replace(link, new)
        except OSError:
            shutil.copystat(old, new)  # no hard links here: the same bytes and times at least
    return whole


def _entry(tmp: Path, target: Path, folder: bool) -> dict[str, object]:
    """One move as the journal keeps it: absolute, so a build run from another folder can redo it."""
    return {"tmp": os.path.abspath(tmp), "target": os.path.abspath(target), "dir": folder}


def _remove(path: Path) -> None:
    """Remove a staged file or folder; a symlink goes itself, never what it points to."""
    if path.is_dir() and not path.is_symlink():
        trees.remove(path)  # (a committed output folder may nest deeper than rmtree recurses)
    else:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()


def _write_journal(journal: Path, moves: list[dict[str, object]]) -> None:
    journal.parent.mkdir(parents=True, exist_ok=True)
    tmp = journal.with_name(journal.name + ".tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump({"moves": moves}, f)
        f.flush()
        os.fsync(f.fileno())  # the journal is on disk before the first target moves
    os.replace(tmp, journal)


def _move(move: dict[str, object]) -> None:
    """Put one staged file or folder in place; redoing it after a crash at any point finishes it.

    A folder goes in two renames (target -> old, staged -> target): the staged folder still existing
    means the second has not happened, the target existing besides means neither has.
    """
    tmp, target = Path(str(move["tmp"])), Path(str(move["target"]))
    if not move["dir"]:
        if tmp.exists():
            os.replace(tmp, target)
        return
    old = target.parent / f"{STAGED}{target.name}.old"
    if tmp.exists():
        if target.exists() or target.is_symlink():
            _remove(old)
            os.replace(target, old)
        os.replace(tmp, target)
    _remove(old)


def _no_follow(path: str, flags: int) -> int:
    return os.open(path, flags | os.O_NOFOLLOW, 0o666)


@contextmanager
def build_lock(out_dir: Path, waiting: Callable[[], None] | None = None) -> Iterator[None]:
    """Hold the output folder for one build at a time; a second build waits (`waiting` is told)."""
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        # Never through a symlink a repository shipped in its output folder: it could create a file anywhere.
        handle = open(out_dir / LOCK, "a+b", opener=_no_follow)  # noqa: SIM115 - held for the whole build
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise OutputError(f"{out_dir / LOCK}: a symlink, not quizgen's lock file: refused") from None
        raise _cannot(out_dir / LOCK, exc) from None
    with handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            if waiting is not None:
                waiting()
            fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def recover(journal: Path, out_dir: Path, cards_dir: Path) -> None:
    """Finish a commit a killed build of this project left half done, then remove what it had staged.

    Call it only while holding the build lock: another build's staged files would go too.
    """
    if journal.exists():
        try:
            moves = json.loads(journal.read_text(encoding="utf-8"))["moves"]
        except (OSError, ValueError, KeyError, TypeError):
            moves = []  # a journal is replaced whole: a broken one was never complete, so no move began
        for move in moves if isinstance(moves, list) else []:
            if _replayable(move, out_dir, cards_dir):
                _move(move)
        journal.unlink()
    journal.with_name(journal.name + ".tmp").unlink(missing_ok=True)
    project = confine.project_of(cards_dir)
    for folder in (out_dir, out_dir / "anki", cards_dir):
        if folder.is_dir() and confine.leaving(folder, project) is None:
            for leftover in folder.glob(f"{STAGED}*"):
                _remove(leftover)


def _replayable(move: object, out_dir: Path, cards_dir: Path) -> bool:
    """Whether `move` is one a commit of this project makes: a staged entry directly beside its target,
    the target in the output folder or the project's lock, reached through no symlink leaving the project."""
    if not isinstance(move, dict) or not isinstance(move.get("dir"), bool):
        return False
    tmp, target = move.get("tmp"), move.get("target")
    if not isinstance(tmp, str) or not isinstance(target, str):
        return False
    staged, goal = confine.lexical(Path(tmp)), confine.lexical(Path(target))
    if staged.parent != goal.parent or not staged.name.startswith(f"{STAGED}{goal.name}."):
        return False
    if confine.lexical(out_dir) not in goal.parents and goal != confine.lexical(cards_dir / LOCK_NAME):
        return False
    return confine.leaving(goal.parent, confine.project_of(cards_dir)) is None
