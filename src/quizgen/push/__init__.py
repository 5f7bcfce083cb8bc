"""`quizgen push`: build, then bring the decks into the learner's Anki, keeping every review.

Two ways in: a running Anki through AnkiConnect (ankiconnect.py, note by note), or, with Anki closed,
a profile's collection through Anki's own library (collection.py, importing the built packages).
Both read what the build wrote (packages.py) and report per deck what was added, updated and left.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from quizgen.push.packages import Package, read
from quizgen.push.report import Pushed


def packages(written: list[Path]) -> list[Package]:
    """The packages a build wrote, read back."""
    return [read(path) for path in written if path.suffix == ".apkg"]


def push(
    written: list[Path],
    profile: str | None,
    collection: Path | None,
    url: str,
    names: Mapping[str, str] | None = None,
) -> Pushed:
    """Push the packages a build wrote: into a profile or collection file when one is named (Anki
    closed), else into the running Anki through AnkiConnect at `url`. Notes carry a card's key, not its
    id (render.view.card_key); `names` (key -> id) gives the report the ids the author knows."""
    built = packages(written)
    if profile is not None or collection is not None:
        from quizgen.push import collection as into_collection
        from quizgen.push.profiles import collection as profile_collection

        path = collection if collection is not None else profile_collection(str(profile))
        return _named(into_collection.push(path, built), names or {})
    from quizgen.push.ankiconnect import AnkiConnect
    from quizgen.push.ankiconnect import push as through_anki_connect

    return _named(through_anki_connect(AnkiConnect(url), built), names or {})


def _named(pushed: Pushed, names: Mapping[str, str]) -> Pushed:
    for deck in pushed.decks:
        for cards in (deck.added, deck.updated, deck.left):
            cards[:] = [names.get(key, key) for key in cards]
    pushed.gone = [names.get(key, key) for key in pushed.gone]
    return pushed
