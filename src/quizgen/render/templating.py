"""The Jinja environment for rendered outputs: a project's `templates/` folder overrides the packaged ones.

A project's templates are untrusted (they come with the cards): where a project has any, every template
renders in Jinja's immutable sandbox, and a template is read only from a file inside the project (a
symlink leaving it is refused, not followed).
"""

from __future__ import annotations

import json
import os
import posixpath
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from jinja2 import (
    BaseLoader,
    ChoiceLoader,
    Environment,
    FileSystemLoader,
    FunctionLoader,
    PrefixLoader,
    StrictUndefined,
)
from jinja2.loaders import split_template_path
from jinja2.sandbox import ImmutableSandboxedEnvironment
from markupsafe import Markup

from quizgen import kinds
from quizgen.constants import MAX_TEMPLATE_BYTES
from quizgen.errors import QuizgenError
from quizgen.project import files

PACKAGED = Path(__file__).parent.parent / "templates"
_KIND_TEMPLATE = re.compile(r"quiz/kinds/(\w+)\.html")  # a kind's quiz template, in kinds/<kind>/


class TemplateProblem(QuizgenError):
    """A quiz template (usually a project's override) could not be read or rendered."""


# Whose objects a project's template may read attributes of (and so call methods of): data, Jinja's own
# helpers and quizgen's views. Not a Path a view holds (an image's source): its public methods read and
# write any file (`p.joinpath("/home/u/.ssh/id_rsa").read_text()`), which Jinja's sandbox allows.
_DATA_MODULES = frozenset({"builtins", "jinja2", "markupsafe", "quizgen"})


class ProjectSandbox(ImmutableSandboxedEnvironment):
    """Jinja's immutable sandbox, reading attributes of data, Jinja's and quizgen's objects only."""

    def is_safe_attribute(self, obj: Any, attr: str, value: Any) -> bool:
        module = type(obj).__module__.partition(".")[0]
        return module in _DATA_MODULES and super().is_safe_attribute(obj, attr, value)


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


class ProjectLoader(FileSystemLoader):
    """The project's override folder, read only where the file really lies inside the project."""

    def __init__(self, folder: Path, project: Path) -> None:
        super().__init__(folder)
        self.folder, self.project = folder, project
        self.root = os.path.realpath(project)

    def get_source(self, environment: Environment, template: str) -> tuple[str, str, Callable[[], bool]]:
        filename = posixpath.join(str(self.folder), *split_template_path(template))
        if not os.path.isfile(filename):
            return super().get_source(environment, template)  # TemplateNotFound: the packaged one is next
        real = os.path.realpath(filename)
        if not _inside(real, self.root):
            raise TemplateProblem(
                f"{filename}: the template resolves to {real}, outside the project {self.project}; "
                "templates are read only from files inside the project"
            )
        try:
            contents = files.read_text(real, MAX_TEMPLATE_BYTES)  # (resolved: no link is left)
        except files.TooLarge:
            raise TemplateProblem(
                f"{filename}: a template may have at most {MAX_TEMPLATE_BYTES} bytes"
            ) from None
        except OSError as exc:
            raise TemplateProblem(f"{filename}: cannot read: {exc.strerror or exc}") from None
        return contents, os.path.normpath(filename), lambda: False


def _overrides(folder: Path) -> ProjectLoader | None:
    """The project's quiz templates as a loader (None when it has none: the packaged templates load only
    `quiz/...` names); a templates folder lying outside the project (a symlink) is refused."""
    if not folder.is_dir():
        return None
    project = folder.absolute().parent
    real = os.path.realpath(folder)
    if not _inside(real, os.path.realpath(project)):
        raise TemplateProblem(
            f"{folder}: the templates folder resolves to {real}, outside the project {project}; "
            "templates are read only from inside the project"
        )
    return ProjectLoader(folder, project) if (folder / "quiz").is_dir() else None


def _kind_template(name: str) -> tuple[str, str, Callable[[], bool]] | None:
    """`quiz/kinds/<kind>.html` (the name a project overrides it by) from the kind's own folder."""
    match = _KIND_TEMPLATE.fullmatch(name)
    if match is None or match[1] not in kinds.names():
        return None
    path = kinds.get(match[1]).folder / "quiz.html"
    return path.read_text(encoding="utf-8"), str(path), lambda: True


def environment(overrides: Path | None = None) -> Environment:
    """Templates from `overrides` (a project's `templates/` folder) first, then the packaged defaults.

    With a project's templates everything renders in Jinja's immutable sandbox: a template cannot reach
    Python's internals nor change the data it is given. The packaged templates alone (our own code)
    render unsandboxed, since the sandbox checks every attribute and call (+65 % of Jinja's time).
    A packaged template is also reachable as `default:<name>`, so an override can
    `{% extends "default:quiz/deck.html" %}` and replace only the blocks it cares about.
    """
    packaged = ChoiceLoader([FunctionLoader(_kind_template), FileSystemLoader(PACKAGED)])
    loaders: list[BaseLoader] = [PrefixLoader({"default": packaged}, delimiter=":"), packaged]
    project = _overrides(overrides) if overrides is not None else None
    if project is not None:
        loaders.insert(0, project)
    kind = Environment if project is None else ProjectSandbox
    env = kind(
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
