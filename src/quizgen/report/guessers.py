"""The item-writing report: how answer-blind guessers do on each deck, and a warning where one does
well enough for a learner to notice (and learn the pattern instead of the lesson).

A guesser never reads the question: it answers from the surface of what is shown.
- myths: "longer claim => true" (a claim longer than the deck's median claim is called true), its mirror
  "shorter claim => true", and "the commoner verdict" (every claim called what most of the deck's are);
- multiple choice (value cards answered by choosing): the longest option, the shortest option (ties
  share the credit), the first and the last option in the order the page lists them, where one
  option alone is an exception, that one; where every option is a number, the middle one (wrong options
  made by nudging the answer each way leave it there); where every option is a tuple or list of as many
  parts, the one that agrees most with each part's commonest value (wrong options that each change one
  part of the answer leave the answer as every part's majority);
- order puzzles: "the first block first" (the line the page lists first is put first).
Each deck is scored, and the project's decks together too (a learner who takes them all learns one
pattern across them). Chance is what a coin (or a die, over a card's options or lines) scores on the
same items. A guesser leaks when it beats chance by more than MARGIN of its items, on MIN_ITEMS or more.
"""

from __future__ import annotations

import ast
import math
import statistics
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import cast

from quizgen.cards.model import VerifiedCard, VerifiedDeck
from quizgen.errors import Location, Problem
from quizgen.kinds.myth import MythCard, computed_verdict
from quizgen.kinds.order import OrderCard
from quizgen.kinds.value import ValueCard, variants
from quizgen.render.markup import markdown, plain
from quizgen.render.view import listed, shuffled

MYTHS, CHOICES, PUZZLES = "myths", "multiple-choice cards", "order puzzles"  # what each guesser answers
MARGIN = 0.15  # points over chance (as a share) a learner notices
MIN_ITEMS = 10  # fewer items and a lucky streak is no pattern to learn
RAISES = "raises "  # how an option that is an exception reads (answers/compare.show_short)


@dataclass(frozen=True)
class Score:
    """How one guesser did on the items of one sort (myths, choices, puzzles) of some cards."""

    guesser: str
    items: int
    right: float  # items answered right (a tie between options shares its credit)
    chance: float  # items a blind pick would get right, expected

    @property
    def rate(self) -> float:
        return self.right / self.items if self.items else 0.0

    @property
    def chance_rate(self) -> float:
        return self.chance / self.items if self.items else 0.0

    @property
    def leaks(self) -> bool:
        # in whole items (a rate's float could put 65% a hair over 50% + 15)
        return self.items >= MIN_ITEMS and self.right - self.chance > MARGIN * self.items + 1e-9


def claim_length(card: MythCard) -> int:
    """The length of the claim as a learner reads it (its Markdown rendered, as text)."""
    return len(plain(markdown(card.claim)))


def myth_scores(myths: Sequence[tuple[int, bool]]) -> list[Score]:
    """The myth guessers on (claim length, verdict) pairs."""
    if not myths:
        return []
    n = len(myths)
    median = statistics.median(length for length, _ in myths)
    longer = sum((length > median) == verdict for length, verdict in myths)
    shorter = sum((length < median) == verdict for length, verdict in myths)
    true = sum(verdict for _, verdict in myths)
    return [
        Score("longer claim => true", n, longer, n / 2),
        Score("shorter claim => true", n, shorter, n / 2),
        Score("the commoner verdict", n, max(true, n - true), n / 2),
    ]


def _tied(texts: Sequence[str], pick: Callable[[Sequence[int]], int]) -> float:
    """The credit of picking the option whose length is `pick` of all: 1/t for the right one (index 0)
    among t tied options."""
    lengths = [len(t) for t in texts]
    best = pick(lengths)
    tied = [k for k, length in enumerate(lengths) if length == best]
    return 1 / len(tied) if 0 in tied else 0.0


