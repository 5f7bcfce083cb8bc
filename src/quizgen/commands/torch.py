"""`quizgen torch ...`: other torch versions to check cards under (add, list, remove, bisect)."""

from __future__ import annotations

from typing import Any

import click

from quizgen.commands.options import common_options, run_options, say
from quizgen.terminal import echo


@click.group(name="torch")
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
    made = environments.provision(version, environments.pip_progress(say))
    echo(f"torch {version}: {made.python} ({environments.size_text(made.size)})")


@torch_group.command(name="list")
def torch_list() -> None:
    """The torch versions cards can run under: the installed one and each provisioned one."""
    from quizgen.torch_versions import environments, installed

    version = installed.version()
    echo(
        f"{version}  installed with quizgen"
        if version != installed.NONE
        else "no torch is installed with quizgen"
    )
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

    found = bisect(run_options(**kw), card_id, add, say)
    if found.needed:
        raise click.ClickException(found.said(card_id))
    echo(found.said(card_id))
