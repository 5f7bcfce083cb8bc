"""load -> execute -> verify -> render, with no click in sight.

Every output is a renderer (quizgen/render/base.py); the build stages them all and commits them
together, so a failure anywhere leaves every earlier output and the lock as they were.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from quizgen import kinds, settings, verify
from quizgen.cards import loader
from quizgen.cards.model import Card, Deck, VerifiedCard, VerifiedDeck
from quizgen.constants import DEFAULT_MEMORY
from quizgen.errors import CardErrors, InternalError, OutputError, Problem
from quizgen.execution.cache import Cache, job_key
from quizgen.execution.pool import Pool, execute
from quizgen.execution.protocol import Job, Outcome, place

if TYPE_CHECKING:
    from quizgen.render.stage import Stage


@dataclass
class Options:
    cards_dir: Path = Path("cards")
    out_dir: Path = Path("build")
    jobs: int = field(default_factory=lambda: os.cpu_count() or 1)
    fail_fast: bool = False
    use_cache: bool = True
    timeout: float | None = None  # None: quizgen.toml's, else DEFAULT_TIMEOUT
    memory: int = DEFAULT_MEMORY
    progress: Callable[[int, int], None] | None = None
    pool: Pool | None = None  # a warm worker pool to reuse across runs (watch mode, tests)
    sandbox: str = "auto"  # auto, require or off (execution/sandbox.py)
    waiting: Callable[[], None] | None = None  # told when another build of the project holds it


@dataclass
class Report:
    decks: list[VerifiedDeck]
    executed: int = 0
    cached: int = 0
    seconds: float = 0.0
    written: list[Path] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # from the renderers (lock updated, ...)
    sandbox_off: str = ""  # why snippets ran without the sandbox ("" when it was on, off by choice, or idle)
    warnings: list[Problem] = field(default_factory=list)  # true but suspicious: printed, not fatal
    settings: settings.Settings = field(default_factory=lambda: settings.Settings())  # quizgen.toml

    @property
    def cards(self) -> int:
        return sum(len(d.cards) for d in self.decks)


@dataclass
class _Plan:
    """What a check must do: each distinct job once, cached outcomes looked up, the rest to run."""

    keys: dict[str, str] = field(default_factory=dict)  # card id -> job key
    jobs: dict[str, Job] = field(default_factory=dict)  # card id -> its job, in its own file and lines
    cards: dict[str, list[Card]] = field(default_factory=dict)  # cards with identical jobs share one run
    outcomes: dict[str, Outcome] = field(default_factory=dict)
    work: dict[str, Job] = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)
    warnings: list[Problem] = field(default_factory=list)

    def verified(self, key: str, outcome: Outcome) -> None:
        """Record what the cards sharing this job's outcome get wrong or look suspicious for."""
        for card in self.cards[key]:
            mine = outcome
            if outcome.raised is not None:  # shared and cached by content: place it in this card's lines
                mine = replace(outcome, placed=place(outcome.raised, self.jobs[card.id]))
            self.problems += verify.verify_card(card, mine)
            self.warnings += verify.warnings_for(card, mine)


def _plan(decks: list[Deck], cache: Cache) -> _Plan:
    plan = _Plan()
    for deck, card in loader.iter_cards(decks):
        job = kinds.get(card.kind).job(deck, card)
        if job is None:
            continue
        if card.cite:
            job["cite"] = {name: snippet.to_job() for name, snippet in card.cite.items()}
        key = plan.keys[card.id] = job_key(job)
        plan.jobs[card.id] = job
        plan.cards.setdefault(key, []).append(card)
        if key in plan.outcomes or key in plan.work:
            continue
        hit = cache.get(key)
        if hit is not None:
            plan.outcomes[key] = hit
        else:
            plan.work[key] = job
    return plan


def check(options: Options) -> Report:
    """Load, execute and verify every card; raise CardErrors listing every card that lies.

    Cards that load are executed even when others do not, so one run lists every problem.
    """
    start = time.perf_counter()
    project = settings.load(options.cards_dir)
    decks, load_problems = loader.load(options.cards_dir, project.tolerance)
    cache = Cache(options.out_dir / ".cache", enabled=options.use_cache)
    plan = _plan(decks, cache)
    plan.problems += load_problems
    unsandboxed: list[str] = []
    for key, outcome in plan.outcomes.items():
        plan.verified(key, outcome)
    done = 0

    def on_result(key: str, outcome: Outcome) -> bool:
        nonlocal done
        done += 1
        if options.progress:
            options.progress(done, len(plan.work))
        if outcome.internal is not None:
            card = plan.cards[key][0]
            raise InternalError(f"while running {card.location}", outcome.internal, _pool_stderr(options))
        cache.put(key, outcome)
        plan.verified(key, outcome)
        return not (options.fail_fast and plan.problems)

    if not (options.fail_fast and plan.problems):
        run = execute(
            plan.work,
            jobs=options.jobs,
            timeout=options.timeout or project.timeout,
            memory=options.memory,
            on_result=on_result,
            pool=options.pool,
            sandbox=options.sandbox,
            keep=[options.cards_dir],
            unsandboxed=unsandboxed,
        )
        plan.outcomes.update(run)
    warnings = loader.in_source_order(plan.warnings)
    if plan.problems:
        raise CardErrors(loader.in_source_order(plan.problems), warnings=warnings)
    verified = [
        VerifiedDeck(deck, [_verified(c, plan.outcomes, plan.keys) for c in deck.cards]) for deck in decks
    ]
    cached = len(plan.outcomes) - len(plan.work)
    seconds = time.perf_counter() - start
    report = Report(verified, len(plan.work), cached, seconds, warnings=warnings)
    report.sandbox_off = unsandboxed[0] if unsandboxed else ""
    report.settings = project
    return report


def _verified(card: Card, outcomes: dict[str, Outcome], keys: dict[str, str]) -> VerifiedCard:
    outcome = outcomes.get(keys.get(card.id, ""))
    return VerifiedCard(verify.bind_prose(card, outcome), outcome)


def _pool_stderr(options: Options) -> str:
    return options.pool.stderr_tail() if options.pool is not None else ""


def build(options: Options) -> Report:
    """Check, then render every output; they replace the earlier outputs together, or not at all."""
    from quizgen.render import stage as staging

    # One build of a project at a time; a build killed earlier is finished (or cleaned) first.
    with staging.build_lock(options.out_dir, options.waiting):
        journal = options.out_dir / staging.JOURNAL
        staging.recover(journal, [options.out_dir, options.out_dir / "anki", options.cards_dir])
        report = check(options)
        _render(options, report, staging.Stage(journal))
    return report


def _render(options: Options, report: Report, stage: Stage) -> None:
    from quizgen.render.base import Project, renderers

    project = Project(report.decks, options.cards_dir, options.out_dir, report.settings.title)
    with stage:
        for renderer in renderers():
            try:
                rendered = renderer.render(project, stage)
            except OSError as exc:
                where = f"{exc.filename}: " if exc.filename else ""
                raise OutputError(
                    f"{where}cannot write the {renderer.name} output: {exc.strerror or exc}"
                ) from None
            report.written += rendered.written
            report.notes += rendered.notes
        stage.commit()


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
