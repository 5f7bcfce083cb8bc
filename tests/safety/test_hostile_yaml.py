"""Hostile YAML: alias bombs, tags, bad bytes and clashes are located errors, found fast and in little memory.

Each case loads in a forked child with a time-out, so a loader that hangs or balloons fails the test
instead of stalling the run.
"""

from __future__ import annotations

import multiprocessing
import time
import tracemalloc
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing.connection import Connection
from pathlib import Path

import pytest

from quizgen.cards.loader import load

MAX_CARD_FILE_BYTES = 1 << 20  # the limits are written out: the messages name them
CPU_SECONDS = 10.0  # the CPU one hostile file may cost the loader (CPU, not wall clock: a busy machine
# cannot fail the test; a bomb that got through would take far more, or hit load_bounded's hang guard)
MEGABYTES = 32
PLAIN = "card files hold strings, numbers, booleans, null, lists and mappings only"
BOMB = "aliases expand to more than 50,000 YAML nodes (the most a card file may have)"
TEXT = "aliases expand to more than 2,097,152 characters of text (the most a card file may have)"
VALUE_CARD = """\
deck: D
cards:
  - id: c
    kind: value
    ask: q
    code: x = 1
    answer_expr: x
"""


@dataclass
class Loaded:
    problems: list[str]  # each as printed, the project folder left out
    seconds: float
    megabytes: float  # the peak Python allocations of the load


def _load_in_child(cards: Path, send: Connection) -> None:
    tracemalloc.start()
    start = time.process_time()
    try:
        _, problems = load(cards)
        found = [str(p).replace(f"{cards}/", "") for p in problems]
    except Exception as exc:  # reported to the test as a problem it does not expect
        found = [f"raised {type(exc).__name__}: {exc}"]
    send.send((found, time.process_time() - start, tracemalloc.get_traced_memory()[1] / 2**20))


def load_bounded(root: Path, timeout: float = 20.0) -> Loaded:
    """The load problems of root/cards, from a child killed if it has not answered within `timeout`."""
    context = multiprocessing.get_context("fork")
    receive, send = context.Pipe(duplex=False)
    child = context.Process(target=_load_in_child, args=(root / "cards", send), daemon=True)
    child.start()
    try:
        if not receive.poll(timeout):
            pytest.fail(f"the loader gave no answer within {timeout} s")
        return Loaded(*receive.recv())
    finally:
        child.kill()
        child.join()


def only_problem(root: Path) -> str:
    loaded = load_bounded(root)
    assert loaded.seconds < CPU_SECONDS, loaded
    assert loaded.megabytes < MEGABYTES, loaded
    assert len(loaded.problems) == 1, loaded.problems
    return loaded.problems[0]


def laughs(indent: str, keyed: bool, levels: int = 9) -> str:
    """A billion laughs: each level anchors nine aliases of the one before, 9**9 zeros in all."""
    item = (lambda i: f"l{i}: ") if keyed else (lambda i: "- ")
    rows = [f"{indent}{item(0)}&l0 [0, 0, 0, 0, 0, 0, 0, 0, 0]"]
    rows += [f"{indent}{item(i)}&l{i} [{', '.join([f'*l{i - 1}'] * 9)}]" for i in range(1, levels)]
    return "\n".join(rows) + "\n"


BIG_TEXT = "deck: D\ns: &s " + "x" * 100_000 + "\n" + VALUE_CARD.removeprefix("deck: D\n")
BIG_TEXT += "    cite: {" + ", ".join(f"c{i}: *s" for i in range(25)) + "}\n"  # 2.5 million characters
ORDER_CARD = "deck: D\ncards:\n  - id: c\n    kind: order\n    check: assert a\n"
REPEATED_CARD = "deck: D\nx: &c {id: c, kind: basic, front: f, back: b}\ncards: [" + "*c, " * 8000 + "*c]\n"


@pytest.mark.parametrize(
    ("text", "where", "message"),
    [
        pytest.param(laughs("", keyed=True) + "deck: D\ncards: [1]\n", "5:1 -> l4", BOMB, id="top-level"),
        pytest.param(
            VALUE_CARD + "    answer:\n" + laughs("      ", False),
            "8:5: card 'c' -> answer",
            BOMB,
            id="answer",
        ),
        pytest.param(
            VALUE_CARD + "    tolerance:\n" + laughs("      ", True),
            "8:5: card 'c' -> tolerance",
            BOMB,
            id="tolerance",
        ),
        pytest.param(
            VALUE_CARD + "    cite:\n" + laughs("      ", True), "8:5: card 'c' -> cite", BOMB, id="cite"
        ),
        pytest.param(
            ORDER_CARD + "    lines:\n" + laughs("      ", False), "6:5: card 'c' -> lines", BOMB, id="lines"
        ),
        pytest.param(REPEATED_CARD, "3:1 -> cards", BOMB, id="one-card-many-times"),
        pytest.param(BIG_TEXT, "9:5: card 'c' -> cite", TEXT, id="a-long-text-many-times"),
        pytest.param(
            VALUE_CARD + "    answer: &r [1, *r]\n", "8:5: card 'c' -> answer", BOMB, id="node-inside-itself"
        ),
    ],
)
def test_an_alias_bomb_anywhere_is_a_located_error(
    project: Callable[..., Path], text: str, where: str, message: str
) -> None:
    assert only_problem(project({"d.yaml": text})) == f"d.yaml:{where}: {message}"