def choice_scores(items: Sequence[tuple[Sequence[str], Sequence[int]]]) -> list[Score]:
    """The multiple-choice guessers on (option texts with the right one first, the order the page
    lists them in) pairs."""
    if not items:
        return []
    n = len(items)
    chance = sum(1 / len(texts) for texts, _ in items)
    found = [
        Score("the longest option", n, sum(_tied(t, max) for t, _ in items), chance),
        Score("the shortest option", n, sum(_tied(t, min) for t, _ in items), chance),
        Score("the first option listed", n, sum(order[0] == 0 for _, order in items), chance),
        Score("the last option listed", n, sum(order[-1] == 0 for _, order in items), chance),
    ]
    # "the one that raises": on the cards where exactly one option is an exception, pick it
    lone = [[t.startswith(RAISES) for t in texts] for texts, _ in items]
    lone = [raising for raising in lone if sum(raising) == 1]
    if lone:
        chance = sum(1 / len(raising) for raising in lone)
        found.append(Score("the only option that raises", len(lone), sum(r[0] for r in lone), chance))
    for guesser, credit in (("the middle value", _middle), ("the majority in each part", _majority)):
        credits = [c for texts, _ in items if (c := credit(texts)) is not None]
        if credits:
            chance = sum(1 / n for _, n in credits)
            found.append(Score(guesser, len(credits), sum(c for c, _ in credits), chance))
    return found


