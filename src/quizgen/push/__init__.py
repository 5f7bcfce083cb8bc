"""`quizgen push`: build, then bring the decks into the learner's Anki, keeping every review.

Two ways in: a running Anki through AnkiConnect (ankiconnect.py, note by note), or, with Anki closed,
a profile's collection through Anki's own library (collection.py, importing the built packages).
Both read what the build wrote (packages.py) and report per deck what was added, updated and left.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from quizgen.errors import count
from quizgen.push.packages import Package, read


@dataclass
class DeckPushed:
    """What one deck's push did, by card id."""

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


def packages(written: list[Path]) -> list[Package]:
    """The packages a build wrote, read back."""
    return [read(path) for path in written if path.suffix == ".apkg"]


def push(written: list[Path], profile: str | None, collection: Path | None, url: str) -> Pushed:
    """Push the packages a build wrote: into a profile or collection file when one is named (Anki
    closed), else into the running Anki through AnkiConnect at `url`."""
    built = packages(written)
    if profile is not None or collection is not None:
        from quizgen.push import collection as into_collection
        from quizgen.push.profiles import collection as profile_collection

        path = collection if collection is not None else profile_collection(str(profile))
        return into_collection.push(path, built)
    from quizgen.push.ankiconnect import AnkiConnect
    from quizgen.push.ankiconnect import push as through_anki_connect

    return through_anki_connect(AnkiConnect(url), built)
