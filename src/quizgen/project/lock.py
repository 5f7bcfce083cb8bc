"""The lock file beside the cards: when each card's note last changed, so Anki sees only real changes.

Anki updates an imported note only when the note's modification time is newer than its own copy's. A
build stamps each note with the time its content last changed, kept here, so a rebuild of the same
sources gives the same bytes and an edit moves the time of the edited card alone. The file is sorted
JSON, rewritten only when something changed; it belongs in version control with the cards.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any, TypeVar

from quizgen.constants import LOCK_NAME as LOCK_NAME  # (the lock's name, for those reading it here)
from quizgen.constants import MAX_LOCK_BYTES
from quizgen.errors import QuizgenError
from quizgen.project import files, lockfile
from quizgen.render.stage import Stage

FORMAT = 1
_ABOUT = "Written by `quizgen build`: when each card's Anki note last changed. Commit it with the cards."


@dataclass
class CardEntry:
    hash: str  # of everything Anki receives for the note
    deck: str
    added: int  # when a build first saw the card: the note's creation time in Anki
    mod: int  # when its note last changed: the note's modification time in Anki


@dataclass
class NotetypeEntry:
    name: str
    hash: str
    fields: list[str]
    mod: int


@dataclass
class RemovedEntry:
    deck: str
    removed: int


_Entry = TypeVar("_Entry", CardEntry, NotetypeEntry, RemovedEntry)


@dataclass
class Lock:
    cards: dict[str, CardEntry] = field(default_factory=dict)
    notetypes: dict[str, NotetypeEntry] = field(default_factory=dict)
    removed: dict[str, RemovedEntry] = field(default_factory=dict)
    # torch version -> card id -> {"answer", "job"}: each card's answer on the project's torch versions
    # besides the installed one (quizgen/torch_versions/matrix.py), for builds where they are not provisioned
    torch: dict[str, dict[str, dict[str, str]]] = field(default_factory=dict)
    # card id -> {"torch", "job", "outcome"}: the outcomes of the cards judged on a version not installed
    # (quizgen/torch_versions/judged.py), for builds where it is not provisioned
    judged: dict[str, dict[str, Any]] = field(default_factory=dict)
    # card id -> {"after", "in", "job"}: the releases between which its answer changed, as `quizgen torch
    # bisect` found them (quizgen/torch_versions/changed.py), for the job it ran
    changed: dict[str, dict[str, str]] = field(default_factory=dict)


@dataclass(frozen=True)
class NoteState:
    """What a build is about to ship for one card."""

    hash: str
    deck: str


@dataclass(frozen=True)
class NotetypeState:
    name: str
    hash: str
    fields: tuple[str, ...]


@dataclass
class Changes:
    added: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    moved: list[tuple[str, str, str]] = field(default_factory=list)  # (id, old deck, new deck)
    notetypes: list[str] = field(default_factory=list)  # note types whose template or style changed
    new_notetypes: list[str] = field(default_factory=list)  # first seen in this build: nothing changed
    refielded: list[tuple[str, list[str], list[str]]] = field(default_factory=list)  # (name, old, new)


def read(path: Path) -> Lock:
    """The lock at `path`; an empty one when there is none yet."""
    try:
        return _parsed(lockfile.load(path))
    except OSError as exc:
        raise QuizgenError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except (ValueError, TypeError, AttributeError, RecursionError) as exc:  # (RecursionError: nested JSON)
        raise QuizgenError(f"{path}: not a quizgen lock file ({exc}). {lockfile.MENDING}") from None


def committed(path: Path) -> Lock | None:
    """The lock as the last commit of the git repository holding it has it (`git cat-file`, which runs
    no hook, filter or pager); None where there is none: no git, no repository, no commit, no lock in
    it, or one that is no lock."""
    command = ["git", "-C", str(path.parent), "cat-file", "blob", f"HEAD:./{path.name}"]
    try:
        done = subprocess.run(command, capture_output=True, stdin=subprocess.DEVNULL, timeout=30, check=False)
        if done.returncode != 0 or len(done.stdout) > MAX_LOCK_BYTES:
            return None
        return _parsed(json.loads(done.stdout.decode("utf-8")))
    except (OSError, subprocess.SubprocessError, ValueError, TypeError, AttributeError, RecursionError):
        return None


def _parsed(data: Any) -> Lock:
    """The lock of a lock file's JSON (None: no file yet)."""
    if data is None:
        return Lock()
    if data.get("format") != FORMAT:
        raise ValueError(f"unknown format {data.get('format')!r}")
    return Lock(
        cards={k: _checked(CardEntry(**v)) for k, v in data.get("cards", {}).items()},
        notetypes={k: _checked(NotetypeEntry(**v)) for k, v in data.get("notetypes", {}).items()},
        removed={k: _checked(RemovedEntry(**v)) for k, v in data.get("removed", {}).items()},
        torch=_recorded(data.get("torch", {})),
        judged=_judged(data.get("judged", {})),
        changed=_changed(data.get("changed", {})),
    )


def _checked(entry: _Entry) -> _Entry:
    """The entry, if every value has its declared type (a hand-edited lock may not)."""
    for f in fields(entry):
        value = getattr(entry, f.name)
        want = {"int": int, "str": str, "list[str]": list}[str(f.type)]
        if not isinstance(value, want) or isinstance(value, bool):
            raise ValueError(f"{f.name} is {value!r}")
    return entry


def _recorded(section: object) -> dict[str, dict[str, dict[str, str]]]:
    """The lock's recorded torch answers, if every one is an answer and a job's content (both text)."""
    if not isinstance(section, dict):
        raise ValueError(f"torch is {section!r}")
    for version, cards in section.items():
        entries = cards.values() if isinstance(cards, dict) else [None]
        for entry in entries:
            if not isinstance(entry, dict) or set(entry) != {"answer", "job"}:
                raise ValueError(f"torch {version}: {entry!r} is not an answer and a job")
            if not all(isinstance(v, str) for v in entry.values()):
                raise ValueError(f"torch {version}: {entry!r} is not an answer and a job")
    return section


