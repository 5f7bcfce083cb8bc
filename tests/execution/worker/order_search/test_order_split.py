"""One order search split across -j workers (issue 11): the parts share out the candidates, and the
joined result is the one unsplit search's, under the unsplit job's cache key."""

from __future__ import annotations

from pathlib import Path

import pytest

from quizgen import pipeline
from quizgen.execution.pool import Pool
from quizgen.execution.protocol import Outcome, Result
from quizgen.execution.worker.order_search import split as order_split
from quizgen.execution.worker.order_search.split import SPLIT_FROM, Split, candidates, worth_splitting
from tests.support.order_puzzles import job, search

# 7 appends to one list: 7! candidates, no two of which reach the same state; 0, 1, 2 keep their order
LINES = [f"log.append({k})" for k in range(7)]
CHECK = "assert [x for x in log if x < 3] == [0, 1, 2]\n"
PUZZLE = job("log = []\n", LINES, CHECK, distractors=("log.append(-1)",))
# 4 commuting counters and 3 appends: the same states in every part
COMMUTING = ["a += 1", "b += 2", "log.append(0)", "c += 3", "log.append(1)", "d += 4", "log.append(2)"]


def _outcome(result: Result) -> dict[str, object]:
    data = Outcome.from_result(result).to_json()
    data.pop("seconds")
    return data


def test_the_parts_share_out_the_candidates_and_join_to_the_whole(warm_search: None) -> None:
    assert candidates(PUZZLE, 10**6) == 5040 >= SPLIT_FROM
    whole, _ = search(PUZZLE, fast=True)
    assert len(whole["orders"]) == 840
    split = Split({"k": PUZZLE}, 3)
    assert list(split.first) == ["k#part0", "k#part1", "k#part2"]
    found: list[list[int]] = []
    for name, part in split.first.items():
        assert part["type"] == "search" and part.get("part") == [int(name[-1]), 3]
        result, _ = search(part, fast=True)
        assert set(result) == {"ok", "output", "orders", "tried"} and result["tried"] == 5040
        assert result["orders"], name  # each part has some of the accepted orders
        plain, _ = search(part, fast=False)
        assert plain["orders"] == result["orders"]
        done, more = split.receive(name, result)
        found += result["orders"]
    assert done == [] and list(more) == ["k"]
    assert sorted(found) == whole["orders"] and len(found) == len(whole["orders"])  # disjoint parts
    last, _ = search(more["k"], fast=True)
    [(key, joined)] = split.receive("k", last)[0]
    assert key == "k" and _outcome(joined) == _outcome(whole)


def test_a_small_search_or_one_worker_is_not_split() -> None:
    small = job("x = 0\n", ["x += 1", "x *= 2"], "assert x == 2\n")
    assert list(Split({"s": small, "k": PUZZLE}, 2).first) == ["s", "k#part0", "k#part1"]
    assert list(Split({"k": PUZZLE}, 1).first) == ["k"]


def test_a_search_is_split_only_where_its_parts_meet_different_states() -> None:
    """A part cannot merge its states with another's: commuting lines would have every part meet
    nearly every state, and so would a second pass (`repeat`), which starts where the first ends."""
    commuting = job("a = b = c = d = 0\nlog = []\n", COMMUTING, "assert log == [0, 1, 2]\n")
    assert candidates(commuting, 10**6) == 5040 and not worth_splitting(commuting, 2)
    assert worth_splitting(PUZZLE, 2) and worth_splitting(PUZZLE, 3)
    assert not worth_splitting({**PUZZLE, "repeat": 2}, 2)
    looped = job("log = []\n", ["for _ in range(2):", *LINES], CHECK, levels=[0, *[1] * len(LINES)])
    assert not worth_splitting(looped, 2)  # no estimate for whole statements (each part compiles them)
    assert list(Split({"c": commuting, "k": PUZZLE}, 2).first) == ["c", "k#part0", "k#part1"]


def test_a_failing_part_is_the_result_the_unsplit_search_gives(warm_search: None) -> None:
    from quizgen.execution.worker.runner import execute_job

    broken = job("log = []\n", LINES, CHECK.replace("0, 1, 2", "2, 1, 0"))
    split = Split({"k": broken}, 2)
    results = [execute_job(part) for part in split.first.values()]
    assert split.receive("k#part0", results[0]) == ([], {})
    [(key, joined)], more = split.receive("k#part1", results[1])
    assert key == "k" and more == {} and not joined["ok"]
    assert joined["error"] == execute_job(broken)["error"]
    assert joined["error"].startswith("the order as written fails the check:")


def test_one_and_two_workers_give_the_same_result(pool: Pool) -> None:
    assert pool.jobs == 2
    with Pool(1) as single:
        [(_, alone)] = single.run({"k": PUZZLE})
    [(key, split)] = pool.run({"k": PUZZLE})
    assert key == "k" and alone["ok"] and split["ok"]
    assert _outcome(split) == _outcome(alone)
    assert len(alone["orders"]) == 840 and alone["usable_distractors"] == []
    assert alone["feedback"]  # wrong orders next to the one as written, and what they did


CARD = """\
deck: D
cards:
  - id: appends
    kind: order
    setup: |
      log = []
    lines:
{lines}
    check: |
      assert [x for x in log if x < 3] == [0, 1, 2]
"""


