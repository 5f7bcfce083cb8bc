"""Pushing into a running Anki through AnkiConnect, note by note.

Note-level updates, not AnkiConnect's `importPackage`: that action returns only `true` (no word of
what was added or updated), reads the package from a path on Anki's machine, and runs Anki's legacy
importer, which copies a note type changed by hand and skips its notes without a word. Here each
note is compared with what Anki has and only a note that differs is written (fields and tags: its
cards, reviews and scheduling are never touched); a note type changed by hand stops the push first.
"""

from __future__ import annotations

import base64
import json
import unicodedata
import urllib.error
import urllib.request
from typing import Any

from quizgen.errors import PushError
from quizgen.push.collection import changed_by_hand
from quizgen.push.packages import NoteType, Package
from quizgen.push.profiles import open_in_anki
from quizgen.push.report import DeckPushed, Pushed
from quizgen.render.anki.notetypes import NAME_PREFIX

DEFAULT_URL = "http://127.0.0.1:8765"
API_VERSION = 6
TIMEOUT = 120.0  # seconds: Anki answers between its own work, and a large deck is one request
ADDON_CODE = "2055492159"


class AnkiConnect:
    """A client of AnkiConnect's JSON API (version 6) at `url`."""

    def __init__(self, url: str = DEFAULT_URL) -> None:
        self.url = url

    def __call__(self, action: str, **params: Any) -> Any:
        body = json.dumps({"action": action, "version": API_VERSION, "params": params}).encode()
        request = urllib.request.Request(self.url, body, {"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=TIMEOUT) as response:
                answer = json.loads(response.read())
        except urllib.error.HTTPError as exc:
            raise self._not_anki_connect(f"HTTP {exc.code}") from None
        except urllib.error.URLError as exc:
            raise self._unreachable(exc.reason) from None
        except (OSError, ValueError) as exc:
            raise self._not_anki_connect(str(exc)) from None
        if not isinstance(answer, dict) or "error" not in answer or "result" not in answer:
            raise self._not_anki_connect("an answer that is not AnkiConnect's")
        if answer["error"]:
            raise PushError(f"{self.url}: AnkiConnect refused {action}: {answer['error']}")
        return answer["result"]

    def _not_anki_connect(self, what: str) -> PushError:
        return PushError(
            f"{self.url}: something other than AnkiConnect answers there ({what}); give "
            "AnkiConnect's address with --anki-connect URL"
        )

    def _unreachable(self, reason: object) -> PushError:
        if open_in_anki():
            return PushError(
                f"{self.url}: Anki is running but AnkiConnect does not answer ({reason}): install the "
                f"AnkiConnect add-on (Tools -> Add-ons -> Get Add-ons, code {ADDON_CODE}), restart Anki "
                "and push again; or close Anki and push with --profile NAME"
            )
        return PushError(
            f"{self.url}: Anki is not running ({reason}): start Anki (with the AnkiConnect add-on, code "
            f"{ADDON_CODE}) and push again, or push with Anki closed: quizgen push --profile NAME"
        )


def push(client: AnkiConnect, packages: list[Package]) -> Pushed:
    """Bring the packages' note types, media and notes into the Anki behind `client`."""
    version = client("version")
    if not isinstance(version, int) or version < API_VERSION:
        raise PushError(
            f"{client.url}: AnkiConnect {version} is too old (API {API_VERSION} needed): update it"
        )
    pushed = Pushed(client.url)
    notetypes = {nt.id: nt for p in packages for nt in p.notetypes.values()}
    have_names = client("modelNames")
    for notetype in notetypes.values():  # every check before the first write
        if notetype.name in have_names:
            _check_notetype(client, notetype)
    for notetype in notetypes.values():
        change = _notetype(client, notetype, notetype.name in have_names)
        if change:
            pushed.notetypes.append(f"{notetype.name} {change}")
    pushed.media = sum(_store(client, name, data) for p in packages for name, data in p.media.items())
    have = _notes(client)
    for package in packages:
        pushed.decks.append(_deck(client, package, have))
    built = {n.card_id for p in packages for n in p.notes}
    pushed.gone = sorted(set(have) - built)
    return pushed


def _check_notetype(client: AnkiConnect, notetype: NoteType) -> None:
    fields = client("modelFieldNames", modelName=notetype.name)
    templates = client("modelTemplates", modelName=notetype.name)
    if fields != list(notetype.fields) or len(templates) != 1:
        raise changed_by_hand(client.url, notetype, fields, len(templates))


def _notetype(client: AnkiConnect, notetype: NoteType, exists: bool) -> str:
    """Create the note type, or bring its templates and styling up to date: "added", "updated" or ""."""
    template = {"Front": notetype.front, "Back": notetype.back}
    if not exists:
        client(
            "createModel",
            modelName=notetype.name,
            inOrderFields=list(notetype.fields),
            css=notetype.css,
            isCloze=False,
            cardTemplates=[{"Name": notetype.name, **template}],
        )
        return "added"
    ((name, have),) = client("modelTemplates", modelName=notetype.name).items()
    changed = have != template
    if changed:
        client("updateModelTemplates", model={"name": notetype.name, "templates": {name: template}})
    if client("modelStyling", modelName=notetype.name).get("css") != notetype.css:
        client("updateModelStyling", model={"name": notetype.name, "css": notetype.css})
        changed = True
    return "updated" if changed else ""


def _store(client: AnkiConnect, name: str, data: bytes) -> bool:
    """Store a media file unless Anki has it with the same content; whether it was stored."""
    have = client("retrieveMediaFile", filename=name)
    if isinstance(have, str) and base64.b64decode(have) == data:
        return False
    client("storeMediaFile", filename=name, data=base64.b64encode(data).decode())
    return True


def _notes(client: AnkiConnect) -> dict[str, dict[str, Any]]:
    """The quizgen notes Anki has, by card id (their Id field)."""
    ids = client("findNotes", query=f'"note:{NAME_PREFIX}*"')
    infos = client("notesInfo", notes=ids) if ids else []
    return {info["fields"]["Id"]["value"]: info for info in infos if "Id" in info.get("fields", {})}


def _same(info: dict[str, Any], fields: dict[str, str], tags: tuple[str, ...]) -> bool:
    """Whether Anki's note already holds these fields and tags (Anki keeps text in NFC)."""
    held = {name: value["value"] for name, value in info["fields"].items()}
    wanted = {name: unicodedata.normalize("NFC", value) for name, value in fields.items()}
    return held == wanted and sorted(info["tags"]) == sorted(tags)


def _deck(client: AnkiConnect, package: Package, have: dict[str, dict[str, Any]]) -> DeckPushed:
    done = DeckPushed(package.deck)
    client("createDeck", deck=package.deck)
    new: list[dict[str, Any]] = []
    for note in package.notes:
        notetype = package.notetypes[note.notetype]
        fields = dict(zip(notetype.fields, note.fields, strict=True))
        info = have.get(note.card_id)
        if info is None:
            new.append(
                {
                    "deckName": package.deck,
                    "modelName": notetype.name,
                    "fields": fields,
                    "tags": list(note.tags),
                }
            )
            done.added.append(note.card_id)
        elif info["modelName"] != notetype.name:
            raise PushError(
                f"{client.url}: card '{note.card_id}' is a {notetype.name} note now but a "
                f"{info['modelName']} note in Anki: delete that note in Anki (its reviews go with it) "
                "and push again"
            )
        elif _same(info, fields, note.tags):
            done.left.append(note.card_id)
        else:
            client("updateNote", note={"id": info["noteId"], "fields": fields, "tags": list(note.tags)})
            done.updated.append(note.card_id)
    if new:
        ids = client("addNotes", notes=new)
        if not isinstance(ids, list) or None in ids:
            refused = [
                n["fields"]["Id"] for n, i in zip(new, ids or [None] * len(new), strict=False) if i is None
            ]
            raise PushError(f"{client.url}: Anki refused to add the notes of {', '.join(refused)}")
    return done
