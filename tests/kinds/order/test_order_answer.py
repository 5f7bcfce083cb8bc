"""An order puzzle's answer as learners read it (kinds/order/answer.py): the reference order as code, the
blocks that may move marked with where they may go, from the before-pairs or from the list of orders."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

from quizgen import pipeline
from quizgen.kinds.order import partial_order
from quizgen.kinds.order.answer import readable_answer
from tests.support.order_decks import DECK

BLOCKS = ["a = 1", "b = 2", "c = a + b", "print(c)"]


def notes(answer: str) -> list[tuple[str, str]]:
    """(code, note) of each numbered block; "" for a block that stays where it is."""
    found = []
    for item in re.findall(r"<li[^>]*>(.*?)</li>", answer, re.S):
        code = re.sub(r"<[^>]+>", "", re.search(r"<pre.*?</pre>", item, re.S).group(0)).strip()  # type: ignore[union-attr]
        note = re.search(r'<p class="moves-note">.*?</span>(.*?)</p>', item)
        found.append((code, note.group(1) if note else ""))
    return found


def test_from_the_pairs_each_movable_block_gets_its_window() -> None:
    orders = [[0, 1, 2, 3], [1, 0, 2, 3]]
    before = partial_order(orders, 4)
    assert before == [(0, 2), (1, 2), (2, 3)]
    answer = readable_answer(BLOCKS, before, orders)
    assert notes(answer) == [
        ("a = 1", "may go anywhere before line 3"),
        ("b = 2", "may go anywhere before line 3"),
        ("c = a + b", ""),
        ("print(c)", ""),
    ]
    assert answer.count('<li class="moves">') == 2
    assert answer.endswith('<p class="orders-count">2 accepted orders in all.</p>')


def test_from_the_pairs_a_block_between_two_others() -> None:
    # 1 must come after 0, 3 after 1 and 2; 2 is free of 0 and 1: it may go anywhere before line 4.
    orders = [[0, 1, 2, 3], [0, 2, 1, 3], [2, 0, 1, 3]]
    before = partial_order(orders, 4)
    assert before == [(0, 1), (1, 3), (2, 3)]
    assert notes(readable_answer(BLOCKS, before, orders))[2] == ("c = a + b", "may go anywhere before line 4")


def test_from_a_list_of_orders_the_places_a_block_may_take_alone() -> None:
    orders = [[0, 1, 2, 3], [1, 0, 2, 3], [1, 2, 3, 0]]  # no set of pairs allows exactly these
    assert partial_order(orders, 4) is None
    assert notes(readable_answer(BLOCKS, None, orders)) == [
        ("a = 1", "may also go after line 2 or 4"),
        ("b = 2", "may also go before line 1"),
        ("c = a + b", ""),
        ("print(c)", ""),
    ]


def test_code_is_escaped_and_indentation_kept() -> None:
    answer = readable_answer(["for x in xs:", "    total += x", "print('<b>')"], None, [[0, 1, 2]])
    assert "&lt;b&gt;" in answer and "<b>" not in answer
    assert notes(answer)[1] == ("total += x", "")
    assert "<code>    <span" in answer  # the block's level, as spaces before its code
    assert answer.endswith("1 accepted order in all.</p>")


def test_cards_json_ships_the_pairs_instead_of_the_orders_they_allow(
    project: Callable[[dict[str, str]], Path], options: Callable[..., pipeline.Options]
) -> None:
    listed = (
        "deck: List\ncards:\n  - id: listed\n    kind: order\n    setup: |\n      a = []\n    lines:\n"
        "      - a.append(1)\n      - a.append(2)\n      - a.append(3)\n    check: |\n"
        "      assert a not in ([2, 1, 3], [3, 2, 1])\n"
    )  # 4 of the 6 orders: no set of pairs allows exactly those
    root = project({"orders.yaml": DECK, "list.yaml": listed})
    pipeline.build(options(root))
    data = json.loads((root / "build" / "cards.json").read_text(encoding="utf-8"))
    outcomes = {c["id"]: c["outcome"] for d in data["decks"] for c in d["cards"]}
    assert outcomes["graph-sum"]["before"] == [[0, 2], [1, 2], [2, 3]]
    assert "orders" not in outcomes["graph-sum"]
    assert outcomes["sum-positives"]["before"] == [[0, 1], [1, 2], [2, 3], [3, 4]]  # one order: a chain
    assert outcomes["listed"]["orders"] == [[0, 1, 2], [0, 2, 1], [1, 2, 0], [2, 0, 1]]
    assert "before" not in outcomes["listed"]
