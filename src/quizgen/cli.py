"""The command line: thin commands over quizgen.pipeline. Heavy imports happen inside commands."""

from __future__ import annotations

import difflib
import os
from pathlib import Path
from typing import Any

import click

from quizgen import __version__
from quizgen.constants import DEFAULT_TIMEOUT, MAX_TIMEOUT, MAX_TIMEOUT_ENV
from quizgen.errors import count, warning_lines
from quizgen.terminal import echo, guard

_common = [
    click.option(
        "--cards",
        "cards_dir",
        type=click.Path(path_type=Path),
        default=Path("cards"),
        show_default=True,
        help="Folder of YAML card files.",
    ),
    click.option(
        "--out",
        "out_dir",
        type=click.Path(path_type=Path),
        default=Path("build"),
        show_default=True,
        help="Output folder (the result cache is kept apart, in the user's cache directory).",
    ),
    click.option(
        "-j",
        "--jobs",
        type=click.IntRange(min=1),
        default=os.cpu_count() or 1,
        show_default=True,
        help="Snippets executed at once.",
    ),
    click.option("--fail-fast", is_flag=True, help="Stop at the first card that fails."),
    click.option(
        "--sandbox",
        type=click.Choice(["auto", "require", "off"]),
        default="auto",
        show_default=True,
        help="Run snippets in bubblewrap's sandbox: no network, no terminal, a read-only file system "
        "without the project or $HOME (auto, require: stop where it cannot start; off: your rights).",
    ),
    click.option("--no-cache", "no_cache", is_flag=True, help="Execute every snippet again."),
    click.option(
        "--all-warnings",
        "all_warnings",
        is_flag=True,
        help="Show every warning, also those an earlier run showed already.",
    ),
    click.option(
        "--timeout",
        type=click.FloatRange(min=0.1),
        default=None,
        help=f"Seconds one snippet may run (an order search gets ten times this) [default: quizgen.toml's "
        f"timeout, else {DEFAULT_TIMEOUT:g}].",
    ),
    click.option(
        "--max-timeout",
        type=click.FloatRange(min=0.1),
        default=MAX_TIMEOUT,
        envvar=MAX_TIMEOUT_ENV,
        show_default=True,
        show_envvar=True,
        help="The most a project's quizgen.toml may set its timeout to (the project is not trusted to "
        "lift it; --timeout is).",
    ),
]


_matrix = click.option(
    "--matrix",
    is_flag=True,
    help="Run every torch version of the project's matrix (quizgen.toml's torch); a version not "
    "provisioned is an error, not the answers quizgen.lock recorded for it.",
)


_timings_flag = click.option(
    "--timings", is_flag=True, help="After the summary, list the cards whose jobs ran longest in this build."
)


def common_options(f: Any) -> Any:
    for option in reversed(_common):
        f = option(f)
    return f


def _options(**kw: Any) -> Any:
    from quizgen.pipeline import Options
    from quizgen.terminal import progress_printer

    return Options(
        cards_dir=kw["cards_dir"],
        out_dir=kw["out_dir"],
        jobs=kw["jobs"],
        fail_fast=kw["fail_fast"],
        use_cache=not kw["no_cache"],
        timeout=kw["timeout"],
        max_timeout=kw["max_timeout"],
        sandbox=kw["sandbox"],
        warn_once=not kw["all_warnings"],
        matrix=kw.get("matrix", False),
        progress=progress_printer(),
        waiting=lambda: echo("waiting for another build of this project to finish", err=True),
    )


def _summary(report: Any) -> str:
    others = "".join(
        f"; torch {version}: {executed} executed, {cached} from cache"
        for version, (executed, cached) in report.torch_ran.items()
    )
    others += "".join(f"; torch {v}: {n} from quizgen.lock" for v, n in report.torch_recalled.items())
    return (
        f"{count(report.cards, 'card')} in {count(len(report.decks), 'deck')} verified "
        f"({report.sources}{others}) in {report.seconds:.2f} s"
    )


def _timings(report: Any, shown: bool) -> None:
    if not shown:
        return
    slowest = report.slowest(10)
    echo("slowest cards run in this build:" if slowest else "no card ran in this build (all from cache)")
    for seconds, where in slowest:
        echo(f"  {seconds:8.2f} s  {where}")