def _middle(texts: Sequence[str]) -> tuple[float, int] | None:
    """(the credit of picking the middle value, the options' count) where every option (3 or more) is
    a number; of an even count the two middle ones share the pick. An option "nan" has no place among
    the others (it sorts anywhere): such a card is not this guesser's."""
    try:
        values = [float(t) for t in texts]
    except ValueError:
        return None
    n = len(values)
    if n < 3 or len(set(values)) < n or any(math.isnan(v) for v in values):
        return None
    ranked = sorted(range(n), key=values.__getitem__)
    middle = ranked[(n - 1) // 2 : n // 2 + 1]
    return (1 / len(middle) if 0 in middle else 0.0), n


def _parts(text: str) -> tuple[str, ...] | None:
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None
    return tuple(repr(part) for part in value) if isinstance(value, (tuple, list)) else None


def _majority(texts: Sequence[str]) -> tuple[float, int] | None:
    """(the credit of picking the option that holds the most parts' commonest values, the options'
    count) where every option (3 or more) is a tuple or list of as many parts (2 or more)."""
    options = [_parts(t) for t in texts]
    if len(options) < 3 or any(o is None for o in options):
        return None
    parts = cast(list[tuple[str, ...]], options)
    if len({len(o) for o in parts}) != 1 or len(parts[0]) < 2:
        return None
    common = []
    for k in range(len(parts[0])):
        counts = Counter(o[k] for o in parts)
        top = max(counts.values())
        common.append({v for v, c in counts.items() if c == top and c > 1})
    held = [sum(o[k] in common[k] for k in range(len(o))) for o in parts]
    best = [i for i, h in enumerate(held) if h == max(held)]
    return (1 / len(best) if 0 in best else 0.0), len(parts)


def order_scores(puzzles: Sequence[tuple[int, Sequence[int], Sequence[Sequence[int]]]]) -> list[Score]:
    """\"The first block first" on (blocks listed, the order the page lists them in, accepted orders)
    triples; blocks are numbered as written, distractors after the lines."""
    if not puzzles:
        return []
    right = sum(listed[0] in {o[0] for o in accepted if o} for _, listed, accepted in puzzles)
    chance = sum(len({o[0] for o in accepted if o}) / blocks for blocks, _, accepted in puzzles)
    return [Score("the first block first", len(puzzles), right, chance)]


def _myth(vc: VerifiedCard) -> tuple[int, bool] | None:
    card = cast(MythCard, vc.card)
    verdict = computed_verdict(vc.answer) if vc.answer else card.verdict
    return None if verdict is None else (claim_length(card), verdict)


def _choices(vc: VerifiedCard) -> tuple[list[str], list[int]] | None:
    card = cast(ValueCard, vc.card)
    if not card.variants or card.answers != "choice" or vc.outcome is None:
        return None
    texts = variants.option_texts(variants.choices(card.variants, vc.outcome, card.tolerance))  # as shown
    return (texts, listed(card.id, len(texts))) if len(texts) > 1 else None


def _order(vc: VerifiedCard) -> tuple[int, list[int], list[list[int]]] | None:
    card = cast(OrderCard, vc.card)
    accepted = (vc.outcome.orders if vc.outcome else None) or []
    blocks = len(card.lines) + len(card.distractors)
    return (blocks, shuffled(card.id, blocks), accepted) if accepted else None


def scores(cards: Sequence[VerifiedCard]) -> dict[str, list[Score]]:
    """The guessers on these cards: the items they answer (MYTHS, CHOICES, PUZZLES) -> their scores."""
    myths = [m for vc in cards if isinstance(vc.card, MythCard) and (m := _myth(vc))]
    choices = [c for vc in cards if isinstance(vc.card, ValueCard) and (c := _choices(vc))]
    orders = [o for vc in cards if isinstance(vc.card, OrderCard) and (o := _order(vc))]
    by_items = {MYTHS: myth_scores(myths), CHOICES: choice_scores(choices), PUZZLES: order_scores(orders)}
    return {items: found for items, found in by_items.items() if found}


ALL = "all decks"


def scored(decks: Sequence[VerifiedDeck]) -> list[tuple[str, Location | None, dict[str, list[Score]]]]:
    """(deck name, its location, its scores) for each deck, then for all decks when there are several
    (located by the caller: they are the project's)."""
    found: list[tuple[str, Location | None, dict[str, list[Score]]]] = [
        (vd.deck.name, vd.deck.location or Location(vd.deck.path), scores(vd.cards)) for vd in decks
    ]
    if len(decks) > 1:
        found.append((ALL, None, scores([vc for vd in decks for vc in vd.cards])))
    return found


def warnings(decks: Sequence[VerifiedDeck], project: Location) -> list[Problem]:
    """A warning at each deck (at `project` for all decks together), for each guesser that beats chance
    by more than a learner would miss."""
    found = []
    for _, where, by_items in scored(decks):
        for items, found_scores in by_items.items():
            for s in found_scores:
                if s.leaks:
                    told = _warning(items, s) if where else f"across {ALL}, {_warning(items, s)}"
                    found.append(Problem(where or project, told))
    return found


_FIX = {
    MYTHS: "rewrite claims so that length (or the verdict count) says nothing: compound false claims, "
    "short true ones",
    CHOICES: "make the wrong options read like the right one (length, form), or give more variants",
    PUZZLES: "the page lists the lines in an order that gives the first away: add a distractor or a line",
}


def _warning(items: str, s: Score) -> str:
    return (
        f"answer-blind guessing leaks the answers: '{s.guesser}' is right on {_figure(s)} of the "
        f"{items} (chance: {s.chance_rate:.0%}); {_FIX[items]} "
        "(quizgen check --report shows every guesser)"
    )


def _figure(s: Score) -> str:
    right = f"{s.right:g}" if s.right == int(s.right) else f"{s.right:.1f}"
    return f"{right}/{s.items} ({s.rate:.0%})"


def two_way(cards: Sequence[VerifiedCard]) -> list[str]:
    """The ids of the cards a learner answers by picking one of two: myths, and value cards whose
    variants give one distinct wrong answer (chosen or typed: typing "0" or "2" is a coin flip too)."""
    return [vc.card.id for vc in cards if _is_two_way(vc)]


def _is_two_way(vc: VerifiedCard) -> bool:
    if isinstance(vc.card, MythCard):
        return True
    if not isinstance(vc.card, ValueCard) or not vc.card.variants or vc.outcome is None:
        return False
    return len(variants.choices(vc.card.variants, vc.outcome, vc.card.tolerance)) == 2


def table(decks: Sequence[VerifiedDeck]) -> list[str]:
    """The report as lines of text: per deck, each guesser's score beside chance, and the leaks marked;
    then the two-way items (a coin flip: right half the time knowing nothing)."""
    lines = [f"{'deck / guesser':<50} {'items':>5} {'right':>13} {'chance':>6}"]
    for name, _, by_items in scored(decks):
        lines.append(name + ("" if by_items else ": no myths, choices or order puzzles"))
        for items, found_scores in by_items.items():
            for s in found_scores:
                mark = "  leaks" if s.leaks else ""
                name = f"  {items}: {s.guesser}"
                lines.append(f"{name:<50} {s.items:>5} {_figure(s):>13} {s.chance_rate:>6.0%}{mark}")
    margin = f"{MARGIN * 100:g} points on {MIN_ITEMS} or more items"
    lines.append(f"(a guesser leaks when it beats chance by more than {margin})")
    cards = [vc for vd in decks for vc in vd.cards]
    if cards:
        pairs = two_way(cards)
        values = [vc.card.id for vc in cards if isinstance(vc.card, ValueCard) and vc.card.id in pairs]
        share = f"{len(pairs)} of {len(cards)} ({len(pairs) / len(cards):.0%})"
        lines.append(f"two-way items: {share}: {len(pairs) - len(values)} myths, {len(values)} value cards")
        lines.extend(f"  {card_id}" for card_id in values)
    return lines
