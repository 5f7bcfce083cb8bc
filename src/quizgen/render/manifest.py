"""Whether the last build's outputs are current: a build whose inputs are those the outputs were made
from, with every output as that build left it, renders nothing and leaves every output's bytes and
timestamps alone.

The inputs are fingerprinted: every file of the cards folder (cards, quizgen.toml, the lock), the
project's templates, quizgen's own files (by size and time: an edited checkout counts), the executed
outcomes and job keys (torch's and Python's versions are in the keys) and SOURCE_DATE_EPOCH. The
manifest (`outputs.json` in the project's state folder, project/state.py: one a repository shipped could
keep its own outputs) is removed before outputs are replaced and written after, so a build killed in
between renders again.

It also records the size and SHA-256 of every file the build wrote (read through no link): what `quizgen
serve` may send, and only while a file still has them (quizgen/serve.py).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path

import quizgen
from quizgen.cards.model import VerifiedDeck
from quizgen.constants import LOCK_NAME
from quizgen.project import confine, files, trees

NAME = "outputs.json"
FORMAT = 2  # 2: the written files' digests


@dataclass
class Kept:
    """What the build that made the current outputs wrote. (Its notes are not told again: they were news
    then, such as the lock being updated, and are not now.)"""

    written: list[Path]


def _files(folder: Path) -> list[Path]:
    if not folder.is_dir():
        return []
    return sorted(p for p in trees.walk(folder) if p.is_file() and "__pycache__" not in p.parts)


def _code() -> list[tuple[str, int, int]]:
    package = Path(quizgen.__file__).parent
    return [(str(p), (s := p.stat()).st_size, s.st_mtime_ns) for p in _files(package)]


def sources(cards_dir: Path, templates_dir: Path, settings_file: Path) -> str:
    """The files the outputs are made from, as one digest: read before the cards are loaded, so a file
    edited during a build makes the next build render again rather than keep outputs made before it."""
    digest = hashlib.sha256()
    digest.update(json.dumps([FORMAT, _code(), os.environ.get("SOURCE_DATE_EPOCH", "")]).encode())
    lock = cards_dir / LOCK_NAME  # written by the build itself: watched as an output instead
    for path in [settings_file, *_files(cards_dir), *_files(templates_dir)]:
        if path.is_file() and path != lock:
            digest.update(f"\0{path}\0".encode())
            with contextlib.suppress(OSError):  # (a FIFO, gone meanwhile: the loader says what it is)
                digest.update(files.digest(path, follow=True).encode())
    return digest.hexdigest()


def fingerprint(source_digest: str, decks: list[VerifiedDeck]) -> str:
    """Everything the outputs are made from: the sources and what executing them gave."""
    digest = hashlib.sha256(source_digest.encode())
    for vd in decks:
        digest.update(f"\0deck {vd.deck.name}\0{vd.deck.path}".encode())
        for vc in vd.cards:
            outcome = vc.outcome.to_json() if vc.outcome is not None else {}
            outcome.pop("seconds", None)  # how long it took is not what it gave
            # answers on the matrix's other versions, and which are the lock's (build-info.json says)
            torch = [vc.torch.answers, vc.torch.recorded] if vc.torch else None
            digest.update(json.dumps([vc.card.id, outcome, torch], sort_keys=True, default=str).encode())
    return digest.hexdigest()


def _stats(paths: list[Path]) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    for target in paths:
        for path in _files(target) if target.is_dir() else [target]:
            try:
                stat = path.stat()
            except OSError:
                continue
            out[str(path)] = [stat.st_size, stat.st_mtime_ns]
    return out


def _digests(paths: list[Path]) -> dict[str, list[object]]:
    """[size, SHA-256] of each regular file among `paths` and in their folders, by path (links left out)."""
    out: dict[str, list[object]] = {}
    for target in paths:
        inside = [(target, p.relative_to(target).as_posix()) for p in _files(target)]
        for top, name in inside if target.is_dir() else [(target.parent, target.name)]:
            found = files.digest_beneath(top, name)
            if found is not None:
                out[str(top / name)] = list(found)
    return out


def published(state_dir: Path, folder: Path) -> dict[str, tuple[int, str]]:
    """The files the last good build wrote in `folder`, by name relative to it ('decks/a.html'), each as
    (size, SHA-256); nothing when no manifest speaks for the outputs."""
    try:
        data = json.loads((state_dir / NAME).read_text(encoding="utf-8"))
        top = confine.lexical(folder)
        found: dict[str, tuple[int, str]] = {}
        for path, (size, sha) in data["files"].items():
            here = confine.lexical(Path(path))
            if here.is_relative_to(top) and isinstance(size, int) and isinstance(sha, str):
                found[here.relative_to(top).as_posix()] = (size, sha)
        return found
    except (OSError, ValueError, KeyError, TypeError):
        return {}


def current(state_dir: Path, print_: str) -> Kept | None:
    """The last build's report when its outputs are current for inputs of fingerprint `print_`."""
    try:
        data = json.loads((state_dir / NAME).read_text(encoding="utf-8"))
        if data["fingerprint"] != print_:
            return None
        watched = [Path(p) for p in data["watched"]]
        if _stats(watched) != data["stats"] or not data["stats"]:
            return None
        return Kept([Path(p) for p in data["written"]])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def forget(state_dir: Path) -> None:
    """The outputs are about to change: no manifest speaks for them until `remember`."""
    (state_dir / NAME).unlink(missing_ok=True)


def remember(state_dir: Path, print_: str, kept: Kept, also: list[Path]) -> None:
    """Note the outputs just committed (`kept.written` and `also`, e.g. the lock) as made from `print_`."""
    watched = [*kept.written, *also]
    data = {
        "fingerprint": print_,
        "written": [str(p) for p in kept.written],
        "watched": [str(p) for p in watched],
        "stats": _stats(watched),
        "files": _digests(kept.written),
    }
    path = state_dir / NAME
    try:
        tmp = path.with_name(NAME + ".tmp")
        tmp.write_text(json.dumps(data), encoding="utf-8")
        os.replace(tmp, path)
    except OSError:
        pass  # without a manifest the next build renders again: it only costs time
