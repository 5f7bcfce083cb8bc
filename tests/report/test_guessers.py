"""The item-writing report (quizgen/report/guessers.py): answer-blind guessers scored exactly on small decks,
the warning at the deck when one beats chance by a margin a learner notices, and `check --report`."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from quizgen import pipeline
from quizgen.cli import cli
from quizgen.report import guessers
from quizgen.report.guessers import Score, choice_scores, myth_scores, order_scores


def test_the_myth_guessers_score_exactly() -> None:
    # median length 25: the two longer claims are true, one shorter is true, one at the median false
    myths = [(10, False), (20, True), (25, False), (30, True), (40, True)]
    assert myth_scores(myths) == [
        Score("longer claim => true", 5, 4, 2.5),  # 10 F, 20 T (miss), 25 F, 30 T, 40 T
        Score("shorter claim => true", 5, 2, 2.5),  # 20 T and 25 F (neither longer nor shorter: false)
        Score("the commoner verdict", 5, 3, 2.5),
    ]
    assert myth_scores([]) == []


def test_a_guesser_leaks_past_fifteen_points_on_ten_items() -> None:
    assert Score("g", 10, 6.6, 5).leaks and not Score("g", 10, 6.5, 5).leaks  # 66% leaks, 65% does not
    assert not Score("g", 9, 9, 4.5).leaks  # nine items are too few to learn a pattern from
    assert Score("g", 10, 4.1, 2.5).leaks and not Score("g", 10, 4, 2.5).leaks  # 40% is 25% + 15


def test_the_choice_guessers_share_ties_and_read_the_listed_order() -> None:
    items = [
        (["raises RuntimeError: a long message", "1.0", "2.0"], [1, 0, 2]),  # right: longest, listed 2nd
        (["4", "16", "8"], [0, 2, 1]),  # right: shortest with "8" (half a point), listed first
        (["ab", "cd"], [1, 0]),  # a tie of two: half a point to each length guesser; listed last
    ]
    chance = 1 / 3 + 1 / 3 + 1 / 2
    assert choice_scores(items) == [
        Score("the longest option", 3, 1.5, chance),
        Score("the shortest option", 3, 1, chance),
        Score("the first option listed", 3, 1, chance),
        Score("the last option listed", 3, 1, chance),
        Score("the only option that raises", 1, 1, 1 / 3),  # only the first card has one raising option
        Score("the middle value", 1, 0, 1 / 3),  # only the second card's options are all numbers: 8 is
    ]  # its middle, the answer 4 is not


def test_the_middle_value_is_scored_where_every_option_is_a_number() -> None:
    items = [
        (["0.0125", "0.025", "0.00625"], [0, 1, 2]),  # the answer between its two nudges: right
        (["12.0", "6.0", "24.0", "3.0"], [0, 1, 2, 3]),  # 4 options: 6 and 12 in the middle, half a point
        (["1.0", "2.0", "3.0"], [0, 1, 2]),  # the answer at one end: wrong
        (["1.0", "None", "3.0"], [0, 1, 2]),  # not every option a number: not this guesser's
        (["1.0", "2.0"], [0, 1]),  # two options have no middle
        (["nan", "1.0", "2.0"], [0, 1, 2]),  # a NaN sorts anywhere: before, scored as if in the middle
    ]
    assert choice_scores(items)[-1] == Score("the middle value", 3, 1.5, 1 / 3 + 1 / 4 + 1 / 3)


def test_the_majority_in_each_part_is_scored_where_every_option_has_as_many_parts() -> None:
    items = [
        # each wrong option changes one part of the answer: the answer holds both parts' majority
        (["(0.9, 0.99)", "(0.9, 0.999)", "(0.8, 0.99)"], [0, 1, 2]),
        # a wrong option changes both parts: the answer holds no majority the others do not
        (["([1.0], True)", "([2.0], True)", "([1.0], False)", "([2.0], False)"], [0, 1, 2, 3]),
        (["(1, 2)", "(1, 2, 3)", "(4, 5)"], [0, 1, 2]),  # parts of different counts: not this guesser's
        (["(1, 2)", "raises ValueError", "(4, 5)"], [0, 1, 2]),  # not every option has parts
    ]
    assert choice_scores(items)[-1] == Score("the majority in each part", 2, 1 + 1 / 4, 1 / 3 + 1 / 4)


def test_the_only_option_that_raises_is_scored_where_one_option_alone_raises() -> None:
    items = [
        (["raises ValueError", "1.0", "2.0"], [0, 1, 2]),  # the key raises, alone: right
        (["1.0", "raises ValueError", "2.0", "3.0"], [0, 1, 2, 3]),  # a wrong option raises, alone: wrong
        (["raises ValueError", "raises RuntimeError", "2.0"], [0, 1, 2]),  # two raise: not this guesser's
    ]
    assert choice_scores(items)[-1] == Score("the only option that raises", 2, 1, 1 / 3 + 1 / 4)


def test_the_first_block_first() -> None:
    puzzles = [
        (4, [2, 0, 1, 3], [[2, 0, 1], [0, 2, 1]]),  # 2 may come first: right; 2 firsts of 4 blocks
        (3, [1, 0, 2], [[0, 1, 2]]),  # 1 listed first, 0 comes first: wrong
    ]
    assert order_scores(puzzles) == [Score("the first block first", 2, 1, 2 / 4 + 1 / 3)]


def test_the_listed_options_are_not_the_right_one_first_or_last_by_rule() -> None:
    """The page lists options in a stable order of the card's own: on 1,000 two-option cards the right
    one is first about half the time (a shuffle that avoids the identity would always put it last)."""
    first = sum(guessers.listed(f"card-{n}", 2)[0] == 0 for n in range(1000))
    assert 450 < first < 550


def _myth(n: int, verdict: bool, claim: str) -> str:
    return f"""
  - id: claim-{n}
    kind: myth
    claim: "{claim}"
    proof: |
      x = {n}
    holds: "{verdict}"
