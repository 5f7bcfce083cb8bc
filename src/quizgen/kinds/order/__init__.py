"""`order` cards: put a block's lines in order; every order that passes the check is accepted.

A line may be a block of several lines; with `indent: true` each block's indentation is part of the
answer and the candidates are the programs the blocks make, joined with their indentation."""

from __future__ import annotations

import math
import re
import textwrap
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import ClassVar, cast

from quizgen.cards import syntax
from quizgen.cards.fields import Field
from quizgen.cards.model import Card, Deck, Snippet, VerifiedCard
from quizgen.cards.reader import Reader, has_assert
from quizgen.constants import MAX_CANDIDATES, MIN_ORDER_LINES, REPEAT_MAX, REPEAT_MIN
from quizgen.errors import Location, Problem
from quizgen.execution.protocol import JSON, Feedback, Job, Outcome, SearchJob
from quizgen.execution.worker.order_search.program import Program
from quizgen.kinds.base import CardKind, setup_jobs
from quizgen.kinds.order import accepted as order_accepted
from quizgen.kinds.order.accepted import MAX_ACCEPTED, Arrangement, Puzzle
from quizgen.kinds.order.answer import line_html, lms_question, readable_answer
from quizgen.render.markup import highlight, markdown
from quizgen.render.view import CardView, OrderItem, shuffled

MAX_GRAPH_LINES = 14  # more lines and telling whether the accepted orders form a graph takes too long


@dataclass
class OrderCard(Card):
    ask: str = ""
    setup: Snippet | None = None
    lines: list[Snippet] = field(default_factory=list)
    distractors: list[Snippet] = field(default_factory=list)
    repeat: int = 1
    check: Snippet | None = None
    indent: int = 0  # spaces per level when indentation is part of the answer, else 0
    levels: list[int] = field(default_factory=list)  # with indent: each block's level (lines, distractors)
    max_accepted: int = MAX_ACCEPTED  # accepted arrangements before check warns


