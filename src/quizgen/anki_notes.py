"""A verified card as an Anki note: its note type's fields filled with HTML that Anki shows as it is."""

from __future__ import annotations

import hashlib
import html
import json
import re
from dataclasses import dataclass
from pathlib import Path

from quizgen import anki_notetypes
from quizgen.anki_notetypes import MODEL_IDS
from quizgen.markup import highlight
from quizgen.model import Deck, Kind, OrderCard, VerifiedCard
from quizgen.present import CardView, card_view


def anki_safe(fragment: str) -> str:
    """HTML that Anki shows as it is: braces cannot open a template tag, `[sound:` cannot play."""
    return fragment.replace("{", "&#123;").replace("}", "&#125;").replace("[", "&#91;")


def _text(text: str) -> str:
    return anki_safe(html.escape(text))


def _torch(version: str) -> str:
    match = re.match(r"\d+\.\d+", version)
    return match.group(0) if match else version


@dataclass
class Note:
    """A card as Anki gets it: a note of its kind's note type."""

    id: str
    kind: Kind
    deck: str
    fields: list[str]
    tags: list[str]

    @property
    def hash(self) -> str:
        data = [MODEL_IDS[self.kind], self.fields, self.tags]
        return hashlib.sha256(json.dumps(data).encode()).hexdigest()[:16]


def note_for(vc: VerifiedCard, deck: Deck, cards_dir: Path) -> Note:
    """The note of one verified card: every field filled, HTML made safe for Anki's templates."""
    card = vc.card
    view = card_view(vc, deck.tags)
    values = {
        "Id": card.id,
        "Explain": anki_safe(view.explain_html),
        "Output": _text(view.output.rstrip("\n")),
        "Torch": _torch(view.torch_version),
        "Setup": _setup(vc, deck),
        "Source": _source(card.location.path, cards_dir),
        **_kind_fields(vc, view),
    }
    if view.judge:  # what judge.js needs, as an HTML attribute
        values["Judge"] = anki_safe(html.escape(json.dumps(view.judge, sort_keys=True), quote=True))
    names = anki_notetypes.FIELDS[card.kind]  # looked up late: tests change it
    unknown = set(values) - set(names)
    assert not unknown, f"fields {unknown} are not in the {card.kind} note type"
    return Note(card.id, card.kind, deck.name, [values.get(n, "") for n in names], view.tags)


def _kind_fields(vc: VerifiedCard, view: CardView) -> dict[str, str]:
    code = anki_safe(view.code_html)
    if view.kind == "value":
        return {"Question": anki_safe(view.prompt_html), "Code": code, "Answer": _text(view.answer_text)}
    if view.kind == "myth":
        return {"Claim": anki_safe(view.prompt_html), "Verdict": view.answer_text, "Proof": code}
    if view.kind == "order":
        assert isinstance(vc.card, OrderCard)
        lines = "".join(
            f'<li><span class="qg-line-label">{item.label}</span>{anki_safe(item.html)}</li>'
            for item in view.items
        )
        first = view.accepted[0] if view.accepted else []
        solution = "\n".join(vc.card.lines[i].code.strip() for i in first)
        return {
            "Question": anki_safe(view.prompt_html),
            "Lines": lines,
            "Accepted": "".join(f"<li>{labels}</li>" for labels in view.accepted_labels),
            "Solution": anki_safe(highlight(solution)) if solution else "",
        }
    return {"Front": anki_safe(view.prompt_html), "Back": anki_safe(view.back_html), "Code": code}


def _setup(vc: VerifiedCard, deck: Deck) -> str:
    """What ran before the card's own code: the deck setup (and an order card's setup), if anything ran."""
    if vc.outcome is None:
        return ""
    parts = [deck.setup.code.strip() if deck.setup else ""]
    if isinstance(vc.card, OrderCard) and vc.card.setup:
        parts.append(vc.card.setup.code.strip())
    code = "\n".join(p for p in parts if p)
    return anki_safe(highlight(code)) if code else ""


def _source(path: str, cards_dir: Path) -> str:
    """The card file relative to the cards folder: the same on every checkout."""
    try:
        return Path(path).resolve().relative_to(cards_dir.resolve()).as_posix()
    except ValueError:
        return Path(path).name
