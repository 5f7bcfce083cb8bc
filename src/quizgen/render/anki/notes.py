"""A verified card as an Anki note: its note type's fields filled with HTML that Anki shows as it is."""

from __future__ import annotations

import hashlib
import html
import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from quizgen import kinds
from quizgen.cards import course
from quizgen.cards.model import Deck, VerifiedCard
from quizgen.render.anki import notetypes
from quizgen.render.markup import link_card_ids, math_spans, rewrite_card_links
from quizgen.render.math.mathml import problem as tex_problem
from quizgen.render.present import card_view
from quizgen.render.view import CardView, card_key
from quizgen.torch_versions import versions


def anki_safe(fragment: str) -> str:
    """HTML that Anki shows as it is: braces cannot open a template tag, `[sound:` cannot play."""
    return fragment.replace("{", "&#123;").replace("}", "&#125;").replace("[", "&#91;")


_CODE = re.compile(r'<pre class="highlight">.*?</pre>|<code>', re.S)


def code_is_not_math(fragment: str) -> str:
    """HTML whose code Anki's MathJax leaves alone (it skips `tex2jax_ignore`): `\\(` in code is code."""

    def mark(m: re.Match[str]) -> str:
        if m.group(0) == "<code>":
            return '<code class="tex2jax_ignore">'
        return f'<div class="tex2jax_ignore">{m.group(0)}</div>'

    return _CODE.sub(mark, fragment)


def _text(text: str) -> str:
    return anki_safe(html.escape(text))


def _torch(version: str) -> str:
    match = re.match(r"\d+\.\d+", version)
    return match.group(0) if match else version


def _torch_field(view: CardView) -> str:
    """The versions that verified the card ("verified with torch 1.13, 2.13"), and each one's answer
    where they differ."""
    shown = ", ".join(_torch(v) for v in versions.ordered(view.torch_versions))
    if view.torch_answers:
        each = (f"torch {html.escape(v)}: <code>{html.escape(a)}</code>" for v, a in view.torch_answers)
        judged = f"(judged on {html.escape(view.torch_judged)})"
        shown += f'<div class="qg-by-torch">the answer depends on it: {" · ".join(each)} {judged}</div>'
    if view.judged_on:  # the version the question is about, the one whose answers it judges
        shown += f'<div class="qg-judged-on">judged on torch {html.escape(view.judged_on)}</div>'
    return anki_safe(code_is_not_math(shown))


@dataclass
class Note:
    """A card as Anki gets it: a note of its kind's note type."""

    id: str
    kind: str
    deck: str  # the Anki deck it is filed under: the deck's name, numbered by its place in the course
    fields: list[str]
    tags: list[str]
    media: dict[str, Path] = field(default_factory=dict)  # the images its fields name -> their files

    @property
    def hash(self) -> str:
        data = [notetypes.model_id(self.kind), self.fields, self.tags]
        return hashlib.sha256(json.dumps(data).encode()).hexdigest()[:16]


def titled_links(fragment: str, titles: Mapping[str, tuple[str, str]]) -> str:
    """HTML whose links to cards are text naming the card: `the other card ("Its question")`. A note
    cannot link to another note, but it can say which card it means."""

    def title(target: str, inner: str) -> str:
        named = _title_text(titles[target][1]) if target in titles else html.escape(target)
        return f"{inner} ({named})" if inner.strip() else named

    return rewrite_card_links(link_card_ids(fragment, titles), title)


def _title_text(title: str) -> str:
    """A card's title as text of another note. A title is plain text, where a code span's `\\(...\\)` is
    text too: its math is left to Anki's MathJax only when everything MathJax would read as math in it
    passes the checks, else the whole title is shown as written."""
    shown = html.escape(f"“{title}”")
    if all(tex_problem(title[a + 2 : b - 2], title[a + 1] == "[") is None for a, b in math_spans(title)):
        return shown
    return f'<span class="tex2jax_ignore">{shown}</span>'


def note_for(
    vc: VerifiedCard, deck: Deck, cards_dir: Path, titles: Mapping[str, tuple[str, str]] | None = None
) -> Note:
    """The note of one verified card: every field filled, HTML made safe for Anki's templates; `titles`
    (card id -> deck name, title) names the cards its text links to."""
    card = vc.card
    kind = kinds.get(card.kind)
    view = card_view(vc, deck.tags, deck)
    titles = titles or {}
    values = {
        "Id": card_key(card.id),  # learners see it (the browser's first column): never the id
        "Explain": anki_safe(code_is_not_math(titled_links(view.explain_html, titles))),
        "Output": _text(view.output.rstrip("\n")),
        "Torch": _torch_field(view),
        "Setup": anki_safe(view.setup_html),  # the deck's setup, then the card's: what ran first
        "Source": _source(card.location.path, cards_dir),
        **{
            name: anki_safe(code_is_not_math(titled_links(fragment, titles)))
            for name, fragment in kind.note_fields(vc, view).items()
        },
    }
    if view.judge:  # what judge.js needs, as an HTML attribute
        values["Judge"] = anki_safe(html.escape(json.dumps(view.judge, sort_keys=True), quote=True))
    names = notetypes.fields(card.kind)
    unknown = set(values) - set(names)
    if unknown:
        raise ValueError(f"fields {sorted(unknown)} are not in the {card.kind} note type")
    shown = course.numbered(deck)  # the deck Anki files it under (the lock tells of moves between them)
    return Note(card.id, card.kind, shown, [values.get(n, "") for n in names], view.tags, view.media)


def _source(path: str, cards_dir: Path) -> str:
    """The card file relative to the cards folder: the same on every checkout."""
    return _relative(path, cards_dir, os.getcwd())


@lru_cache(maxsize=1024)  # every card of a file asks; resolving a path is a system call per part
def _relative(path: str, cards_dir: Path, cwd: str) -> str:
    try:
        return Path(path).resolve().relative_to(cards_dir.resolve()).as_posix()
    except ValueError:
        return Path(path).name
