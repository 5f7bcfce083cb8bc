"""The Jinja environment for rendered outputs: a project's `templates/` folder overrides the packaged ones."""

from __future__ import annotations

import json
from pathlib import Path

from jinja2 import ChoiceLoader, Environment, FileSystemLoader, PrefixLoader, StrictUndefined
from markupsafe import Markup

PACKAGED = Path(__file__).parent.parent / "templates"


def environment(overrides: Path | None = None) -> Environment:
    """Templates from `overrides` first, then the packaged defaults.

    A packaged template is also reachable as `default:<name>`, so an override can
    `{% extends "default:quiz/deck.html" %}` and replace only the blocks it cares about.
    """
    packaged = FileSystemLoader(PACKAGED)
    loaders: list[FileSystemLoader | PrefixLoader] = []
    if overrides is not None and overrides.is_dir():
        loaders.append(FileSystemLoader(overrides))
    loaders += [PrefixLoader({"default": packaged}, delimiter=":"), packaged]
    env = Environment(
        loader=ChoiceLoader(loaders),
        autoescape=True,  # every template renders HTML; card text is escaped unless marked safe
        undefined=StrictUndefined,  # a misspelled variable in an override fails the build, not the page
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        auto_reload=False,  # a build's templates do not change under it: no stat per `{% import %}` of a card
    )
    env.filters["script_json"] = script_json
    return env


def script_json(value: object) -> Markup:
    """`value` as JSON that may stand inside a <script> element: only `</` (which could end it) and `<!--`
    are escaped, so HTML held this way grows little (tojson escapes every < and >: +60 % for a card)."""
    text = json.dumps(value, ensure_ascii=False).replace("</", "<\\/").replace("<!--", "\\u003c!--")
    return Markup(text)