def _warn(report: Any) -> None:
    for line in warning_lines(report.warnings, report.repeated):
        echo(line, err=True)
    for note in report.torch_notes:
        echo(f"note: {note}", err=True)


# Commands people reach for that quizgen spells another way: what to type instead.
_INSTEAD = {
    "watch": "To rebuild on every change: quizgen build --watch (quizgen serve also serves the quiz)",
    "preview": "To see the quiz: quizgen serve",
    "new": "To start a card project: quizgen init",
    "test": "To verify the cards without writing outputs: quizgen check",
    "verify": "To verify the cards without writing outputs: quizgen check",
}


class _Commands(click.Group):
    """A group whose unknown commands say what to type instead."""

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        name = args[0] if args else ""
        if self.get_command(ctx, name) is None and not name.startswith("-") and not ctx.resilient_parsing:
            if name in _INSTEAD:
                hint = f" {_INSTEAD[name]}."
            else:
                close = difflib.get_close_matches(name, self.list_commands(ctx), n=1)
                hint = f" Did you mean 'quizgen {close[0]}'?" if close else ""
            raise click.UsageError(f"No such command '{name}'.{hint}", ctx)
        return super().resolve_command(ctx, args)


@click.group(cls=_Commands, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="quizgen")
def cli() -> None:
    """Anki decks and HTML quizzes from YAML cards whose answers are computed by running PyTorch."""


@cli.command()
@common_options
@_matrix
@_timings_flag
@click.option(
    "--report",
    is_flag=True,
    help="After the summary, the item-writing report: how answer-blind guessers (claim length, the longest "
    "option, the first block first, ...) do on each deck, beside chance.",
)
@click.option(
    "--torch",
    "torch_version",
    metavar="VERSION",
    default=None,
    help="Also run every card under this torch (provisioned by `quizgen torch add`) and report the cards "
    "that answer differently there (informational: the exit status is the check's).",
)
@click.option(
    "--locked",
    is_flag=True,
    help="Fail, naming each card, when a build would change quizgen.lock (as CI should: what is "
    "committed is what was verified).",
)
def check(torch_version: str | None, timings: bool, report: bool, locked: bool, **kw: Any) -> None:
    """Load, execute and verify every card; write nothing but the cache."""
    from quizgen import pipeline

    if torch_version is not None:
        from quizgen.torch_versions import drift

        found = drift.check(_options(**kw), torch_version)
        for line in found.lines():
            echo(line)
        return
    checked = pipeline.check(_options(**kw))
    _warn(checked)
    echo(_summary(checked))
    _timings(checked, timings)
    if report:
        from quizgen.report import guessers

        for line in guessers.table(checked.decks):
            echo(line)
    if locked:
        from quizgen.project.locked import verify

        verify(checked.decks, kw["cards_dir"])


@cli.command()
@common_options
@click.option("--watch", is_flag=True, help="Keep running; rebuild when a card file or template changes.")
@_matrix
@_timings_flag
def build(watch: bool, timings: bool, **kw: Any) -> None:
    """Check every card, then write the outputs into the output folder."""
    from quizgen import pipeline

    if watch:
        from quizgen.serve import watch_forever

        watch_forever(_options(**kw), echo)
        return
    report = pipeline.build(_options(**kw))
    _warn(report)
    echo(_summary(report))
    for note in report.notes:
        echo(note)
    for path in report.written:
        echo(f"wrote {path}")
    _timings(report, timings)


@cli.command()
@common_options
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=8000,
    show_default=True,
    help="Port on 127.0.0.1 (0 picks a free one).",
)
def serve(port: int, **kw: Any) -> None:
    """Build, serve OUT/quiz on http://127.0.0.1:PORT/ and rebuild when cards or templates change."""
    from quizgen.serve import serve as serve_quiz

    serve_quiz(_options(**kw), port=port, echo=echo)


