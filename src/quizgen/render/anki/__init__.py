"""Anki output: one .apkg per deck under build/anki/, whose notes update in place and keep their reviews.

A note is known to Anki by its GUID, made from the card id alone, so fixing a typo updates the note
rather than adding another. Its modification time comes from the lock (quizgen/lock.py), so Anki
updates exactly the notes whose content changed. The notes' fields come from anki_notes.py, the note
types from notetypes.py, the package bytes from package.py.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import time
from collections.abc import Callable
from pathlib import Path

import genanki

from quizgen import kinds
from quizgen.cards import course
from quizgen.cards.model import Deck, VerifiedDeck
from quizgen.constants import MAX_IMAGE_BYTES
from quizgen.errors import CardErrors, Location, OutputError, Problem, QuizgenError, count
from quizgen.project import files, lock
from quizgen.render.anki.notes import Note, anki_safe, note_for, titled_links
from quizgen.render.anki.notetypes import (
    NAME_PREFIX,
    definition_hash,
    fields,
    media_js,
    model,
    model_id,
    name,
)
from quizgen.render.anki.package import NoteSpec, write_apkg
from quizgen.render.base import Project, Rendered
from quizgen.render.present import card_titles, deck_description
from quizgen.render.reuse import Reuse
from quizgen.render.stage import Stage
from quizgen.render.view import card_key
from quizgen.torch_versions import changed, judged, matrix

ANKI_DIR = "anki"
GUID_NAMESPACE = "quizgen"


def guid(card_id: str) -> str:
    """A note's GUID: from the card id only, never the content, so an edited card updates its note."""
    return str(genanki.guid_for(GUID_NAMESPACE, card_id))


def deck_id(deck_name: str) -> int:
    """A deck's id, from its name (below 2**53: Anki's JavaScript handles deck ids as numbers)."""
    digest = hashlib.sha256(f"quizgen deck:{deck_name}".encode()).digest()
    return (1 << 40) + int.from_bytes(digest[:8], "big") % ((1 << 52) - (1 << 40))


def file_name(deck_name: str) -> str:
    """`PyTorch::Gradients` -> `PyTorch__Gradients.apkg` (the deck name inside keeps the hierarchy)."""
    parts = [re.sub(r"[^A-Za-z0-9._-]+", "-", p.strip()).strip("-.") or "deck" for p in deck_name.split("::")]
    return "__".join(parts) + ".apkg"


def check_decks(decks: list[Deck], id_for: Callable[[str], int] = deck_id) -> None:
    """Refuse decks that would share an Anki deck id or an .apkg file name."""
    problems: list[Problem] = []
    ids: dict[int, Deck] = {}
    files: dict[str, Deck] = {}
    for deck in decks:
        where = Location(deck.path, field="deck")
        did, file = id_for(deck.name), file_name(deck.name).lower()
        if did in ids:
            problems.append(
                Problem(where, f"deck '{deck.name}' has the same Anki deck id as '{ids[did].name}'")
            )
        elif file in files:
            other = files[file].name
            problems.append(
                Problem(where, f"deck '{deck.name}' would write the same file as '{other}'; rename one")
            )
        ids.setdefault(did, deck)
        files.setdefault(file, deck)
    if problems:
        raise CardErrors(problems)


def note_ids(entries: dict[str, lock.CardEntry]) -> dict[str, int]:
    """Note ids from the time each card was first built (Anki shows a note id as its creation time)."""
    ids: dict[str, int] = {}
    last = 0
    for card_id, entry in sorted(entries.items(), key=lambda kv: (kv[1].added, kv[0])):
        last = max(entry.added * 1000, last + 1)
        ids[card_id] = last
    return ids


def removed_query(card_ids: list[str]) -> str:
    """An Anki browser search finding the notes of these cards (their Id field), in any deck."""
    return f'"note:{NAME_PREFIX}*" ({" OR ".join(_id_terms(i) for i in sorted(card_ids))})'


def _id_terms(card_id: str) -> str:
    """The Id field's values a card's note may hold: its key (what notes hold now), its id (older builds)."""
    return f"Id:{card_key(card_id)} OR Id:{card_id}"


