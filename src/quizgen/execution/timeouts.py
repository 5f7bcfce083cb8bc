"""How long a card's snippets may run, and what a card that ran out of time is told.

The user's --timeout decides for every card; else a card's own `timeout:`, else quizgen.toml's (else
DEFAULT_TIMEOUT). The card file is not trusted to lift the user's ceiling (--max-timeout), as
quizgen.toml is not (project/settings.py).
"""

from __future__ import annotations

import re
from dataclasses import replace

from quizgen.cards.model import Card, Deck
from quizgen.constants import DEFAULT_TIMEOUT, MAX_TIMEOUT_ENV
from quizgen.errors import Problem
from quizgen.execution.protocol import Job, Outcome, job_snippets
from quizgen.execution.worker import stuck

_REACHED = re.compile(r"it was at (.+):(\d+) when stopped")


def limit(card: Card, given: float | None, project: float) -> float:
    """The seconds the card's snippets may run (an order search gets ORDER_TIMEOUT_FACTOR times this)."""
    return given or card.timeout or project


def over_ceiling(decks: list[Deck], ceiling: float) -> list[Problem]:
    """Each card whose own timeout passes the user's ceiling, taken out of its deck (it does not run)."""
    problems = []
    for deck in decks:
        for card in [c for c in deck.cards if c.timeout and c.timeout > ceiling]:
            problems.append(
                Problem(
                    card.at("timeout"),
                    f"timeout {card.timeout:g} is over the {ceiling:g} seconds this machine allows a card; "
                    f"to allow it, run with --max-timeout {card.timeout:g} (or set {MAX_TIMEOUT_ENV}), or "
                    "give --timeout yourself",
                )
            )
            deck.cards.remove(card)
    return problems


def explained(
    outcome: Outcome, job: Job, card: Card, given: float | None, project: float, ceiling: float
) -> Outcome:
    """The outcome of a job stopped at its timeout, told the line it had reached and how to give it
    longer; any other outcome as it is."""
    if outcome.ok or not stuck.is_timeout(outcome.error or ""):
        return outcome
    lines = [outcome.error or ""]
    if (reached := _REACHED.search(outcome.error or "")) is not None:
        lines += _source_line(job, reached[1], int(reached[2]))
    seconds = limit(card, given, project)
    more = f"{seconds * 2:g}"
    if given:
        lines.append(f"the limit is --timeout {given:g}: give a larger one (--timeout {more})")
    elif card.timeout:
        lines.append(
            f"the limit is the card's `timeout: {seconds:g}`: raise it (at most --max-timeout, "
            f"{ceiling:g} s), or run with --timeout {more}"
        )
    else:
        source = (
            f"quizgen.toml's timeout ({seconds:g} s)"
            if seconds != DEFAULT_TIMEOUT
            else f"the default ({seconds:g} s)"
        )
        lines.append(
            f"the limit is {source}: to give it longer, write `timeout: {more}` on the card (at most "
            f"--max-timeout, {ceiling:g} s), set `timeout = {more}` under [defaults] in quizgen.toml, or run "
            f"with --timeout {more}"
        )
    return replace(outcome, error="\n".join(lines))


def _source_line(job: Job, path: str, line: int) -> list[str]:
    """The text of a line of the job's snippets, as a list of one (none when it is not theirs)."""
    for snippet in job_snippets(job):
        at = line - int(snippet["line"])
        code = snippet["code"].split("\n")
        if snippet["path"] == path and 0 <= at < len(code) and code[at].strip():
            return [f"{line} | {code[at].strip()}"]
    return []
