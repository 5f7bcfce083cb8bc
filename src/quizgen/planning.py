"""A check's plan: each card's jobs keyed by content and torch, each distinct job once, the cache's
outcomes looked up, and each outcome verified against the cards that wait for it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace

from quizgen import kinds, verify
from quizgen.cards import loader
from quizgen.cards.model import Card, Deck
from quizgen.errors import Problem
from quizgen.execution.cache import Cache, job_key
from quizgen.execution.protocol import Job, Outcome, place

TorchFor = Callable[[Card], "str | None"]  # the torch a card's results are keyed by (None: the run's own)


@dataclass
class Plan:
    """What a check must do: each distinct job once, cached outcomes looked up, the rest to run."""

    keys: dict[str, str] = field(default_factory=dict)  # card id -> job key
    jobs: dict[str, Job] = field(default_factory=dict)  # card id -> its job, in its own file and lines
    cards: dict[str, list[Card]] = field(default_factory=dict)  # cards with identical jobs share one run
    outcomes: dict[str, Outcome] = field(default_factory=dict)
    work: dict[str, Job] = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)
    warnings: list[Problem] = field(default_factory=list)
    parts: dict[str, dict[str, str]] = field(default_factory=dict)  # card id -> its further jobs' keys
    part_jobs: dict[str, dict[str, Job]] = field(default_factory=dict)  # card id -> its further jobs
    done: set[str] = field(default_factory=set)  # ids of the cards verified
    failed: set[str] = field(default_factory=set)  # ... of those with a problem

    def need(self, key: str, job: Job, card: Card) -> None:
        """The card waits for this job's outcome (each distinct job once; `plan_jobs` looks up the cache)."""
        self.cards.setdefault(key, []).append(card)
        self.work.setdefault(key, job)

    def verified(self, key: str, outcome: Outcome) -> None:
        """Record what the cards waiting for this outcome get wrong or look suspicious for (a card with
        further jobs once all of them are done)."""
        self.outcomes[key] = outcome
        for card in self.cards[key]:
            mine = self.outcome_of(card)
            if mine is None or card.id in self.done:
                continue
            self.done.add(card.id)
            found = verify.verify_card(card, mine)
            if card.judged_on:  # its values are that version's: a mismatch names it
                on = f"on torch {card.judged_on}, which the card is judged on: "
                found = [replace(p, message=on + p.message) for p in found]
            self.problems += found
            self.warnings += verify.warnings_for(card, mine)
            if found:
                self.failed.add(card.id)

    def settled(self, key: str) -> bool:
        """Whether every card waiting for this job's outcome is verified and none failed: only then is
        the outcome worth keeping (a proof that raised, a flaky run, is run again next time)."""
        return all(card.id in self.done and card.id not in self.failed for card in self.cards[key])

    def described(self, key: str) -> str:
        """A job as the progress line names it: its card (a split search's part, its whole search's)."""
        cards = self.cards.get(key.partition("#")[0])
        if not cards:
            return "a card"
        where = cards[0].location
        return f"{cards[0].id} ({where.path}:{where.line})"

    def outcome_of(self, card: Card) -> Outcome | None:
        """The card's outcome with its further jobs' (outcome.parts); None until every one is in."""
        outcome = self.outcomes.get(self.keys.get(card.id, ""))
        keys = self.parts.get(card.id, {})
        parts = {name: self.outcomes[key] for name, key in keys.items() if key in self.outcomes}
        if outcome is None or len(parts) < len(keys):
            return None
        if outcome.raised is not None:  # shared and cached by content: place it in this card's lines
            outcome = replace(outcome, placed=place(outcome.raised, self.jobs[card.id]))
        return replace(outcome, parts=parts) if parts else outcome


def plan_jobs(
    decks: list[Deck], cache: Cache, torch: str | None = None, torch_for: TorchFor | None = None
) -> Plan:
    """Each card's jobs keyed for `torch` (None: the installed one), or for the torch `torch_for` gives
    the card (a card judged on another version), with what the cache holds looked up."""
    plan = Plan()
    for deck, card in loader.iter_cards(decks):
        job = kinds.get(card.kind).job(deck, card)
        if job is None:
            continue
        if card.cite:
            job["cite"] = {name: snippet.to_job() for name, snippet in card.cite.items()}
        runs = (torch_for(card) if torch_for is not None else None) or torch
        key = plan.keys[card.id] = job_key(job, runs)
        plan.jobs[card.id] = job
        plan.need(key, job, card)
        for name, part in kinds.get(card.kind).further_jobs(deck, card).items():
            part_key = plan.parts.setdefault(card.id, {})[name] = job_key(part, runs)
            plan.part_jobs.setdefault(card.id, {})[name] = part
            plan.need(part_key, part, card)
    for key, hit in cache.get_many(plan.work).items():  # a few queries, not one per card
        plan.outcomes[key] = hit
        del plan.work[key]
    return plan
