"""An order puzzle's answer as learners read it, and the judge's Python twin.

The readable answer is the reference order as code, each block numbered, with the blocks that may move
marked and where they may go: from the "before" pairs when they describe the accepted orders, else
from the list of accepted orders. `judge_typed` judges a typed order as static/judge.js does (the shared
cases in tests/cases/judge_cases.json hold both to it).
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence
from dataclasses import replace

from quizgen.execution.protocol import JSON
from quizgen.render.lms.question import Question
from quizgen.render.markup import highlight
from quizgen.render.view import CardView

_ARROWS = "\u2195"  # the mark of a block that may move


def readable_answer(
    blocks: Sequence[str],
    before: Sequence[tuple[int, int]] | None,
    orders: Sequence[Sequence[int]],
    accepted: int | None = None,
) -> str:
    """HTML: the blocks in the reference order (as `blocks` are given), numbered, each block that may
    move marked with where it may go (among `orders`, at the written levels), and how many arrangements
    the judge accepts (`accepted`, levels included; else the orders)."""
    n = len(blocks)
    notes = _graph_notes(before, n) if before is not None else _list_notes(orders, n)
    items = []
    for i, code in enumerate(blocks):
        note = notes.get(i)
        if note:
            mark = f'<p class="moves-note"><span aria-hidden="true">{_ARROWS} </span>{html.escape(note)}</p>'
            items.append(f'<li class="moves">{highlight(code)}{mark}</li>')
        else:
            items.append(f"<li>{highlight(code)}</li>")
    count = len({tuple(o) for o in orders})
    total = f'<p class="orders-count">{_total(count, count if accepted is None else accepted)}</p>'
    return f'<ol class="order-answer tex2jax_ignore">{"".join(items)}</ol>{total}'


def line_html(code: str) -> str:
    """An order item's code, highlighted, each of its source lines a span of its own: a long one wraps
    inside its row, between two tokens (a `<wbr>` between each two; a wrapped token reads as two), its
    continuation indented and marked (quiz.css, card.css: `pre.wraps .cl`), never under the row's
    button. The text (newlines included) is the code's, as before."""
    body = highlight(code).removeprefix('<pre class="highlight"><code>').removesuffix("</code></pre>")
    body = body.replace("</span><span", "</span><wbr><span")
    lines = "".join(f'<span class="cl">{line}\n</span>' for line in body.removesuffix("\n").split("\n"))
    return f'<pre class="highlight wraps"><code>{lines}</code></pre>'


def _total(orders: int, accepted: int) -> str:
    """How many arrangements are accepted: "3 accepted orders in all.", with those at other levels
    "53 accepted arrangements in all (1 with every line at its written level)."."""
    if accepted == orders:
        return f"{orders} accepted order{'s' if orders != 1 else ''} in all."
    return f"{accepted} accepted arrangements in all ({orders} with every line at its written level)."


def _graph_notes(before: Sequence[tuple[int, int]], n: int) -> dict[int, str]:
    """Each block whose place is not fixed: the window the pairs leave it ("after line 2 and before 5")."""
    after = [{b for a, b in before if a == i} for i in range(n)]
    for _ in range(n):  # the transitive closure: at most n rounds
        for i in range(n):
            after[i] |= {c for b in after[i] for c in after[b]}
    notes = {}
    for i in range(n):
        first = min(after[i], default=n)
        last = max((p for p in range(n) if i in after[p]), default=-1)
        if last >= i - 1 and first <= i + 1:
            continue  # its neighbours hold it in place
        where = [f"after line {last + 1}"] if last >= 0 else []
        where += [f"before line {first + 1}"] if first < n else []
        notes[i] = "may go anywhere" + (" " + " and ".join(where) if where else "")
    return notes


def _list_notes(orders: Sequence[Sequence[int]], n: int) -> dict[int, str]:
    """Each block that may move alone, the others in the reference order: the places it may take."""
    accepted = {tuple(o) for o in orders}
    notes = {}
    for i in range(n):
        rest = [b for b in range(n) if b != i]
        places = [p for p in range(n) if p != i and (*rest[:p], i, *rest[p:]) in accepted]
        if places:
            sides = [
                ("before", [p + 1 for p in places if p < i]),
                ("after", [p + 1 for p in places if p > i]),
            ]
            notes[i] = "may also go " + " or ".join(
                f"{side} line {_or(lines)}" for side, lines in sides if lines
            )
    return notes