class OrderKind(CardKind[OrderCard]):
    name = "order"
    title = "Put the lines in order"
    run_field = "check"
    anki_model_id = 1408162270
    quiz_scripts: ClassVar[dict[str, str]] = {"order.js": "layout.js"}  # the moves, pure (node tests them)
    anki_fields = (
        "Id", "Question", "Lines", "Judge", "Accepted", "Solution", "Explain", "Output", "Torch", "Setup",
        "Source", "Extra1", "Extra2", "Extra3",
    )  # fmt: skip
    fields: ClassVar[dict[str, Field]] = {
        "ask": Field("markdown", False, "The instruction (Markdown)."),
        "setup": Field("code", False, "Python run before the block (after the deck setup)."),
        "lines": Field("lines", True, "The lines (or blocks of lines) in one correct order."),
        "distractors": Field("lines", False, "Lines that must never be usable in a passing order."),
        "indent": Field("bool", False, "Each block's indentation is part of the answer (default false)."),
        "repeat": Field("repeat", False, "How many times the block runs (default 1)."),
        "check": Field("code", True, "Asserts run after the block; they decide whether an order is right."),
        "max_accepted": Field(
            "count",
            False,
            f"Accepted arrangements before `quizgen check` warns that the check is weak (default "
            f"{MAX_ACCEPTED}).",
            {"type": "integer", "minimum": 1, "maximum": MAX_CANDIDATES},
        ),
    }

    def parse(self, reader: Reader, common: Card) -> OrderCard:
        card = OrderCard(**vars(common))
        card.ask = reader.text("ask") or "Put the lines in an order that works."
        card.setup = reader.code("setup")
        if reader.boolean("indent"):
            _read_indented(reader, card)
        else:
            card.lines = reader.lines("lines")
            card.distractors = reader.lines("distractors")
        card.check = reader.code("check")
        if reader.has("lines") and len(card.lines) < MIN_ORDER_LINES:
            message = (
                f"an order puzzle needs at least {MIN_ORDER_LINES} lines (a block of several counts as one)"
            )
            reader.error(reader.at("lines"), message)
        texts = [_shown(s) for s in card.lines + card.distractors]
        for snippet, text in zip(card.lines + card.distractors, texts, strict=True):
            if texts.count(text) > 1:
                where = Location(snippet.path, snippet.line, 0, card.id, "lines")
                reader.error(where, f"the line {text!r} appears twice; lines must be distinct")
                break
        card.repeat = reader.integer("repeat", REPEAT_MIN, REPEAT_MAX, default=1)
        card.max_accepted = reader.integer("max_accepted", 1, MAX_CANDIDATES, MAX_ACCEPTED)
        if card.check is not None and not has_assert(card.check.code):
            message = "the check needs an assert that can fail: without one every order that runs is accepted"
            reader.error(reader.at("check"), message)
        return card

    def job(self, deck: Deck, card: OrderCard) -> Job | None:
        if card.check is None:
            return None
        job: SearchJob = {
            "type": "search",
            "setup": setup_jobs(deck, card.setup),
            "lines": [s.to_job() for s in card.lines],
            "distractors": [s.to_job() for s in card.distractors],
            "repeat": card.repeat,
            "check": card.check.to_job(),
        }
        if card.indent:
            job["indent"], job["levels"] = card.indent, card.levels
        return job

    def verify(self, card: OrderCard, outcome: Outcome) -> list[Problem]:
        problems = []
        items = card.lines + card.distractors
        for hit in outcome.usable_distractors or []:
            line = card.distractors[hit["distractor"]]
            levels = hit.get("levels") or [0] * len(hit["order"])
            shown = "; ".join(
                _shown(items[i]) + (f" (at level {level})" if card.indent else "")
                for i, level in zip(hit["order"], levels, strict=True)
            )
            where = Location(line.path, line.line, 0, card.id, "distractors")
            message = f"distractor {_shown(line)!r} can be used: this order passes the check: {shown}"
            problems.append(Problem(where, message))
        if not outcome.orders:
            problems.append(Problem(card.at("lines"), "no order of the lines passes the check"))
        elif len(outcome.orders) == math.factorial(len(card.lines)):
            message = (
                f"no order is wrong: the puzzle teaches nothing (all {len(outcome.orders)} orders of the "
                "lines pass the check; assert what only the right order achieves)"
            )
            problems.append(Problem(card.at("check"), message))
        return problems

    def warnings(self, card: OrderCard, outcome: Outcome) -> list[Problem]:
        puzzle = _puzzle(card)
        weak = order_accepted.weak(puzzle, _accepted(card, outcome), card.max_accepted)
        found = [Problem(card.location, said) for said in weak]
        accepted, tried = len(outcome.orders or []), outcome.tried or 0
        if not tried or accepted * 2 <= tried or accepted == math.factorial(len(card.lines)):
            return found
        message = (
            f"{accepted} of the {tried} orders that respect the lines' data dependencies pass the check: "
            "a learner can hardly get it wrong (is the check strict enough?)"
        )
        return [*found, Problem(card.at("check"), message)]

    def placeholders(self, card: OrderCard) -> set[str]:
        return {"orders", *card.cite}

    def cited(self, card: OrderCard, outcome: Outcome) -> dict[str, str]:
        values = super().cited(card, outcome)
        # what the judge accepts, levels included
        values["orders"] = str(len(_accepted(card, outcome)))
        return values

    def torch_answer(self, card: OrderCard, outcome: Outcome) -> str:
        """The accepted orders, each as its lines' numbers from 1 as written."""
        return " / ".join(" ".join(str(i + 1) for i in order) for order in outcome.orders or [])

    def accepted(self, card: OrderCard, outcome: Outcome | None) -> list[str]:
        return order_accepted.listing(_puzzle(card), _accepted(card, outcome), card.max_accepted)

    def published(self, card: OrderCard, outcome: dict[str, object]) -> dict[str, object]:
        """With before-pairs that allow exactly the accepted orders, those pairs instead of the list."""
        orders = cast("list[list[int]] | None", outcome.get("orders"))
        before = partial_order(orders or [], len(card.lines))
        if before is None:
            return outcome
        return {**{k: v for k, v in outcome.items() if k != "orders"}, "before": [list(p) for p in before]}

    def view(self, vc: VerifiedCard, view: CardView) -> None:
        card = self.card_of(vc)
        view.prompt_html = markdown(card.ask)
        pieces = [(i, _shown(s)) for i, s in enumerate(card.lines)]
        pieces += [(-1 - k, _shown(s)) for k, s in enumerate(card.distractors)]
        labels = [chr(ord("A") + k) for k in range(len(pieces))]
        view.items = [
            OrderItem(labels[pos], pieces[k][1], line_html(pieces[k][1]), pieces[k][0])
            for pos, k in enumerate(shuffled(card.id, len(pieces)))
        ]
        view.accepted = (vc.outcome.orders if vc.outcome else None) or []
        view.code = _program(card, range(len(card.lines)))
        view.answer_text = " / ".join(view.accepted_labels)
        view.judge = {
            "labels": [item.label for item in view.items],
            "items": [item.line for item in view.items],
            "attempts": view.attempts,
        }
        # When before-pairs describe the accepted orders exactly, they are shipped (and judged by) alone.
        before = partial_order(view.accepted, len(card.lines))
        if before is not None:
            view.judge["before"] = [[a, b] for a, b in before]
        else:
            view.judge["orders"] = [list(order) for order in view.accepted]
        if card.indent:
            view.judge["levels"] = [card.levels[_block(card, item.line)] for item in view.items]
            placements = (vc.outcome.placements if vc.outcome else None) or []
            if placements:  # accepted with a line at another level than its own
                view.judge["placements"] = [[list(pair) for pair in order] for order in placements]
        blocks = [_program(card, [i]) for i in range(len(card.lines))]
        view.back_html = readable_answer(blocks, before, view.accepted, len(_accepted(card, vc.outcome)))
        feedback: dict[str, JSON] = {}
        for entry in (vc.outcome.feedback if vc.outcome else None) or []:
            key = _feedback_key(card, entry)
            if key is not None:
                feedback.setdefault(key, feedback_message(card, entry))
        view.judge["feedback"] = feedback

    lms_question = lms_question  # (order_answer.py: the module is at its size limit)

    def note_fields(self, vc: VerifiedCard, view: CardView) -> dict[str, str]:
        card = self.card_of(vc)
        lines = "".join(
            f'<li data-item="{k}"><span class="qg-line-label">{item.label}</span>{item.html}</li>'
            for k, item in enumerate(view.items)
        )
        solution = _program(card, view.accepted[0]) if view.accepted else ""
        return {
            "Question": view.prompt_html,
            "Lines": lines,
            "Accepted": view.back_html,
            "Solution": highlight(solution) if solution else "",
        }

    def setup_shown(self, card: OrderCard) -> list[Snippet]:
        setup = card.setup
        return [setup] if setup else []


