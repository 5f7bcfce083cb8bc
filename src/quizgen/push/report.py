"""What a push did: per deck, the cards added, updated and left, and what changed beside them."""

from __future__ import annotations

from dataclasses import dataclass, field

from quizgen.errors import count


@dataclass
class DeckPushed:
    """What one deck's push did, by card (its key in the notes; its id once `names` are known)."""

    deck: str
    added: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    left: list[str] = field(default_factory=list)  # already as built: not touched


@dataclass
class Pushed:
    """What a push did: per deck, and to the note types and media files Anki holds."""

    into: str  # the AnkiConnect address or the collection's path
    decks: list[DeckPushed] = field(default_factory=list)
    notetypes: list[str] = field(default_factory=list)  # "quizgen value added" / "... updated"
    media: int = 0  # media files stored (new or changed)
    gone: list[str] = field(default_factory=list)  # quizgen notes in Anki whose card is no longer built

    def lines(self) -> list[str]:
        """One line per deck, then the note types, media and what Anki has that the build no longer does."""
        out = [
            f"{d.deck}: {len(d.added)} added, {len(d.updated)} updated, {len(d.left)} left as they were"
            for d in self.decks
        ]
        out += [f"note type {change}" for change in self.notetypes]
        if self.media:
            out.append(f"{count(self.media, 'media file')} stored")
        if self.gone:
            out.append(
                f"{count(len(self.gone), 'note')} in Anki no longer built, left there: "
                f"{', '.join(sorted(self.gone))}"
            )
        added, updated, left = (
            sum(len(getattr(d, k)) for d in self.decks) for k in ("added", "updated", "left")
        )
        out.append(f"pushed into {self.into}: {added} added, {updated} updated, {left} left as they were")
        return out
