"""load -> execute -> verify -> render, with no click in sight.

Every output is a renderer (the interface: quizgen/render/base.py; the list: render/registry.py); the
build stages them all and commits them together, so a failure anywhere leaves every earlier output and
the lock as they were.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from quizgen import verify
from quizgen.cards import loader, syntax, text
from quizgen.cards.model import Card, Deck, Tolerance, TorchAnswers, VerifiedCard, VerifiedDeck
from quizgen.constants import DEFAULT_MEMORY, MAX_TIMEOUT
from quizgen.errors import CardErrors, InternalError, Location, Problem
from quizgen.execution import timeouts
from quizgen.execution.cache import Cache, for_output
from quizgen.execution.protocol import Outcome
from quizgen.planning import Plan, plan_jobs
from quizgen.project import confine, files, settings, state, told_once
from quizgen.project.store import Memo
from quizgen.report import guessers
from quizgen.torch_versions import bounds, changed, environments, judged, matrix, versioned
from quizgen.torch_versions.running import naming, run_under

if TYPE_CHECKING:
    from quizgen.execution.pool import Pool
    from quizgen.render.stage import Stage


@dataclass
class Options:
    cards_dir: Path = Path("cards")
    out_dir: Path = Path("build")
    jobs: int = field(default_factory=lambda: os.cpu_count() or 1)
    fail_fast: bool = False
    use_cache: bool = True
    timeout: float | None = None  # None: quizgen.toml's, else DEFAULT_TIMEOUT
    max_timeout: float = MAX_TIMEOUT  # the most quizgen.toml may set: the user's ceiling (--timeout is not)
    memory: int = DEFAULT_MEMORY
    progress: Callable[[int, int], None] | None = None
    pool: Pool | None = None  # a warm worker pool to reuse across runs (watch mode, tests)
    sandbox: str = "auto"  # auto, require or off (execution/sandbox/bwrap.py)
    waiting: Callable[[], None] | None = None  # told when another build of the project holds it
    prepare: Callable[[list[Deck]], None] | None = None  # told the decks once loaded, if any must run
    warn_once: bool = False  # leave out the warnings an earlier run showed (project/told_once.py)
    matrix: bool = False  # run every version of the project's torch matrix: none may be left unprovisioned
    torch: str | None = (
        None  # run under this provisioned torch (torch_versions/environments.py), not the installed one
    )


@dataclass
class Report:
    decks: list[VerifiedDeck]
    executed: int = 0
    cached: int = 0
    seconds: float = 0.0
    written: list[Path] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # from the renderers (lock updated, ...)
    warnings: list[Problem] = field(default_factory=list)  # true but suspicious: printed, not fatal
    repeated: int = 0  # warnings shown by an earlier run and left out (Options.warn_once)
    settings: settings.Settings = field(default_factory=lambda: settings.Settings())  # quizgen.toml
    torch_notes: list[str] = field(default_factory=list)  # told once: a version's recorded answers used
    torch_ran: dict[str, tuple[int, int]] = field(default_factory=dict)  # other torch -> executed, cached
    torch_recalled: dict[str, int] = field(default_factory=dict)  # other torch -> answers from the lock
    recorded: int = 0  # outcomes the lock recorded for a version not provisioned (judged_on cards)
    torch_timed: dict[str, float] = field(default_factory=dict)  # "card (torch V)" -> seconds run there

    @property
    def cards(self) -> int:
        return sum(len(d.cards) for d in self.decks)

    def slowest(self, count: int) -> list[tuple[float, str]]:
        """(seconds, 'file:line:col: card id') of the `count` cards whose jobs ran longest in this build
        (cards answered from the cache did not run, and are not timed); a card's run on another torch of the
        matrix is one more, named with its version."""
        ran = {
            str(vc.card.location): vc.outcome.seconds
            for deck in self.decks
            for vc in deck.cards
            if vc.outcome is not None and not vc.outcome.cached and vc.outcome.seconds > 0
        }
        ran.update(self.torch_timed)
        return sorted(((s, where) for where, s in ran.items()), reverse=True)[:count]

    @property
    def sources(self) -> str:
        """Where the answers came from: "3 executed, 120 from cache" (and the lock's records, if used)."""
        recorded = f", {self.recorded} from quizgen.lock" if self.recorded else ""
        return f"{self.executed} executed, {self.cached} from cache{recorded}"


def check(options: Options) -> Report:
    """Load, execute and verify every card; raise CardErrors listing every card that lies.

    Cards that load are executed even when others do not, so one run lists every problem.
    """
    from quizgen.constants import LOCK_NAME

    confine.cards_folder(options.cards_dir)  # before a card is read or a worker started
    read = [settings.path_for(options.cards_dir), options.cards_dir.parent / settings.PYPROJECT]
    confine.project_files([*read, options.cards_dir / LOCK_NAME], options.cards_dir)
    cache = for_output(options.out_dir, options.use_cache)
    sources = _card_sources(options)
    early = _early_pool(options, cache, sources)
    held = contextlib.ExitStack()  # the early pools, stopped at the end, and the environments they run under
    if early is not None:
        held.callback(early.stop)
    try:
        # (inside: a pool that cannot start leaves those started before it stopped)
        others = versioned.start_early(options, early, held) if early is not None else {}
        changed = replace(options, pool=early) if early else replace(options, prepare=None)
        report = _check(changed, cache, others, held)
        cache.store("meta", [("sources", sources)])  # checked: the next run with these needs no pool
        return report
    finally:
        cache.close()  # writes the results still held
        held.close()


def _card_sources(options: Options) -> str:
    """A digest of the card files and settings as they are now."""
    digest = hashlib.sha256()
    found = loader.card_files(options.cards_dir) if options.cards_dir.is_dir() else []
    for path in [settings.path_for(options.cards_dir), *found]:
        with contextlib.suppress(OSError):
            digest.update(f"\0{path}\0".encode() + files.digest(path, follow=True).encode())
    return digest.hexdigest()


def _early_pool(options: Options, cache: Cache, sources: str) -> Pool | None:
    """A pool started before the cards are read, when they have changed since the last check that
    passed: torch imports while the parent parses and plans. An unchanged project starts none."""
    if options.pool is not None or options.jobs < 1:
        return None
    known = cache.lookup("meta", ["sources"]).get("sources") if cache.path.exists() else None
    if known == sources:
        return None
    from quizgen.execution import pool

    # Warm (optimizers imported once in the zygote) when everything is to run; else only what runs.
    warm = known is None
    python = environments.runs_under(options.torch)
    return pool.Pool(options.jobs, options.memory, warm, options.sandbox, python)


def _load(
    options: Options, cache: Cache, tolerance: Tolerance, value_answers: str
) -> tuple[list[Deck], list[Problem]]:
    """The loader, with the files and snippets earlier runs loaded whole not parsed or compiled again."""
    syntax.known |= cache.keys("compiled")
    memo = Memo(cache) if cache.enabled else None
    loaded = loader.load(options.cards_dir, tolerance, value_answers, memo)
    cache.store("compiled", [(key, "") for key in syntax.fresh])
    syntax.fresh.clear()
    if options.prepare is not None:
        options.prepare(loaded[0])
    return loaded


def _project_defaults(decks: list[Deck], project: settings.Settings) -> None:
    """A deck takes the project's attempts and shuffle where it sets none of its own."""
    for deck in decks:
        deck.attempts = deck.attempts or project.attempts
        deck.shuffle = project.shuffle if deck.shuffle is None else deck.shuffle


def _check(options: Options, cache: Cache, early: Mapping[str, Pool], held: contextlib.ExitStack) -> Report:
    from quizgen.constants import LOCK_NAME

    start = time.perf_counter()
    # The project's timeout may not pass the user's ceiling, unless the user's own --timeout replaces it.
    project = settings.load(options.cards_dir, float("inf") if options.timeout else options.max_timeout)
    decks, load_problems = _load(options, cache, project.tolerance, project.value_answers)
    if not options.timeout:  # the user's own --timeout replaces the cards' as it does quizgen.toml's
        load_problems += timeouts.over_ceiling(decks, options.max_timeout)
    _project_defaults(decks, project)
    judging = judged.prepare(project.torch, decks, options.matrix, options.torch)
    plan = plan_jobs(decks, cache, environments.result_key(options.torch), judging.torch_for)
    cards = [card for _, card in loader.iter_cards(decks)]
    judged.recall(judging, plan, cards, options.cards_dir / LOCK_NAME)  # before a recorded outcome is used
    plan.problems += load_problems + judging.problems
    text_errors, text_warnings = text.check(decks, options.cards_dir.parent)  # math and images
    plan.problems += text_errors
    plan.warnings += text_warnings
    for key, outcome in plan.outcomes.items():
        plan.verified(key, outcome)
    # The other versions' jobs start now, beside the installed torch's run; stopped once this one fails.
    ahead = matrix.ahead(
        options, cards, plan.jobs, plan.part_jobs, cache, project.timeout, early, lambda: bool(plan.problems),
        held, project.torch,
    )  # fmt: skip
    _execute(options, plan, project.timeout, judging, cache)
    torch = matrix.check(
        options, project.torch, cards, plan.jobs, plan.outcome_of, cache, project.timeout, plan.part_jobs,
        ahead,
    )  # fmt: skip
    if options.matrix and not options.torch:  # every typed range, run on the releases at its bounds
        found = bounds.check(
            options, project.torch, cards, plan.jobs, plan.part_jobs, plan.outcome_of, cache, project.timeout
        )
        torch.problems, torch.notes = torch.problems + found.problems, {**torch.notes, **found.notes}
    plan.problems += torch.problems
    plan.warnings += torch.warnings
    filling = verify.Filling(options.cards_dir.parent)  # the text placeholders fill in is checked too
    answers = {**torch.answers, **judged.answers(judging, cards, plan.outcome_of)}
    verified = [
        VerifiedDeck(deck, [_verified(c, plan.outcome_of(c), filling, answers.get(c.id)) for c in deck.cards])
        for deck in decks
    ]
    leaks = guessers.warnings(verified, Location(str(options.cards_dir)))  # the item-writing report's
    warnings, repeated = loader.in_source_order(plan.warnings + filling.warnings + leaks), 0
    if options.warn_once:
        warnings, repeated = told_once.fresh(options.out_dir, warnings)
    if plan.problems or filling.errors:
        errors = loader.in_source_order(plan.problems + filling.errors)
        raise CardErrors(errors, warnings=warnings, repeated=repeated)
    cached = len(plan.outcomes) - len(plan.work) - judging.recalled
    seconds = time.perf_counter() - start
    report = Report(verified, len(plan.work), cached, seconds, warnings=warnings, repeated=repeated)
    report.recorded = judging.recalled
    report.settings, report.torch_ran, report.torch_recalled = project, torch.ran, torch.recalled
    report.torch_timed = torch.timed
    # a version's note once: the matrix's (it counts the cards without a record), else the judged cards'
    judged_only = (note for version, note in judging.notes.items() if version not in torch.notes)
    report.torch_notes = [*torch.notes.values(), *judged_only]
    return report


def _execute(
    options: Options,
    plan: Plan,
    timeout: float,
    judging: judged.Judging,
    cache: Cache,
) -> None:
    """Run the plan's work: under the run's torch, then each card judged on another version under it."""
    done = 0
    unsettled: list[str] = []  # run, but some card waiting for it is not verified yet

    def on_result(key: str, outcome: Outcome) -> bool:
        nonlocal done
        done += 1
        if options.progress:
            options.progress(done, len(plan.work))
        card = plan.cards[key][0]
        if outcome.internal is not None:
            raise InternalError(f"while running {card.location}", outcome.internal, _pool_stderr(options))
        outcome = timeouts.explained(
            outcome, plan.work[key], card, options.timeout, timeout, options.max_timeout
        )
        plan.verified(key, outcome)
        if plan.settled(key):  # a failure (a proof that raised too) is never kept: it runs again
            cache.put(key, outcome)
        else:
            unsettled.append(key)
        return not (options.fail_fast and plan.problems)

    groups = judging.groups(plan)
    elsewhere = {key for keys in groups.values() for key in keys}
    own = [key for key in plan.work if key not in elsewhere]
    runs: list[tuple[list[str], Path | None, Pool | None]] = [
        (own, environments.runs_under(options.torch), options.pool)
    ]
    runs += [(keys, judging.python(version), None) for version, keys in groups.items()]
    for keys, python, pool in runs:
        if keys and not (options.fail_fast and plan.problems):
            _run(options, plan, keys, python, pool, timeout, on_result)
    for key in unsettled:  # their cards' other jobs are in now: those all verified are kept
        if plan.settled(key):
            cache.put(key, plan.outcomes[key])


def _run(
    options: Options,
    plan: Plan,
    keys: list[str],
    python: Path | None,
    pool: Pool | None,
    project_timeout: float,
    on_result: Callable[[str, Outcome], bool],
) -> None:
    """Execute these jobs of the plan under `python` (None: quizgen's own), each within its cards' timeout."""
    with naming(options.progress, plan.described) as watch:
        work = {key: plan.work[key] for key in keys}
        run = run_under(options, work, plan.cards, python, project_timeout, on_result, pool=pool, watch=watch)
    for key, outcome in run.items():
        plan.outcomes.setdefault(key, outcome)  # as on_result had it (a timeout explained)


def _verified(
    card: Card, outcome: Outcome | None, filling: verify.Filling, torch: TorchAnswers | None
) -> VerifiedCard:
    return VerifiedCard(verify.bind_prose(card, outcome, filling, changed.cited(torch)), outcome, torch)


def _pool_stderr(options: Options) -> str:
    return options.pool.stderr_tail() if options.pool is not None else ""


def build(options: Options) -> Report:
    """Check, then render every output; they replace the earlier outputs together, or not at all."""
    from quizgen.render import manifest
    from quizgen.render import stage as staging
    from quizgen.render.prepare import Preparation

    confine.cards_folder(options.cards_dir)  # before anything is written: nothing goes outside the project
    confine.output_folder(options.out_dir, options.cards_dir)
    # One build of a project at a time; a build killed earlier is finished (or cleaned) first.
    with staging.build_lock(options.out_dir, options.waiting):
        state_dir = state.folder(options.out_dir)
        journal = state_dir / staging.JOURNAL
        staging.recover(journal, options.out_dir, options.cards_dir)
        state.prune()  # other projects' state no build used for weeks
        sources = _sources(options)
        preparation = Preparation(state_dir, options.use_cache)
        try:
            report = check(replace(options, prepare=preparation.start))
        finally:
            preparation.stop()
        print_ = manifest.fingerprint(sources, report.decks)
        kept = manifest.current(state_dir, print_) if options.use_cache else None
        if kept is not None:  # every output is current: leave each one's bytes and times alone
            report.written = kept.written
            return report
        manifest.forget(state_dir)
        _render(options, report, staging.Stage(journal))
        kept = manifest.Kept(report.written)
        manifest.remember(state_dir, print_, kept, [options.cards_dir / manifest.LOCK_NAME])
    return report


def _sources(options: Options) -> str:
    from quizgen.render import manifest
    from quizgen.render.base import Project

    templates = Project([], options.cards_dir, options.out_dir).templates_dir
    return manifest.sources(options.cards_dir, templates, settings.path_for(options.cards_dir))


def _render(options: Options, report: Report, stage: Stage) -> None:
    from quizgen.render import parallel
    from quizgen.render.base import Located, Project, Renderer
    from quizgen.render.present import shared_views
    from quizgen.render.registry import renderers

    exports = report.settings.exports
    project = Project(
        report.decks, options.cards_dir, options.out_dir, report.settings.title, options.use_cache, exports
    )
    cache = for_output(options.out_dir, options.use_cache)
    with _highlights_kept(cache), shared_views(), stage:
        chosen: list[Renderer] = [Located(r) for r in renderers(exports)]
        for rendered in parallel.render(project, stage, chosen, options.jobs):
            report.written += rendered.written
            report.notes += rendered.notes
        stage.commit()


@contextmanager
def _highlights_kept(cache: Cache) -> Iterator[None]:
    """Highlighted code (and whether each card's code uses torch) from earlier builds is read from the
    cache, and this build's is added to it."""
    from quizgen.render import present

    try:
        with contextlib.ExitStack() as using:
            for results, table in present.kept_results():
                using.enter_context(results.using(partial(cache.value, table), partial(cache.store, table)))
            yield
    finally:
        cache.close()
