"""`quizgen check --locked`: the committed quizgen.lock must be the one a build of these cards writes.

As `cargo --locked` or `uv lock --check`: a course repository's CI runs it so that what is committed is
what was verified. Each card whose entry a build would change is named at its place in the card files
(one gone from the cards, at the lock); nothing is written.
"""

from __future__ import annotations

from pathlib import Path

from quizgen.cards.model import VerifiedDeck
from quizgen.errors import Location, Problem, QuizgenError, count


class LockNotCurrent(QuizgenError):
    """`--locked`, and a build would change the lock."""

    def __init__(self, lock_path: Path, problems: list[Problem]) -> None:
        self.problems = problems
        cards = len({p.location.card for p in problems if p.location.card})
        lines = [
            f"{lock_path} is not the lock these cards build (--locked):",
            *(str(p) for p in problems),
            f"the lock is out of date for {count(cards, 'card')}: run `quizgen build`, then commit "
            f"{lock_path} with the cards",
        ]
        super().__init__("\n".join(lines))


def verify(decks: list[VerifiedDeck], cards_dir: Path) -> None:
    """Raise LockNotCurrent naming each difference when a build of `decks` would change the lock."""
    from quizgen.project import lock
    from quizgen.render.anki import planned

    lock_path = cards_dir / lock.LOCK_NAME
    _, old, new, changes = planned(decks, cards_dir)
    if _same_text(lock_path, lock.dumps(new)):  # what a build compares before it writes the lock
        return
    where = {vc.card.id: vc.card.location for vd in decks for vc in vd.cards}

    def at(card_id: str) -> Location:
        known = where.get(card_id)
        return Location(known.path, known.line, known.col, card_id) if known else Location(str(lock_path))

    problems = [Problem(at(c), "new: the lock has no entry for it") for c in changes.added]
    problems += [Problem(at(c), "its Anki note is not the one the lock records") for c in changes.changed]
    problems += [Problem(at(c), f"moved from deck '{a}' to '{b}'") for c, a, b in changes.moved]
    gone = "no card has this id now, but the lock has it as a card"
    problems += [Problem(Location(str(lock_path), card=c), gone) for c in changes.removed]
    for version in sorted({*old.torch, *new.torch}):
        was, now = old.torch.get(version, {}), new.torch.get(version, {})
        for card_id in sorted({*was, *now}):
            if (before := was.get(card_id)) != (after := now.get(card_id)):
                problems.append(Problem(at(card_id), _torch_difference(version, before, after)))
    for card_id in sorted({*old.judged, *new.judged}):
        if old.judged.get(card_id) != new.judged.get(card_id):
            message = "its outcome on the torch version it is judged on is not the one the lock records"
            problems.append(Problem(at(card_id), message))
    for name in changes.notetypes:
        problems.append(
            Problem(Location(str(lock_path)), f"note type '{name}' changed (quizgen's templates)")
        )
    if not problems:  # the same entries, written otherwise (by hand, or an older quizgen)
        problems.append(Problem(Location(str(lock_path)), "not laid out as a build writes it"))
    # in the card files' order, then what only the lock has
    problems.sort(key=lambda p: (p.location.path == str(lock_path), p.location.path, p.location.line))
    raise LockNotCurrent(lock_path, problems)


def _torch_difference(version: str, was: dict[str, str] | None, now: dict[str, str] | None) -> str:
    if was is None:
        return f"the lock records no answer of it on torch {version}"
    if now is None:
        return f"the lock records an answer of it on torch {version}, which this build does not have"
    if was["job"] != now["job"]:
        return f"the lock records its answer on torch {version} for what it ran before it was edited"
    return f"the lock records `{was['answer']}` on torch {version}, this build `{now['answer']}`"


def _same_text(path: Path, text: str) -> bool:
    from quizgen.constants import MAX_LOCK_BYTES
    from quizgen.project import files

    try:
        return files.read_text(path, MAX_LOCK_BYTES) == text
    except (OSError, ValueError):
        return False
