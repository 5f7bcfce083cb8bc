"""The command line: thin commands over quizgen.pipeline. Heavy imports happen inside commands."""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import Any

import click

from quizgen import __version__
from quizgen.commands.options import common_options, matrix_option, run_options, timings_option
from quizgen.commands.torch import torch_group
from quizgen.errors import count, warning_lines
from quizgen.terminal import echo, guard


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
@matrix_option
@timings_option
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

        found = drift.check(run_options(**kw), torch_version)
        for line in found.lines():
            echo(line)
        return
    checked = pipeline.check(run_options(**kw))
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
@matrix_option
@timings_option
def build(watch: bool, timings: bool, **kw: Any) -> None:
    """Check every card, then write the outputs into the output folder."""
    from quizgen import pipeline

    if watch:
        from quizgen.serve import watch_forever

        watch_forever(run_options(**kw), echo)
        return
    report = pipeline.build(run_options(**kw))
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

    serve_quiz(run_options(**kw), port=port, echo=echo)


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
    report = pipeline.build(run_options(**kw))
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

    for line in shown(run_options(**{**kw, "all_warnings": True}), card_id):  # (warnings are not shown)
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


cli.add_command(torch_group)


def main() -> None:
    import signal

    guard()
    # SIGTERM (a cancelled CI job, `kill`) ends a run as Ctrl-C does: the pool is closed on the way
    # out, and with it every process a snippet started.
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    cli(prog_name="quizgen")
