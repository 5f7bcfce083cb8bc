"""load -> execute -> verify -> render, with no click in sight."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from quizgen import loader, verify
from quizgen.cache import Cache, job_key
from quizgen.errors import CardErrors, Problem
from quizgen.execute import DEFAULT_MEMORY, DEFAULT_TIMEOUT, Pool, execute, job_for
from quizgen.model import Outcome, VerifiedCard, VerifiedDeck


@dataclass
class Options:
    cards_dir: Path = Path("cards")
    out_dir: Path = Path("build")
    jobs: int = field(default_factory=lambda: os.cpu_count() or 1)
    fail_fast: bool = False
    use_cache: bool = True
    timeout: float = DEFAULT_TIMEOUT
    memory: int = DEFAULT_MEMORY
    progress: Callable[[int, int], None] | None = None
    pool: Pool | None = None  # a warm worker pool to reuse across runs (watch mode, tests)


@dataclass
class Report:
    decks: list[VerifiedDeck]
    executed: int = 0
    cached: int = 0
    seconds: float = 0.0
    written: list[Path] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def cards(self) -> int:
        return sum(len(d.cards) for d in self.decks)


def check(options: Options) -> Report:
    """Load, execute and verify every card; raise CardErrors listing every card that lies."""
    start = time.perf_counter()
    decks = loader.load_project(options.cards_dir)
    cache = Cache(options.out_dir / ".cache", enabled=options.use_cache)
    keys: dict[str, str] = {}
    outcomes: dict[str, Outcome] = {}
    work: dict[str, dict] = {}
    cards_by_key: dict[str, list] = {}  # cards with identical jobs share one execution
    for deck, card in loader.iter_cards(decks):
        job = job_for(deck, card)
        if job is None:
            continue
        key = keys[card.id] = job_key(job)
        cards_by_key.setdefault(key, []).append(card)
        if key in outcomes or key in work:
            continue
        hit = cache.get(key)
        if hit is not None:
            outcomes[key] = hit
        else:
            work[key] = job

    problems: list[Problem] = []
    for key, outcome in outcomes.items():
        for card in cards_by_key[key]:
            problems += verify.verify_card(card, outcome)
    done = 0

    def on_result(key: str, outcome: Outcome) -> bool:
        nonlocal done
        done += 1
        if options.progress:
            options.progress(done, len(work))
        cache.put(key, outcome)
        for card in cards_by_key[key]:
            problems.extend(verify.verify_card(card, outcome))
        return not (options.fail_fast and problems)

    if not (options.fail_fast and problems):
        outcomes.update(
            execute(
                work,
                jobs=options.jobs,
                timeout=options.timeout,
                memory=options.memory,
                on_result=on_result,
                pool=options.pool,
            )
        )
    if problems:
        raise CardErrors(_in_source_order(problems))
    verified = [
        VerifiedDeck(deck, [VerifiedCard(c, outcomes.get(keys.get(c.id, ""))) for c in deck.cards])
        for deck in decks
    ]
    return Report(
        verified,
        executed=len(work),
        cached=len(outcomes) - len(work),
        seconds=time.perf_counter() - start,
    )


def _in_source_order(problems: list[Problem]) -> list[Problem]:
    return sorted(problems, key=lambda p: (p.location.path, p.location.line, p.location.col))


def build(options: Options) -> Report:
    """Check, then write every output; an output is replaced only once it is complete."""
    report = check(options)
    from quizgen import output

    report.written += output.write_cards_json(report.decks, options.out_dir)
    report.written += output.write_schema(options.out_dir)  # for `# yaml-language-server: $schema=`
    from quizgen import anki

    anki.write(report, options)  # build/anki/*.apkg and the lock beside the cards
    from quizgen import quiz

    # build/quiz/: the HTML quiz; the project's templates/ (beside cards/) overrides the packaged ones
    report.written += quiz.write_quiz(report.decks, options.out_dir, options.cards_dir.parent / "templates")
    return report


def progress_printer() -> Callable[[int, int], None] | None:
    """A one-line progress display on stderr, for terminals only."""
    if not sys.stderr.isatty():
        return None
    start = time.perf_counter()

    def show(done: int, total: int) -> None:
        if time.perf_counter() - start < 1.0 and done < total:
            return
        end = "\n" if done == total else ""
        sys.stderr.write(f"\rexecuting snippets: {done}/{total}{end}")
        sys.stderr.flush()

    return show
