"""What a verified card looks like to a learner, shared by the Anki and HTML renderers.

The common part is filled here; each kind fills its own part (quizgen/kinds/<kind>.py, `view`).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import fields
from pathlib import Path
from typing import Any

from quizgen.cards.model import Card, Deck, VerifiedCard, VerifiedDeck
from quizgen.execution.protocol import Job
from quizgen.project import files
from quizgen.render import torch_use
from quizgen.render.code import highlighting
from quizgen.render.kept import Kept
from quizgen.render.markup import highlight, is_remote, markdown, math_spans, plain, rewrite_images
from quizgen.render.view import CardView

# While a build renders (`shared_views`): (card, deck, deck tags) -> the card and its view. The Anki and
# quiz renderers show every card, and making a view (Markdown, highlighting) was most of their time.
_views: dict[tuple[int, int, tuple[str, ...]], tuple[VerifiedCard, CardView]] | None = None


@contextmanager
def shared_views() -> Iterator[None]:
    """Within it, each card's view is made once and shared by every renderer (views are read-only)."""
    global _views
    _views = {}
    try:
        yield
    finally:
        _views = None


def card_view(vc: VerifiedCard, deck_tags: list[str], deck: Deck | None = None) -> CardView:
    """What learners see of a card; `deck` (its setup) tells whether the card's code used torch."""
    if _views is None:
        return _make_view(vc, deck_tags, deck)
    key = (id(vc), id(deck), tuple(deck_tags))
    known = _views.get(key)
    if known is None or known[0] is not vc:
        known = _views[key] = (vc, _make_view(vc, deck_tags, deck))
    return known[1]


def _make_view(vc: VerifiedCard, deck_tags: list[str], deck: Deck | None) -> CardView:
    from quizgen import kinds

    card = vc.card
    deck = deck or Deck(card.deck, card.location.path)
    job = card_job(deck, card) if vc.outcome is not None else None
    view = CardView(
        id=card.id,
        kind=card.kind,
        deck=card.deck,
        tags=list(dict.fromkeys([*deck_tags, *card.tags])),
        prompt_html="",
        explain_html=markdown(card.explain),
        output=vc.output,
        executed=vc.outcome is not None,
        attempts=deck.attempts or CardView.attempts,
        torch_version=vc.torch_version if job is not None and torch_use.uses_torch(job) else "",
    )
    if view.torch_version:  # the matrix's versions that verified it, and its answers where they differ
        # Whether a version ran here or its answers are the lock's record is the build's business (its
        # summary, build-info.json), never the learner's: the same cards and lock give the same outputs.
        view.torch_versions = list(vc.torch.answers) if vc.torch else [view.torch_version]
        view.torch_answers = list(vc.torch.answers.items()) if vc.torch and vc.torch.differ else []
        view.torch_judged = vc.torch.judged if vc.torch else ""
        view.judged_on = card.judged_on
    kinds.get(card.kind).view(vc, view)
    view.code_html = highlight(view.code) if view.code else ""
    view.setup_html = highlight(setup) if (setup := shown_setup(vc, deck)) else ""
    for f in fields(view):
        if f.name.endswith("_html"):
            setattr(view, f.name, with_media(getattr(view, f.name), card.location.path, view.media))
    return view


def shown_setup(vc: VerifiedCard, deck: Deck) -> str:
    """What ran before the card's own code, as learners see it: the deck's setup, then the card's."""
    from quizgen import kinds

    if vc.outcome is None:
        return ""  # nothing of the card ran
    snippets = [deck.setup, *kinds.get(vc.card.kind).setup_shown(vc.card)]
    return "\n".join(s.code.strip() for s in snippets if s is not None and s.code.strip())


def deck_views(deck: VerifiedDeck) -> list[CardView]:
    return [card_view(vc, deck.deck.tags, deck.deck) for vc in deck.cards]


def media_name(path: Path) -> str:
    """An image's name in the outputs: from its content, so it is stable and two images never collide."""
    return f"qg-{files.digest(path, follow=True)[:16]}{path.suffix.lower()}"


def with_media(fragment: str, card_file: str, media: dict[str, Path]) -> str:
    """HTML whose local images name their media file (as Anki wants it); the files go into `media`."""
    from quizgen.cards.text import image_file

    def rename(src: str) -> str | None:
        path = image_file(card_file, src)
        if is_remote(src) or not path.is_file():  # the loader reported it already
            return None
        name = media_name(path)
        media[name] = path
        return name

    return rewrite_images(fragment, rename) if "<img" in fragment else fragment


TITLE_LENGTH = 80  # a card's title, as a link to it shows it, is cut to this many characters


def card_titles(decks: list[VerifiedDeck]) -> dict[str, tuple[str, str]]:
    """Each card's id -> (its deck's name, its title): the prompt it asks (question, claim or front) as
    plain text, cut short; what a link to the card names it by."""
    titles = {}
    for vd in decks:
        for vc in vd.cards:
            card = vc.card
            prompt = next((t for n in ("ask", "claim", "front") if (t := getattr(card, n, ""))), card.id)
            titles[card.id] = (vd.deck.name, _shortened(plain(markdown(prompt))))
    return titles


def _shortened(title: str) -> str:
    """A title cut to TITLE_LENGTH characters at a word, never inside its math."""
    if len(title) <= TITLE_LENGTH:
        return title
    cut = TITLE_LENGTH - 1
    for start, end in math_spans(title):
        if start < cut < end:
            cut = start
    return title[:cut].rsplit(" ", 1)[0].rstrip(",;:") + "…"


def deck_description(deck: Deck, media: dict[str, Path]) -> str:
    """A deck's description as HTML, its images named like the cards' (their files go into `media`)."""
    return with_media(markdown(deck.description), deck.path, media)


def card_job(deck: Deck, card: Card) -> Job | None:
    """The job the card ran as (what tells whether its code used torch)."""
    from quizgen import kinds

    job = kinds.get(card.kind).job(deck, card)
    if job is not None and card.cite:
        job["cite"] = {name: snippet.to_job() for name, snippet in card.cite.items()}
    return job


def kept_results() -> list[tuple[Kept[Any, Any], str]]:
    """What a render works out once and keeps in the build cache: each with its table there."""
    return [(highlighting.KEPT, "highlight"), (torch_use.TORCH_USE, "torch")]