@cli.command()
@common_options
@click.option("--profile", metavar="NAME", help="With Anki closed: push into this Anki profile's collection.")
@click.option(
    "--collection",
    "collection_path",
    type=click.Path(path_type=Path, dir_okay=False),
    help="With Anki closed: push into this collection file (a profile's collection.anki2).",
)
@click.option(
    "--anki-connect",
    "url",
    metavar="URL",
    default="http://127.0.0.1:8765",
    show_default=True,
    help="AnkiConnect's address, where a running Anki is pushed into.",
)
def push(profile: str | None, collection_path: Path | None, url: str, **kw: Any) -> None:
    """Build, then bring the decks into Anki (running: AnkiConnect; closed: --profile), keeping reviews."""
    from quizgen import pipeline
    from quizgen.push import push as push_decks

    if profile is not None and collection_path is not None:
        raise click.UsageError("give --profile or --collection, not both")
    report = pipeline.build(_options(**kw))
    _warn(report)
    echo(_summary(report))
    for note in report.notes:
        echo(note)
    from quizgen.render.view import card_key

    names = {card_key(vc.card.id): vc.card.id for deck in report.decks for vc in deck.cards}
    for line in push_decks(report.written, profile, collection_path, url, names).lines():
        echo(line)


@cli.command()
@click.argument("card_id", metavar="CARD")
@common_options
def show(card_id: str, **kw: Any) -> None:
    """Check every card, then print what the card CARD accepts (a puzzle's accepted arrangements)."""
    from quizgen.report.show import show as shown

    for line in shown(_options(**{**kw, "all_warnings": True}), card_id):  # (warnings are not shown)
        echo(line)


@cli.command()
@click.argument("folder", type=click.Path(path_type=Path, file_okay=False), default=".")
@click.option("--title", default=None, help="The quiz's title (default: from the folder's name).")
def init(folder: Path, title: str | None) -> None:
    """Start a card project in FOLDER: an example deck, quizgen.toml, the schema, a .gitignore."""
    from quizgen.project.scaffold import create

    for line in create(folder, title):
        echo(line)


@cli.command()
def schema() -> None:
    """Print the JSON Schema of a card file (for editor validation and completion)."""
    import json

    from quizgen.cards.schema import json_schema

    echo(json.dumps(json_schema(), indent=2))


@cli.group(name="torch")
def torch_group() -> None:
    """Other torch versions to check cards under: environments in the user's cache directory."""


@torch_group.command(name="add")
@click.argument("version")
def torch_add(version: str) -> None:
    """Download torch VERSION (about 3 GB) into an environment of its own, once."""
    from quizgen.torch_versions import changed, environments

    if environments.python_for(environments.checked(version)) is None:
        changed.require_release(version)  # (else pip says it, blaming its constraints)
        needs = f"torch=={version} and what it needs"
        echo(f"torch {version}: downloading {needs} with pip ({environments.DOWNLOAD})")
    made = environments.provision(version, environments.pip_progress(_say))
    echo(f"torch {version}: {made.python} ({environments.size_text(made.size)})")


@torch_group.command(name="list")
def torch_list() -> None:
    """The torch versions cards can run under: the installed one and each provisioned one."""
    from quizgen.torch_versions import environments

    installed = environments.installed_version()
    echo(f"{installed}  installed with quizgen" if installed else "no torch is installed with quizgen")
    for env in environments.listing():
        echo(f"{env.version}  {environments.size_text(env.size)}  {env.path}")


@torch_group.command(name="remove")
@click.argument("version")
def torch_remove(version: str) -> None:
    """Delete the environment of torch VERSION."""
    from quizgen.torch_versions import environments

    echo(f"removed {environments.remove(version)}")


@torch_group.command(name="bisect")
@click.argument("card_id", metavar="CARD")
@click.option("--add", is_flag=True, help="Provision the releases the search runs (about 3 GB each).")
@common_options
def torch_bisect(card_id: str, add: bool, **kw: Any) -> None:
    """Find the first torch release where CARD's answer changes; record it in quizgen.lock (changed_in)."""
    from quizgen.torch_versions.bisecting import bisect

    found = bisect(_options(**kw), card_id, add, _say)
    if found.needed:
        raise click.ClickException(found.said(card_id))
    echo(found.said(card_id))


def _say(line: str) -> None:
    echo(line, err=True)


def main() -> None:
    import signal

    guard()
    # SIGTERM (a cancelled CI job, `kill`) ends a run as Ctrl-C does: the pool is closed on the way
    # out, and with it every process a snippet started.
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    cli(prog_name="quizgen")