KIND = OrderKind()


def _shown(snippet: Snippet) -> str:
    """A block as learners see it: its own lines, without the indentation around them."""
    return textwrap.dedent(snippet.code).strip("\n").rstrip()


def _block(card: OrderCard, line: int) -> int:
    """The block index (lines, then distractors) of an item's `line` (-1 - k for distractor k)."""
    return line if line >= 0 else len(card.lines) - 1 - line


def _accepted(card: OrderCard, outcome: Outcome | None) -> list[Arrangement]:
    """Every arrangement the judge accepts, levels included."""
    return order_accepted.arrangements(outcome, _puzzle(card).levels)


def _puzzle(card: OrderCard) -> Puzzle:
    levels = card.levels[: len(card.lines)] if card.indent else [0] * len(card.lines)
    return Puzzle([_shown(s) for s in card.lines], levels, card.indent or 4, [_code(s) for s in card.lines])


def _program(card: OrderCard, order: Sequence[int]) -> str:
    """The blocks in this order, with their indentation when it is part of the answer."""
    unit = card.indent or 4
    return "\n".join(
        textwrap.indent(_shown(card.lines[i]), " " * unit * (card.levels[i] if card.indent else 0))
        for i in order
    )


# -- indentation -----------------------------------------------------------------------------------------


