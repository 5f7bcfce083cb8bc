"""The one interface every output implements: verified decks in, files staged, messages out."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from quizgen.cards.model import VerifiedDeck
from quizgen.errors import OutputError
from quizgen.project.settings import Exports
from quizgen.render.stage import Stage


@dataclass(frozen=True)
class Project:
    """What the renderers get: the verified decks and where things live."""

    decks: list[VerifiedDeck]
    cards_dir: Path
    out_dir: Path
    title: str = "Quizzes"  # the site's title (quizgen.toml's [quiz] title)
    reuse: bool = False  # outputs made earlier from the same inputs may be copied (render/reuse.py)
    exports: Exports = field(default_factory=Exports)  # quizgen.toml's [export]: the outputs for an LMS

    @property
    def templates_dir(self) -> Path:
        """A project's template overrides: `templates/` beside the cards folder."""
        return self.cards_dir.parent / "templates"


@dataclass
class Rendered:
    written: list[Path] = field(default_factory=list)  # the targets, as the build reports them
    notes: list[str] = field(default_factory=list)  # what the user should know (lock updated, ...)


class Renderer(Protocol):
    name: str

    def render(self, project: Project, stage: Stage) -> Rendered:
        """Write this output's files through `stage` (never straight to their targets)."""
        ...


class Located:
    """A renderer whose failure to write names its output."""

    def __init__(self, renderer: Renderer) -> None:
        self.renderer, self.name = renderer, renderer.name

    def render(self, project: Project, stage: Stage) -> Rendered:
        try:
            return self.renderer.render(project, stage)
        except OSError as exc:
            where = f"{exc.filename}: " if exc.filename else ""
            raise OutputError(f"{where}cannot write the {self.name} output: {exc.strerror or exc}") from None
