"""`order` cards: put a block's lines in order; every order that passes the check is accepted."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import ClassVar, cast

from quizgen.cards.model import Card, Deck, Snippet, VerifiedCard
from quizgen.cards.reader import Reader, has_assert
from quizgen.cards.schema import Field
from quizgen.constants import MIN_ORDER_LINES, REPEAT_MAX, REPEAT_MIN
from quizgen.errors import Location, Problem
from quizgen.execution.protocol import Job, Outcome
from quizgen.kinds.base import CardKind, setup_jobs
from quizgen.render.markup import highlight, markdown
from quizgen.render.present import CardView, OrderItem, shuffled


@dataclass
class OrderCard(Card):
    ask: str = ""
    setup: Snippet | None = None
    lines: list[Snippet] = field(default_factory=list)
    distractors: list[Snippet] = field(default_factory=list)
    repeat: int = 1
    check: Snippet | None = None


class OrderKind(CardKind):
    name = "order"
    title = "Put the lines in order"
    run_field = "check"
    anki_model_id = 1408162270
    anki_fields = (
        "Id", "Question", "Lines", "Judge", "Accepted", "Solution", "Explain", "Output", "Torch", "Setup",
        "Source", "Extra1", "Extra2", "Extra3",
    )  # fmt: skip
    fields: ClassVar[dict[str, Field]] = {
        "ask": Field("markdown", False, "The instruction (Markdown)."),
        "setup": Field("code", False, "Python run before the block (after the deck setup)."),
        "lines": Field("lines", True, "The block's lines in one correct order."),
        "distractors": Field("lines", False, "Lines that must never be usable in a passing order."),
        "repeat": Field("repeat", False, "How many times the block runs (default 1)."),
        "check": Field("code", True, "Asserts run after the block; they decide whether an order is right."),
    }

    def parse(self, reader: Reader, common: Card) -> OrderCard:
        card = OrderCard(**vars(common))
        card.ask = reader.text("ask") or "Put the lines in an order that works."
        card.setup = reader.code("setup")
        card.lines = reader.lines("lines")
        card.distractors = reader.lines("distractors")
        card.check = reader.code("check")
        if reader.has("lines") and len(card.lines) < MIN_ORDER_LINES:
            reader.error(reader.at("lines"), f"an order puzzle needs at least {MIN_ORDER_LINES} lines")
        texts = [s.code.strip() for s in card.lines + card.distractors]
        for snippet, text in zip(card.lines + card.distractors, texts, strict=True):
            if texts.count(text) > 1:
                where = Location(snippet.path, snippet.line, 0, card.id, "lines")
                reader.error(where, f"the line {text!r} appears twice; lines must be distinct")
                break
        card.repeat = reader.integer("repeat", REPEAT_MIN, REPEAT_MAX, default=1)
        if card.check is not None and not has_assert(card.check.code):
            message = "the check needs an assert that can fail: without one every order that runs is accepted"
            reader.error(reader.at("check"), message)
        return card

    def job(self, deck: Deck, card: Card) -> Job | None:
        card = cast(OrderCard, card)
        if card.check is None:
            return None
        return {
            "type": "search",
            "setup": setup_jobs(deck, card.setup),
            "lines": [s.to_job() for s in card.lines],
            "distractors": [s.to_job() for s in card.distractors],
            "repeat": card.repeat,
            "check": card.check.to_job(),
        }

    def verify(self, card: Card, outcome: Outcome) -> list[Problem]:
        card = cast(OrderCard, card)
        problems = []
        items = card.lines + card.distractors
        for hit in outcome.usable_distractors or []:
            line = card.distractors[hit["distractor"]]
            shown = "; ".join(items[i].code.strip() for i in hit["order"])
            where = Location(line.path, line.line, 0, card.id, "distractors")
            message = f"distractor {line.code.strip()!r} can be used: this order passes the check: {shown}"
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

    def warnings(self, card: Card, outcome: Outcome) -> list[Problem]:
        card = cast(OrderCard, card)
        accepted, tried = len(outcome.orders or []), outcome.tried or 0
        if not tried or accepted * 2 <= tried or accepted == math.factorial(len(card.lines)):
            return []
        message = (
            f"{accepted} of the {tried} orders that respect the lines' data dependencies pass the check: "
            "a learner can hardly get it wrong (is the check strict enough?)"
        )
        return [Problem(card.at("check"), message)]

    def placeholders(self, card: Card) -> set[str]:
        return {"orders", *card.cite}

    def cited(self, card: Card, outcome: Outcome) -> dict[str, str]:
        values = super().cited(card, outcome)
        values["orders"] = str(len(outcome.orders or []))
        return values

    def view(self, vc: VerifiedCard, view: CardView) -> None:
        card = cast(OrderCard, vc.card)
        view.prompt_html = markdown(card.ask)
        pieces = [(i, s.code) for i, s in enumerate(card.lines)]
        pieces += [(-1 - k, s.code) for k, s in enumerate(card.distractors)]
        labels = [chr(ord("A") + k) for k in range(len(pieces))]
        view.items = [
            OrderItem(labels[pos], pieces[k][1].strip(), highlight(pieces[k][1].strip()), pieces[k][0])
            for pos, k in enumerate(shuffled(card.id, len(pieces)))
        ]
        view.accepted = (vc.outcome.orders if vc.outcome else None) or []
        view.code = "\n".join(s.code.strip() for s in card.lines)
        view.answer_text = " / ".join(view.accepted_labels)
        view.judge = {
            "labels": [item.label for item in view.items],
            "items": [item.line for item in view.items],
            "orders": [list(order) for order in view.accepted],
        }

    def note_fields(self, vc: VerifiedCard, view: CardView) -> dict[str, str]:
        card = cast(OrderCard, vc.card)
        lines = "".join(
            f'<li><span class="qg-line-label">{item.label}</span>{item.html}</li>' for item in view.items
        )
        first = view.accepted[0] if view.accepted else []
        solution = "\n".join(card.lines[i].code.strip() for i in first)
        return {
            "Question": view.prompt_html,
            "Lines": lines,
            "Accepted": "".join(f"<li>{labels}</li>" for labels in view.accepted_labels),
            "Solution": highlight(solution) if solution else "",
        }

    def setup_shown(self, card: Card) -> list[Snippet]:
        setup = cast(OrderCard, card).setup
        return [setup] if setup else []


KIND = OrderKind()