def _now() -> int:
    """The time stamped on changed notes: SOURCE_DATE_EPOCH when set (reproducible builds), else the clock."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH", "").strip()
    return int(epoch) if epoch.isdigit() else int(time.time())


class AnkiRenderer:
    """build/anki/<deck>.apkg for every deck, and the lock beside the cards."""

    name = "anki"

    def render(self, project: Project, stage: Stage) -> Rendered:
        decks = project.decks
        check_decks([vd.deck for vd in decks])
        titles = card_titles(decks)  # what a link to a card names it by
        lock_path = project.cards_dir / lock.LOCK_NAME
        notes, _, new, changes = planned(decks, project.cards_dir, titles)
        out = project.out_dir / ANKI_DIR
        folder = stage.folder(out)
        models = {k: model(k, new.notetypes[str(model_id(k))].mod) for k in kinds.names()}
        nids = note_ids(new.cards)
        written = []
        reuse = Reuse(project.out_dir, project.reuse)
        try:
            for vd, deck_notes in zip(decks, notes, strict=True):
                specs = [
                    NoteSpec(
                        models[n.kind], n.fields, n.tags, guid(n.id), nids[n.id], new.cards[n.id].mod, due
                    )
                    for due, n in enumerate(deck_notes)
                ]
                media = {name: path for n in deck_notes for name, path in n.media.items()}
                written.append(out / _write_deck(folder, vd.deck, specs, media, reuse, out, titles))
        finally:
            reuse.close()
        result = Rendered(written)
        try:
            lock_written = lock.stage(lock_path, new, stage)
        except OutputError as exc:
            # The decks are right without it (the next build stamps changes later still), so a read-only
            # source tree can still build; only reproducibility waits until the lock is written.
            lock_written = False
            result.notes.append(
                f"{exc.message}; the decks are fine, but changed notes get new times each build"
            )
        result.notes += _messages(changes, lock_path if lock_written else None)
        return result


def _write_deck(
    folder: Path,
    deck: Deck,
    specs: list[NoteSpec],
    images: dict[str, Path],
    reuse: Reuse,
    old: Path,
    titles: dict[str, tuple[str, str]],
) -> str:
    """One deck's .apkg, with the card script and the images its notes and description show (copied
    from the one in `old`, the last build's, when that was made from the same)."""
    path = folder / file_name(deck.name)
    description = anki_safe(titled_links(deck_description(deck, images), titles))
    js_name, js = media_js()
    media = {name: files.read_bytes(file, MAX_IMAGE_BYTES, follow=True) for name, file in images.items()}
    media[js_name] = js
    shown = course.numbered(deck)  # Anki lists decks by name: the course's number puts them in order
    key = reuse.key(repr((deck_id(deck.name), shown, description)), _specs(specs), _media(media))
    if not reuse.copied(key, old / path.name, path):
        write_apkg(path, deck_id(deck.name), shown, description, specs, media)
        reuse.made(key, path)
    return path.name


def _specs(specs: list[NoteSpec]) -> str:
    """The notes of a package as text; a note type as its definition (its object's repr is an address)."""
    types = {id(s.model): s.model for s in specs}
    described = {str(m.model_id): json.dumps(vars(m), sort_keys=True, default=repr) for m in types.values()}
    notes = [(s.model.model_id, s.fields, s.tags, s.guid, s.nid, s.mod, s.due) for s in specs]
    return repr((sorted(described.items()), notes))


def _media(media: dict[str, bytes]) -> str:
    return repr(sorted((name, hashlib.sha256(data).hexdigest()) for name, data in media.items()))


def planned(
    decks: list[VerifiedDeck], cards_dir: Path, titles: dict[str, tuple[str, str]] | None = None
) -> tuple[list[list[Note]], lock.Lock, lock.Lock, lock.Changes]:
    """Each deck's notes, the lock as it is and as this build makes it (with the cards' answers on the
    other torch versions), and what changed; a note type whose fields changed is refused."""
    titles = card_titles(decks) if titles is None else titles
    notes = [[note_for(vc, vd.deck, cards_dir, titles) for vc in vd.cards] for vd in decks]
    judged_cards = {vc.card.id for vd in decks for vc in vd.cards if vc.card.judged_on}  # recorded whole
    answers = {vc.card.id: vc.torch for vd in decks for vc in vd.cards if vc.torch}
    recorded = matrix.to_record({k: v for k, v in answers.items() if k not in judged_cards})
    states = {n.id: lock.NoteState(n.hash, n.deck) for deck_notes in notes for n in deck_notes}
    types = {
        str(model_id(k)): lock.NotetypeState(name(k), definition_hash(k), fields(k)) for k in kinds.names()
    }
    lock_path = cards_dir / lock.LOCK_NAME
    old = lock.read(lock_path)
    since = changed.changes_record(answers)
    new, changes = lock.update(
        old, states, types, _now(), recorded, judged.to_record(decks), lock.committed(lock_path), since
    )
    if changes.refielded:
        raise QuizgenError("\n".join(_refielded(*r) for r in changes.refielded))
    return notes, old, new, changes


def _refielded(type_name: str, old: list[str], new: list[str]) -> str:
    return (
        f"note type '{type_name}' changed its fields from {old} to {new}: Anki would import it as a new "
        "note type and skip every existing note as conflicting. Keep the fields (Extra1-3 are spare), "
        "or give the note type a new id and name."
    )


def _messages(changes: lock.Changes, lock_path: Path | None) -> list[str]:
    out = []
    if lock_path is not None:
        what = [
            f"{len(changes.added)} new",
            f"{len(changes.changed)} changed",
            f"{len(changes.removed)} removed",
        ]
        if changes.notetypes:
            what.append(f"note types changed: {', '.join(changes.notetypes)}")
        out.append(f"updated {lock_path} ({', '.join(what)}): commit it with the cards")
    if changes.removed:
        out.append(
            f"{count(len(changes.removed), 'card')} removed since the last build: "
            f"{', '.join(changes.removed)}. "
            "Importing never deletes notes from Anki; to delete them, search for this in Anki's browser: "
            + removed_query(changes.removed)
        )
    for card_id, old, new in changes.moved:
        out.append(
            f"card '{card_id}' moved from deck '{old}' to '{new}': importing does not move cards Anki "
            f"already has; search for {_id_terms(card_id)} in Anki's browser and use Change Deck"
        )
    return out
