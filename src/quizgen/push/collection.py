"""Pushing into a collection file with Anki closed, through Anki's own library and importer.

The packages go in as Anki's File -> Import brings them by default: a note is updated when the
package's copy is newer (the lock's times move only for changed cards), and scheduling is never
imported, so every card keeps its reviews, intervals and due date.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from quizgen.errors import PushError
from quizgen.push.packages import NoteType, Package
from quizgen.push.profiles import locked
from quizgen.push.report import DeckPushed, Pushed

INSTALL_ANKI = "pip install 'quizgen[anki]' (pipx: pipx inject quizgen anki)"


def push(path: Path, packages: list[Package]) -> Pushed:
    """Import every package into the collection at `path`; nothing is written if a note type was
    changed by hand."""
    try:
        from anki.collection import Collection
        from anki.errors import DBError
    except ImportError:
        raise PushError(f"{path}: pushing into a collection needs Anki's library: {INSTALL_ANKI}") from None
    if not path.is_file():
        raise PushError(f"{path}: no Anki collection there (a profile's is <profile>/collection.anki2)")
    if locked(path):
        raise _locked(path)
    try:
        col = Collection(str(path))
    except DBError as exc:
        if "locked" in str(exc).lower() or "already open" in str(exc).lower():
            raise _locked(path) from None
        raise PushError(f"{path}: Anki's library cannot open it: {exc}") from None
    try:
        for package in packages:
            for notetype in package.notetypes.values():
                _check_notetype(path, notetype, col.models.get(notetype.id))  # type: ignore[arg-type]
        pushed = Pushed(str(path))
        built = {n.card_id for p in packages for n in p.notes}
        for package in packages:
            pushed.decks.append(_import(col, path, package))
        pushed.gone = sorted(_quizgen_cards(col) - built)
        return pushed
    finally:
        col.close()


def _locked(path: Path) -> PushError:
    return PushError(
        f"{path}: the collection is open in Anki (locked): close Anki and push again, or leave "
        "--profile/--collection out to push into the running Anki through AnkiConnect"
    )


def changed_by_hand(where: str, notetype: NoteType, fields: list[str], templates: int) -> PushError:
    """The error for a quizgen note type whose fields or card types were changed in Anki."""
    return PushError(
        f"{where}: note type '{notetype.name}' was changed by hand (fields {', '.join(fields)}; "
        f"{templates} card type(s)): quizgen can no longer update its notes. In Anki's Tools -> Manage "
        f"Note Types, give it back the fields {', '.join(notetype.fields)} and one card type, or rename "
        "it to keep your version (its notes stay with it), then push again"
    )


def _check_notetype(path: Path, notetype: NoteType, have: dict[str, Any] | None) -> None:
    if have is None:
        return
    fields = [f["name"] for f in have["flds"]]
    if fields != list(notetype.fields) or len(have["tmpls"]) != 1:
        raise changed_by_hand(str(path), notetype, fields, len(have["tmpls"]))


def _import(col: Any, path: Path, package: Package) -> DeckPushed:
    from anki.collection import ImportAnkiPackageOptions, ImportAnkiPackageRequest
    from anki.import_export_pb2 import ImportAnkiPackageUpdateCondition as Condition

    if_newer = Condition.IMPORT_ANKI_PACKAGE_UPDATE_CONDITION_IF_NEWER
    options = ImportAnkiPackageOptions(
        update_notes=if_newer, update_notetypes=if_newer, merge_notetypes=False, with_scheduling=False
    )
    request = ImportAnkiPackageRequest(package_path=str(package.path), options=options)
    log = col.import_anki_package(request).log
    if log.conflicting:  # the check above should have caught it; Anki skipped these notes
        raise PushError(
            f"{path}: Anki skipped {len(log.conflicting)} note(s) of {package.deck} as conflicting"
        )
    return DeckPushed(
        package.deck,
        added=[n.fields[0] for n in log.new],
        updated=[n.fields[0] for n in log.updated],
        left=[n.fields[0] for n in log.duplicate],
    )


def _quizgen_cards(col: Any) -> set[str]:
    """The card ids (Id fields) of the quizgen notes in the collection."""
    return {col.get_note(nid)["Id"] for nid in col.find_notes('"note:quizgen *"')}