def _judged(section: object) -> dict[str, dict[str, Any]]:
    """The lock's recorded outcomes of judged cards, if each names its version, job and outcome."""
    if not isinstance(section, dict):
        raise ValueError(f"judged is {section!r}")
    for card_id, entry in section.items():
        if not isinstance(entry, dict) or set(entry) != {"torch", "job", "outcome"}:
            raise ValueError(f"judged {card_id}: {entry!r} is not a version, a job and an outcome")
        if not (isinstance(entry["torch"], str) and isinstance(entry["job"], str)):
            raise ValueError(f"judged {card_id}: {entry!r} is not a version, a job and an outcome")
        if not isinstance(entry["outcome"], dict):
            raise ValueError(f"judged {card_id}: {entry!r} is not a version, a job and an outcome")
    return section


def _changed(section: object) -> dict[str, dict[str, str]]:
    """The lock's bisected changes, if each names two releases and a job's content (all text)."""
    if not isinstance(section, dict):
        raise ValueError(f"changed is {section!r}")
    for card_id, entry in section.items():
        if not isinstance(entry, dict) or set(entry) != {"after", "in", "job"}:
            raise ValueError(f"changed {card_id}: {entry!r} is not two releases and a job")
        if not all(isinstance(v, str) for v in entry.values()):
            raise ValueError(f"changed {card_id}: {entry!r} is not two releases and a job")
    return section


def dumps(lock: Lock) -> str:
    data: dict[str, Any] = {"about": _ABOUT, "format": FORMAT, **asdict(lock)}
    if not lock.torch:  # a project verified on the installed torch alone keeps the lock it had
        del data["torch"]
    for section in ("judged", "changed"):
        if not data[section]:
            del data[section]
    return json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def stage(path: Path, lock: Lock, staged: Stage) -> bool:
    """Stage the lock if its content changed; True when it will be written."""
    text = dumps(lock)
    try:
        if files.read_text(path, MAX_LOCK_BYTES) == text:
            return False
    except (OSError, ValueError):
        pass
    staged.file(path).write_text(text, encoding="utf-8")
    return True


def update(
    old: Lock,
    notes: Mapping[str, NoteState],
    notetypes: Mapping[str, NotetypeState],
    now: int,
    torch: Mapping[str, dict[str, dict[str, str]]] | None = None,
    judged: Mapping[str, dict[str, Any]] | None = None,
    committed: Lock | None = None,
    changed: Mapping[str, dict[str, str]] | None = None,
) -> tuple[Lock, Changes]:
    """The lock for this build: unchanged entries kept, changed ones stamped `now` (or later than before);
    `torch` its cards' answers on the torch versions not installed, `judged` the outcomes of its cards
    judged on one, `changed` the releases bisection found their answers changed in. An entry whose note
    is again what `committed` (the lock of the repository's last commit) has for it is taken from there,
    times and all: an edit reverted leaves the lock as it was."""
    new = Lock(torch=dict(torch or {}), judged=dict(judged or {}), changed=dict(changed or {}))
    changes = Changes()
    for card_id, state in sorted(notes.items()):
        before, was = old.cards.get(card_id), committed.cards.get(card_id) if committed else None
        new.cards[card_id] = _card_entry(before, was, state, now)
        if before is None:
            changes.added.append(card_id)
            continue
        if before.hash != state.hash:
            changes.changed.append(card_id)
        if before.deck != state.deck:
            changes.moved.append((card_id, before.deck, state.deck))
    for key, nt in sorted(notetypes.items()):
        prior = old.notetypes.get(key)
        was_type = committed.notetypes.get(key) if committed else None
        if prior is not None and prior.fields != list(nt.fields):
            changes.refielded.append((nt.name, prior.fields, list(nt.fields)))
        if prior is not None and prior.hash == nt.hash:
            new.notetypes[key] = prior
        elif was_type is not None and was_type.hash == nt.hash:
            new.notetypes[key] = was_type
            (changes.notetypes if prior else changes.new_notetypes).append(nt.name)
        else:
            mod = max(now, prior.mod + 1) if prior else now
            new.notetypes[key] = NotetypeEntry(nt.name, nt.hash, list(nt.fields), mod)
            (changes.notetypes if prior else changes.new_notetypes).append(nt.name)
    new.removed = {k: v for k, v in old.removed.items() if k not in notes}
    for card_id, gone in sorted(old.cards.items()):
        if card_id not in notes:
            changes.removed.append(card_id)
            if committed is None or card_id in committed.cards or card_id in committed.removed:
                new.removed[card_id] = RemovedEntry(gone.deck, now)
            # (a card added and removed again since the last commit: nobody was shipped its note)
    if committed is not None:  # a removal that was committed keeps its time
        new.removed.update((k, v) for k, v in committed.removed.items() if k in new.removed)
    return new, changes


def _card_entry(before: CardEntry | None, was: CardEntry | None, state: NoteState, now: int) -> CardEntry:
    """A card's entry: as committed when its note is the committed one again (an edit reverted), else
    as before when unchanged, else stamped `now` (later than before: Anki takes only newer notes)."""
    if was is not None and was.hash == state.hash:
        return CardEntry(was.hash, state.deck, was.added, was.mod)
    if before is None:
        return CardEntry(state.hash, state.deck, added=now, mod=now)
    mod = before.mod if before.hash == state.hash else max(now, before.mod + 1)
    return CardEntry(state.hash, state.deck, before.added, mod)