def _read_indented(reader: Reader, card: OrderCard) -> None:
    """Blocks whose first line's indentation is their level, in units of the indentations' greatest
    common divisor (4 spaces when nothing is indented; the most used one when they share none), and
    the program as written must compile."""
    blocks = {key: reader.blocks(key) for key in ("lines", "distractors")}
    widths = {key: [_leading(reader, s, key) for s in found] for key, found in blocks.items()}
    used = Counter(w for found in widths.values() for w in found if w)
    unit = math.gcd(*used) or 4
    if unit == 1:
        unit = max(used, key=lambda w: (used[w], w))
    card.indent = unit
    for key, found in blocks.items():
        kept = []
        for snippet, width in zip(found, widths[key], strict=True):
            if width % unit:
                where = Location(snippet.path, snippet.line, 0, card.id, key)
                reader.error(where, f"indented {width} spaces, not a multiple of this puzzle's {unit}")
                continue
            kept.append(Snippet(_dedent_first(snippet.code, width), snippet.path, snippet.line))
            card.levels.append(width // unit)
        setattr(card, key, kept)
    program = Program(tuple(s.code for s in card.lines), len(card.lines), unit, tuple(card.levels))
    source, places = program.source(tuple(range(len(card.lines))))
    try:
        syntax.check(source, "<puzzle>", "exec")
    except SyntaxError as exc:
        block, k = places[min(max((exc.lineno or 1) - 1, 0), len(places) - 1)] if places else (0, 0)
        at = card.lines[block] if card.lines else None
        location = Location(at.path, at.line + k, 0, card.id, "lines") if at else reader.at("lines")
        reader.error(location, f"the lines as written, with their indentation, do not compile: {exc.msg}")


def _leading(reader: Reader, snippet: Snippet, key: str) -> int:
    first = snippet.code.split("\n", 1)[0]
    spaces = len(first) - len(first.lstrip(" "))
    if first[spaces : spaces + 1] == "\t":
        reader.error(
            Location(snippet.path, snippet.line, 0, reader.card, key), "indent with spaces, not tabs"
        )
    return spaces


def _dedent_first(code: str, width: int) -> str:
    """The block without its first line's indentation (its other lines keep theirs relative to it)."""
    return "\n".join(
        line[width:] if line[:width].strip() == "" else line.lstrip() for line in code.split("\n")
    )


# -- what learners are shown: the answer as a graph, and what a mistake does ----------------------------


def partial_order(orders: Sequence[Sequence[int]], n: int) -> list[tuple[int, int]] | None:
    """The fewest "a before b" pairs whose orders (linear extensions) are exactly `orders`, if there are.

    The pairs are those every accepted order keeps; the accepted orders are exactly the orders allowed
    by them when there are as many of those as accepted orders. Returned as the transitive reduction
    (no pair implied by two others), sorted; None when no set of pairs describes the orders.
    """
    distinct = {tuple(o) for o in orders}
    if not distinct or n > MAX_GRAPH_LINES or any(sorted(o) != list(range(n)) for o in distinct):
        return None
    places = [{b: k for k, b in enumerate(o)} for o in distinct]
    pairs = {(a, b) for a in range(n) for b in range(n) if a != b and all(p[a] < p[b] for p in places)}
    needs = [sum(1 << a for a, b2 in pairs if b2 == b) for b in range(n)]
    ways = [0] * (1 << n)
    ways[0] = 1
    for mask in range(1 << n):
        if ways[mask]:
            for b in range(n):
                if not mask >> b & 1 and mask & needs[b] == needs[b]:
                    ways[mask | 1 << b] += ways[mask]
    if ways[(1 << n) - 1] != len(distinct):
        return None
    implied = {(a, b) for a, c in pairs for c2, b in pairs if c == c2}
    return sorted(pairs - implied)


def _feedback_key(card: OrderCard, entry: Feedback) -> str | None:
    """The judge's key for a mistake: an order of items' lines ("1 0 2"), or a distractor's alone ("-1").
    With indentation, the whole arrangement it was run as, each item with its level ("0@0 -1@2 2@1"):
    what one arrangement does says nothing of another (None: an entry without its levels)."""
    n = len(card.lines)
    if card.indent:
        levels = entry.get("levels")
        if levels is None or len(levels) != len(entry["order"]):
            return None
        items = [b if b < n else n - 1 - b for b in entry["order"]]
        return " ".join(f"{item}@{level}" for item, level in zip(items, levels, strict=True))
    if "distractor" in entry:
        return str(-1 - entry["distractor"])
    return " ".join(str(b) for b in entry["order"])


def feedback_message(card: OrderCard, entry: Feedback) -> str:
    """What running a mistake did, in a sentence: "With `b` before `a`: `a` raises NameError: ..."."""
    blocks = card.lines + card.distractors
    order = entry["order"]
    if "distractor" in entry:
        spot = order.index(len(card.lines) + entry["distractor"])
        what = f"With {_code(blocks[order[spot]])} instead of {_code(card.lines[spot])}"
    else:
        k = next(i for i, b in enumerate(order) if b != i)
        what = f"With {_code(card.lines[order[k]])} before {_code(card.lines[k])}"
    exception = entry["exception"]
    if exception.startswith(("SyntaxError", "IndentationError", "TabError")):
        return f"{what}, the program does not compile: {exception}"
    if entry["block"] >= 0:
        return f"{what}: {_code(blocks[entry['block']])} raises {exception}"
    values = ", ".join(f"{name} = {value}" for name, value in entry["values"].items())
    said = exception.removeprefix("AssertionError").removeprefix(": ")
    failed = said or f"`{entry['text']}`"
    return f"{what}, the check fails: {failed}" + (f" ({values})" if values else "")


def _code(snippet: Snippet) -> str:
    """A snippet's first line as a Markdown code span, fenced with more backticks than it holds."""
    text = _one_line(snippet)
    fence = "`" * (max((len(run) for run in re.findall("`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _one_line(snippet: Snippet) -> str:
    lines = _shown(snippet).split("\n")
    return lines[0] + (" ..." if len(lines) > 1 else "")
