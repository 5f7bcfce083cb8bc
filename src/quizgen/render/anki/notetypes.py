"""The Anki note types, one per card kind: ids and field lists frozen for ever, templates from package files.

Anki matches an imported note type to the one it has by id. If the fields differ, it imports the incoming
one as a new note type and skips every existing note of it as "conflicting": a changed field list silently
stops all updates. So a kind's anki_fields never change under its anki_model_id (tests pin them, the
lock refuses a change); a new layout of fields needs a new id and name. Templates and CSS may change freely:
Anki takes them when the note type's modification time is newer, which the lock provides.
"""

from __future__ import annotations

import hashlib
import json
from functools import cache
from importlib import resources
from typing import Any

import genanki

from quizgen import kinds
from quizgen.render.markup import pygments_css

# Each kind's note type id and its field list live with the kind (quizgen/kinds/). In every field list,
# Id comes first: it is never empty (Anki refuses notes with an empty first field) and it is what a search
# for a card uses (`Id:KEY`, `quizgen show` prints it). It holds the card's key (a digest of its id), not
# the id: the first field is what Anki's browser lists, and an id names the lesson. Extra1..3 are spares,
# so a future field needs no new note type.


def model_id(kind: str) -> int:
    return kinds.get(kind).anki_model_id


def fields(kind: str) -> tuple[str, ...]:
    return kinds.get(kind).anki_fields


NAME_PREFIX = "quizgen "
_MOUNT = '(typeof window !== "undefined" ? window : this).QuizgenAnki.mount();'
JS_PLACEHOLDER = "%QUIZGEN_JS%"


def name(kind: str) -> str:
    return f"{NAME_PREFIX}{kind}"


def _template_file(file: str) -> str:
    return resources.files("quizgen").joinpath("templates", "anki", file).read_text(encoding="utf-8")


@cache
def media_js() -> tuple[str, bytes]:
    """(file name, content) of the script every note type loads: judge.js, the Anki glue, each kind's own
    script (kinds/<kind>/anki.js, by kind name), then the call that mounts the card.

    The name carries a hash of the content because Anki never replaces a media file it already has;
    the leading underscore keeps Anki's "Check Media" from deleting it as unused.
    """
    judge = resources.files("quizgen").joinpath("static", "judge.js").read_text(encoding="utf-8")
    own = [kind.anki_script() for kind in sorted(kinds.all_kinds(), key=lambda k: k.name)]
    parts = [judge.rstrip(), _template_file("card.js").rstrip(), *(s.rstrip() for s in own if s), _MOUNT]
    data = ("\n\n".join(parts) + "\n").encode()
    return f"_quizgen-anki-{hashlib.sha256(data).hexdigest()[:12]}.js", data


@cache
def css() -> str:
    """The note types' stylesheet: the card layout, then the Pygments light and night palettes."""
    return _template_file("card.css") + "\n" + pygments_css()


def templates(kind: str) -> tuple[str, str]:
    """(front, back) Anki templates of a kind, with the media script's current name filled in."""
    js, _ = media_js()
    front, back = (side.replace(JS_PLACEHOLDER, js) for side in kinds.get(kind).anki_templates())
    return front, back


def definition(kind: str) -> dict[str, Any]:
    """Everything Anki compares when it imports the note type (what its lock hash covers)."""
    front, back = templates(kind)
    return {
        "id": model_id(kind),
        "name": name(kind),
        "fields": list(fields(kind)),
        "front": front,
        "back": back,
        "css": css(),
    }


def definition_hash(kind: str) -> str:
    return hashlib.sha256(json.dumps(definition(kind), sort_keys=True).encode()).hexdigest()[:16]


class _Model(genanki.Model):
    """A genanki model whose modification time is given (from the lock), not the build's clock."""

    def __init__(self, mod: int, **kw: Any) -> None:
        super().__init__(**kw)
        self.mod = mod

    def to_json(self, timestamp: float, deck_id: int) -> dict[str, Any]:
        data: dict[str, Any] = super().to_json(timestamp, deck_id)
        data["mod"] = self.mod
        return data


def model(kind: str, mod: int) -> genanki.Model:
    """The genanki note type of a kind, stamped with its modification time."""
    d = definition(kind)
    return _Model(
        mod,
        model_id=d["id"],
        name=d["name"],
        fields=[{"name": f} for f in d["fields"]],
        templates=[{"name": d["name"], "qfmt": d["front"], "afmt": d["back"]}],
        css=d["css"],
        sort_field_index=1,  # the question, not the id, in Anki's browser
    )