"""


def _leaky_deck() -> str:
    """Twelve myths: the true claims are compound and long, the false ones short."""
    cards = [_myth(n, True, f"Number {n} is set, and it stays so while the rest runs") for n in range(6)]
    cards += [_myth(n, False, f"Number {n} is unset") for n in range(6, 12)]
    return "deck: Leaky\ncards:" + "".join(cards)


def test_a_deck_whose_myths_leak_through_length_is_warned_at_the_deck(
    project: Callable[..., Path], options: Callable[..., pipeline.Options]
) -> None:
    root = project({"leaky.yaml": _leaky_deck(), "other.yaml": "deck: Other\ncards:" + _myth(99, True, "x")})
    report = pipeline.check(options(root))
    told = [str(w) for w in report.warnings if "guessing" in w.message]
    deck = f"{root / 'cards' / 'leaky.yaml'}:1:7 -> deck"
    fix = (
        "rewrite claims so that length (or the verdict count) says nothing: compound false claims, short "
        "true ones (quizgen check --report shows every guesser)"
    )
    leaks = "answer-blind guessing leaks the answers: 'longer claim => true' is right on"
    assert told == [
        f"{root / 'cards'}: across all decks, {leaks} 12/13 (92%) of the myths (chance: 50%); {fix}",
        f"{deck}: {leaks} 12/12 (100%) of the myths (chance: 50%); {fix}",
    ]


def test_check_report_prints_the_table(project: Callable[..., Path], monkeypatch: pytest.MonkeyPatch) -> None:
    root = project({"leaky.yaml": _leaky_deck()})
    monkeypatch.chdir(root)
    result = CliRunner().invoke(cli, ["check", "--report", "-j", "1"])
    assert result.exit_code == 0, result.output
    table = result.output[result.output.index("deck / guesser") :].splitlines()
    assert table == [
        "deck / guesser                                     items         right chance",
        "Leaky",
        "  myths: longer claim => true                         12  12/12 (100%)    50%  leaks",
        "  myths: shorter claim => true                        12     0/12 (0%)    50%",
        "  myths: the commoner verdict                         12    6/12 (50%)    50%",
        "(a guesser leaks when it beats chance by more than 15 points on 10 or more items)",
        "two-way items: 12 of 12 (100%): 12 myths, 0 value cards",
    ]


_VALUES = """deck: Values
cards:
  - id: two-way
    kind: value
    ask: What is x?
    code: |
      x = 1
    answer_expr: x
    answer: 1
    variants:
      - label: you believed it doubles
        code: |
          x = 2
      - label: you believed it doubles, said otherwise
        code: |
          x = 2.0
  - id: three-way
    kind: value
    ask: What is y?
    code: |
      y = 1
    answer_expr: y
    answer: 1
    variants:
      - label: you believed it doubles
        code: |
          y = 2
      - label: you believed it triples
        code: |
          y = 3
"""


def test_the_report_counts_two_way_items_and_names_the_value_cards(
    project: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two variants with one answer between them leave a coin flip; the myths are counted, not named."""
    root = project({"values.yaml": _VALUES, "myths.yaml": "deck: Myths\ncards:" + _myth(1, True, "x")})
    monkeypatch.chdir(root)
    result = CliRunner().invoke(cli, ["check", "--report", "-j", "1"])
    assert result.exit_code == 0, result.output
    told = result.output.splitlines()[-2:]
    assert told == ["two-way items: 2 of 3 (67%): 1 myths, 1 value cards", "  two-way"]


_RAISING = """deck: Raising
cards:
  - id: raising
    kind: value
    ask: What happens?
    code: |
      y = 1.0
      raise ValueError("no learning rate was set, so no step")
    answer_expr: y
    answer: {raises: ValueError}
    variants:
      - label: you believed it returns the rates
        replace: {"raise ValueError(\\"no learning rate was set, so no step\\")": "y = [1.0, 2.0, 3.0, 4.0]"}
      - label: you believed it returns 2
        replace: {"raise ValueError(\\"no learning rate was set, so no step\\")": "y = 2.0"}
"""


def test_the_option_guessers_read_the_options_as_the_page_shows_them(
    project: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The one raising option shows `raises ValueError` alone, shorter than a list: the longest-option
    guesser misses (it would win on the whole message, which the page does not show)."""
    root = project({"raising.yaml": _RAISING})
    monkeypatch.chdir(root)
    result = CliRunner().invoke(cli, ["check", "--report", "-j", "1"])
    assert result.exit_code == 0, result.output
    longest = next(line for line in result.output.splitlines() if "the longest option" in line)
    assert longest.split()[-3:-1] == ["0/1", "(0%)"], longest