def test_nesting_is_bounded_written_out_or_through_aliases(project: Callable[..., Path]) -> None:
    deep = VALUE_CARD + "    answer: " + "[" * 100 + "]" * 100 + "\n"
    limit = "(the most a card file may have)"
    expected = f"d.yaml:8:74: lists and mappings nested more than 64 deep {limit}"
    assert only_problem(project({"d.yaml": deep})) == expected
    chain = "".join(f"      - &x{i} [{f'*x{i - 1}' if i else 1}]\n" for i in range(70))
    expected = f"d.yaml:8:5: card 'c' -> answer: aliases nest lists and mappings more than 64 deep {limit}"
    assert only_problem(project({"d.yaml": VALUE_CARD + "    answer:\n" + chain})) == expected


BASIC_CARD = "deck: D\ncards:\n  - id: c\n    kind: basic\n    {}\n    back: b\n"
VALUE_CARD_WITHOUT_KIND = (
    "deck: D\ncards:\n  - id: c\n    answer_expr: x\n    {}\n    ask: q\n    code: x = 1\n"
)
VALUE_CARD_AT_5 = VALUE_CARD_WITHOUT_KIND + "    kind: value\n"  # line 5 is the line under test


@pytest.mark.parametrize(
    ("card", "line", "expected"),
    [
        pytest.param(
            BASIC_CARD, 'front: !note "Q"', "5:12: card 'c' -> front: the YAML tag '!note'", id="note"
        ),
        pytest.param(
            VALUE_CARD_AT_5,
            'answer: !!python/object/apply:os.system ["echo hacked"]',
            "5:13: card 'c' -> answer: the YAML tag '!!python/object/apply:os.system'",
            id="python",
        ),
        pytest.param(
            VALUE_CARD_AT_5,
            "answer: !!set {a, b}",
            "5:13: card 'c' -> answer: the YAML tag '!!set'",
            id="set",
        ),
        pytest.param(
            VALUE_CARD_AT_5,
            "answer: [1, !!omap [a: 1]]",
            "5:17: card 'c' -> answer: the YAML tag '!!omap'",
            id="omap",
        ),
        pytest.param(
            VALUE_CARD_AT_5,
            "answer: !!timestamp 2024-01-01",
            "5:13: card 'c' -> answer: the YAML tag '!!timestamp'",
            id="timestamp",
        ),
        pytest.param(
            VALUE_CARD_AT_5,
            "tolerance: {rtol: !x 1}",
            "5:23: card 'c' -> tolerance: the YAML tag '!x'",
            id="tolerance",
        ),
        pytest.param(
            VALUE_CARD_AT_5, "cite: {y: !py x}", "5:15: card 'c' -> cite: the YAML tag '!py'", id="cite"
        ),
        pytest.param(
            BASIC_CARD,
            "front: f\n    tags: [a, !!binary aGk=]",
            "6:15: card 'c' -> tags: the YAML tag '!!binary'",
            id="binary-in-a-list",
        ),
        pytest.param(
            VALUE_CARD_WITHOUT_KIND, "kind: !k value", "5:11: card 'c' -> kind: the YAML tag '!k'", id="kind"
        ),
        pytest.param(BASIC_CARD, "!k front: f", "5:5: card 'c' -> front: the YAML tag '!k'", id="key"),
    ],
)
def test_a_tag_other_than_the_core_ones_is_a_located_error(
    project: Callable[..., Path], card: str, line: str, expected: str
) -> None:
    root = project({"d.yaml": card.format(line)})
    assert load_bounded(root).problems == [f"d.yaml:{expected} is not allowed: {PLAIN}"]


