"""What the commands share: the options every run takes, the run's Options made from them, and how a
command says a line of progress."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import click

from quizgen.constants import DEFAULT_TIMEOUT, MAX_TIMEOUT, MAX_TIMEOUT_ENV
from quizgen.terminal import echo

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


matrix_option = click.option(
    "--matrix",
    is_flag=True,
    help="Run every torch version of the project's matrix (quizgen.toml's torch); a version not "
    "provisioned is an error, not the answers quizgen.lock recorded for it.",
)


timings_option = click.option(
    "--timings", is_flag=True, help="After the summary, list the cards whose jobs ran longest in this build."
)


def common_options(f: Any) -> Any:
    for option in reversed(_common):
        f = option(f)
    return f


def run_options(**kw: Any) -> Any:
    """The pipeline's Options from a command's options."""
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


def say(line: str) -> None:
    """A line of progress, on stderr."""
    echo(line, err=True)