def test_a_split_search_is_cached_under_the_card_s_own_key(tmp_path: Path, pool: Pool) -> None:
    cards = tmp_path / "cards"
    cards.mkdir()
    (cards / "d.yaml").write_text(CARD.format(lines="\n".join(f"      - {line}" for line in LINES)))
    options = pipeline.Options(cards_dir=cards, out_dir=tmp_path / "build", pool=pool, jobs=2)
    first = pipeline.check(options)
    assert (first.executed, first.cached) == (1, 0)
    again = pipeline.check(pipeline.Options(cards_dir=cards, out_dir=tmp_path / "build", jobs=1))
    assert (again.executed, again.cached) == (0, 1)
    [before], [after] = (r.decks[0].cards for r in (first, again))
    assert before.outcome is not None and after.outcome is not None
    assert after.outcome.orders == before.outcome.orders and len(before.outcome.orders or []) == 840


ADAM = "torch.optim.adam.Adam"


def _part(orders: list[list[int]], **more: object) -> Result:
    return {"ok": True, "output": "", "orders": orders, "tried": 5040, "seconds": 0.1, **more}


# -- indented puzzles: split by their spaces, where workers would be idle ------------------------------

# A loop and what follows it, each block at any level: the lines' space and each distractor's 8 spaces
# (inserted, and in place of each line). `del seen` can never be used; `total += 0` can.
LOOP = ["for k in range(3):", "total += k", "log.append(total)", "log.append(k)", "seen = list(log)"]
LOOPED = job(
    "total = 0\nlog = []\n",
    [*LOOP, "done = len(seen)"],
    "assert seen == [0, 0, 1, 1, 3, 2] and done == 6\n",
    distractors=("del seen", "total += 0"),
    levels=[0, 1, 1, 1, 0, 0, 0, 0],
)
# the same with one more line after the loop: more than SPLIT_INDENTED_FROM candidates
LONGER = job(
    "total = 0\nlog = []\n",
    [*LOOP, "done = len(seen)", "count = done + 1"],
    "assert seen == [0, 0, 1, 1, 3, 2] and count == 7\n",
    distractors=("del seen", "total += 0"),
    levels=[0, 1, 1, 1, 0, 0, 0, 0, 0],
)


def test_an_indented_search_is_split_only_where_workers_would_be_idle() -> None:
    """A part loses the runs the spaces share, so an indented search is split only when the run has
    fewer jobs than workers (an author's edited card), never in a build with cards to spare."""
    assert worth_splitting(LONGER, 2, idle=True) and not worth_splitting(LONGER, 2)
    assert not worth_splitting(LONGER, 1, idle=True)
    assert not worth_splitting({**LONGER, "distractors": []}, 2, idle=True)  # one space: nothing to share out
    assert not worth_splitting(LOOPED, 2, idle=True)  # below SPLIT_INDENTED_FROM
    assert list(Split({"k": LONGER}, 2).first) == ["k#part0", "k#part1"]
    assert list(Split({"k": LONGER}, 3).first) == ["k#part0", "k#part1", "k#part2"]
    assert list(Split({"k": LONGER, "p": PUZZLE}, 2).first) == ["k", "p#part0", "p#part1"]


def test_the_spaces_are_shared_out_in_runs_of_about_even_weight() -> None:
    from quizgen.execution.worker.order_search.levels import share

    weights = [2, *[1] * 14]  # the shipped loop: the lines, then 2 x 7 distractor spaces
    for parts in (1, 2, 3, 5, 12):
        runs = [share(weights, k, parts) for k in range(parts)]
        assert [i for r in runs for i in r] == list(range(len(weights))), parts  # each once, in order
    assert [list(share(weights, k, 2)) for k in range(2)] == [list(range(7)), list(range(7, 15))]
    assert [list(share([5, 0, 5], k, 2)) for k in range(2)] == [[0], [1, 2]]
    assert [list(share([0, 0], k, 3)) for k in range(3)] == [[], [], [0, 1]]


def test_an_indented_search_split_by_its_spaces_joins_to_the_whole(
    warm_search: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(order_split, "SPLIT_INDENTED_FROM", 100)
    whole, _ = search(LOOPED, fast=True)
    assert len(whole["orders"]) == 1 and len(whole.get("placements", [])) == 5
    assert [d["distractor"] for d in whole["usable_distractors"]] == [1]
    split = Split({"k": LOOPED}, 2)
    assert list(split.first) == ["k#part0", "k#part1"]
    found: list[list[int] | None] = []
    for name, part in split.first.items():
        result, _ = search(part, fast=True)
        assert set(result) == {"ok", "output", "orders", "found", "tried"}
        plain, _ = search(part, fast=False)
        assert (plain["orders"], plain["found"]) == (result["orders"], result["found"])
        found += result["found"]
        done, more = split.receive(name, result)
    # the lines' space is the first part's; the distractors' 2 x 7 spaces are shared out between both
    assert len(found) == 14 and sum(hit is not None for hit in found) >= 1
    assert done == [] and more["k"]["found"] == found and "part" not in more["k"]
    last, _ = search(more["k"], fast=True)
    [(key, joined)] = split.receive("k", last)[0]
    assert key == "k" and _outcome(joined) == _outcome(whole)


def test_one_and_two_workers_give_an_indented_search_the_same_result(
    pool: Pool, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(order_split, "SPLIT_INDENTED_FROM", 100)
    assert worth_splitting(LOOPED, pool.jobs, idle=True)
    with Pool(1) as single:
        [(_, alone)] = single.run({"k": LOOPED})
    [(key, split)] = pool.run({"k": LOOPED})
    assert key == "k" and alone["ok"] and split["ok"]
    assert _outcome(split) == _outcome(alone)
    assert [d["distractor"] for d in alone["usable_distractors"]] == [1]