@pytest.mark.parametrize(
    ("written", "expected"),
    [
        ("!!str [a]", "5:12: card 'c' -> front: the YAML tag '!!str' cannot mark a list"),
        ("!!int abc", "5:12: card 'c' -> front: cannot read 'abc' as !!int"),
        ("!!bool maybe", "5:12: card 'c' -> front: cannot read 'maybe' as !!bool"),
        ('!!float ""', "5:12: card 'c' -> front: cannot read '' as !!float"),  # (PyYAML: IndexError)
        ("!!int ''", "5:12: card 'c' -> front: cannot read '' as !!int"),
        ("{[a]: 1}", "5:13: card 'c' -> front: a mapping key is a single value, not a list or mapping"),
    ],
)
def test_core_tags_that_do_not_fit_are_located_errors(
    project: Callable[..., Path], written: str, expected: str
) -> None:
    text = f"deck: D\ncards:\n  - id: c\n    kind: basic\n    front: {written}\n    back: b\n"
    assert load_bounded(project({"d.yaml": text})).problems == [f"d.yaml:{expected}"]


def test_dates_merge_keys_and_equals_signs_are_text(project: Callable[..., Path]) -> None:
    text = (
        "deck: D\ncards:\n  - id: c\n    kind: basic\n    front: 2024-01-01\n    back: <<\n    explain: =\n"
    )
    root = project({"d.yaml": text})
    assert load_bounded(root).problems == []
    [deck], _ = load(root / "cards")
    card = deck.cards[0]
    assert (card.front, card.back, card.explain) == ("2024-01-01", "<<", "=")  # type: ignore[attr-defined]


def test_invalid_utf8_is_located_at_its_line_and_column(tmp_path: Path) -> None:
    (tmp_path / "cards").mkdir()
    text = 'deck: D\ncards:\n  - id: c\n    kind: basic\n    front: "café \xff"\n    back: b\n'
    (tmp_path / "cards" / "d.yaml").write_bytes(text.encode("utf-8").replace(b"\xc3\xbf", b"\xff"))
    expected = "d.yaml:5:18: not UTF-8 (invalid start byte: byte 0xff); card files are UTF-8"
    assert only_problem(tmp_path) == expected


def test_a_control_character_is_located_at_its_line_and_column(project: Callable[..., Path]) -> None:
    root = project(
        {"d.yaml": "deck: D\ncards:\n  - id: c\n    kind: basic\n    front: café \x07\n    back: b\n"}
    )
    assert only_problem(root) == "d.yaml:5:17: invalid YAML: control character U+0007"


def test_a_file_too_large_is_located_where_it_passes_the_limit(tmp_path: Path) -> None:
    (tmp_path / "cards").mkdir()
    card = "  - {id: c, kind: basic, front: f, back: b}\n"  # 45 bytes
    text = "deck: D\ncards:\n" + card * (MAX_CARD_FILE_BYTES // len(card) + 1)
    (tmp_path / "cards" / "d.yaml").write_text(text)
    line = (MAX_CARD_FILE_BYTES - 15) // len(card) + 3
    col = (MAX_CARD_FILE_BYTES - 15) % len(card) + 1
    expected = (
        f"d.yaml:{line}:{col}: the file is {len(text):,} bytes, past the 1,048,576 a card file may have"
    )
    assert only_problem(tmp_path) == expected


def test_code_nested_too_deeply_for_python_is_a_located_error(project: Callable[..., Path]) -> None:
    root = project(
        {"d.yaml": VALUE_CARD.replace("answer_expr: x", "answer_expr: " + "+".join(["1"] * 100_000))}
    )
    assert load_bounded(root).problems == [
        "d.yaml:7: card 'c' -> answer_expr: Python cannot compile this: it is nested too deeply"
    ]


def test_an_order_puzzle_reads_a_bounded_number_of_lines(project: Callable[..., Path]) -> None:
    lines = "".join(f"      - a{i} = {i}\n" for i in range(1_000))
    root = project(
        {"d.yaml": "deck: D\ncards:\n  - id: c\n    kind: order\n    check: assert a0\n    lines:\n" + lines}
    )
    expected = "d.yaml:7:7: card 'c' -> lines: 'lines' has 1000 lines, more than 100"
    assert only_problem(root) == expected


def test_a_deck_name_clash_names_both_lines(project: Callable[..., Path]) -> None:
    card = "cards:\n  - id: {id}\n    kind: basic\n    front: f\n    back: b\n"
    root = project(
        {
            "a.yaml": "deck: Same::Deck\n" + card.format(id="a"),
            "b.yaml": "# b\ndeck: same::deck\n" + card.format(id="b"),
        }
    )
    expected = "b.yaml:2:7 -> deck: duplicate deck name 'same::deck' (first defined at a.yaml:1:7 -> deck)"
    assert load_bounded(root).problems == [expected]


def test_an_id_that_is_not_a_single_value_is_refused(project: Callable[..., Path]) -> None:
    root = project({"d.yaml": "deck: D\ncards:\n  - id: [a]\n    kind: basic\n    front: f\n    back: b\n"})
    expected = "d.yaml:3:9 -> id: an id is a slug of lowercase letters, digits and single dashes"
    assert load_bounded(root).problems == [expected]
