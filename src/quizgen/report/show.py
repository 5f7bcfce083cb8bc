"""`quizgen show CARD`: what one card accepts, as the check (its cache) found it."""

from __future__ import annotations

import difflib

from quizgen import kinds, pipeline
from quizgen.cards.model import Deck, VerifiedCard
from quizgen.errors import UsageError


def show(options: pipeline.Options, card_id: str) -> list[str]:
    """The lines `quizgen show` prints for the card `card_id`, after checking every card."""
    _, vc = found_card(pipeline.check(options), card_id)
    return [f"{vc.card.location}:", *kinds.get(vc.card.kind).accepted(vc.card, vc.outcome)]


def found_card(report: pipeline.Report, card_id: str) -> tuple[Deck, VerifiedCard]:
    """The checked card `card_id` and its deck; a usage error naming a close id when there is none."""
    found = {vc.card.id: (vd.deck, vc) for vd in report.decks for vc in vd.cards}
    if card_id not in found:
        close = difflib.get_close_matches(card_id, list(found), n=1)
        hint = f" (did you mean '{close[0]}'?)" if close else ""
        raise UsageError(f"no card has the id '{card_id}'{hint}")
    return found[card_id]