def _or(numbers: list[int]) -> str:
    """2; 2 or 4; 2, 3 or 4."""
    said = [str(n) for n in numbers]
    return ", ".join(said[:-1]) + " or " + said[-1] if len(said) > 1 else said[0]


# -- the judge's twin ------------------------------------------------------------------------------------


def parse_typed(typed: str, labels: Sequence[str], indented: bool) -> tuple[list[str], list[int]]:
    """Typed labels (numbers for labels allowed) and, in an indented puzzle, each one's level (its '>')."""
    text = typed.strip().upper()
    if indented:
        said, levels, level = [], [], 0
        for token in re.findall(r">|[\s,;\-]|\d+|.", text):
            if token == ">":
                level += 1
            elif not token.isspace() and token not in ",;-":
                said.append(_by_number(token, labels))
                levels.append(level)
                level = 0
        return said, levels
    tokens = [t for t in re.split(r"[\s,;>\-]+", text) if t]
    if len(tokens) == 1 and len(tokens[0]) > 1 and re.fullmatch(r"[A-Z]+", tokens[0]):
        tokens = list(tokens[0])
    return [_by_number(t, labels) for t in tokens], [0] * len(tokens)


def _by_number(token: str, labels: Sequence[str]) -> str:
    if token.isdigit() and token not in labels and 0 < int(token) <= len(labels):
        return labels[int(token) - 1]
    return token


def judge_typed(judge: dict[str, JSON], typed: str) -> bool:
    """Whether a typed order is right for a card's judge data (judge.js's judgeOrder(...).ok)."""
    labels: list[str] = judge["labels"]  # type: ignore[assignment]
    items: list[int] = judge["items"]  # type: ignore[assignment]
    levels: list[int] | None = judge.get("levels")  # type: ignore[assignment]
    said, given = parse_typed(typed, labels, levels is not None)
    if not said or any(t not in labels for t in said):
        return False
    positions = [labels.index(t) for t in said]
    lines = [items[at] for at in positions]
    if levels is not None and placed(judge, lines, given):
        return True
    if levels is not None and any(levels[at] != level for at, level in zip(positions, given, strict=True)):
        return False
    return accepts(judge, lines)


def placed(judge: dict[str, JSON], lines: Sequence[int], levels: Sequence[int]) -> bool:
    """Whether the lines at these levels are an accepted placement with a line at another level than
    its own (an indented puzzle's `placements`)."""
    placements: list[list[list[int]]] = judge.get("placements") or []  # type: ignore[assignment]
    said = [[line, level] for line, level in zip(lines, levels, strict=True)]
    return any(order == said for order in placements)


def accepts(judge: dict[str, JSON], lines: Sequence[int]) -> bool:
    """Whether these lines (first first) are an accepted order: by the before-pairs, else by the list."""
    before: list[list[int]] | None = judge.get("before")  # type: ignore[assignment]
    if before is None:
        orders: list[list[int]] = judge["orders"]  # type: ignore[assignment]
        return list(lines) in orders
    items: list[int] = judge["items"]  # type: ignore[assignment]
    n = sum(1 for line in items if line >= 0)
    if sorted(lines) != list(range(n)):
        return False
    place = {line: k for k, line in enumerate(lines)}
    return all(place[a] < place[b] for a, b in before)


def lms_question(kind: object, view: CardView, common: Question) -> Question | None:
    """An ordering question, where an LMS can judge the puzzle: one accepted order of its lines, no
    distractor, no indentation (OrderKind.lms_question)."""
    if len(view.accepted) != 1 or "levels" in view.judge or any(item.line < 0 for item in view.items):
        return None
    by_line = {item.line: item.code for item in view.items}
    return replace(common, type="ordering", order=[by_line[i] for i in view.accepted[0]])
