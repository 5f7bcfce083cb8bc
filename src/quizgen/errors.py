"""User-facing errors: each one is a ClickException, so the CLI prints it and exits without a traceback."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import IO, Any

import click

from quizgen.constants import INTERNAL_ERROR_EXIT


def count(n: int, noun: str) -> str:
    """'1 deck', '2 decks': a number and its noun, for messages."""
    return f"{n} {noun}{'' if n == 1 else 's'}"


@dataclass(frozen=True)
class Location:
    """Where something stands in a card source: `file:line:col: card 'id' -> field`."""

    path: str
    line: int = 0
    col: int = 0
    card: str | None = None
    field: str | None = None

    def __str__(self) -> str:
        where = self.path
        if self.line:
            where += f":{self.line}"
            if self.col:
                where += f":{self.col}"
        if self.card:
            where += f": card '{self.card}'"
        if self.field:
            where += f" -> {self.field}"
        return where


@dataclass(frozen=True)
class Problem:
    """One error found in the cards, with its location."""

    location: Location
    message: str

    def __str__(self) -> str:
        return f"{self.location}: {self.message}"


class QuizgenError(click.ClickException):
    """Base of every error quizgen reports to a user; exit code 1."""

    exit_code = 1

    def show(self, file: IO[Any] | None = None) -> None:
        """Print `Error: message`, its control characters made visible (it quotes the repository)."""
        from quizgen.terminal import visible

        message = visible(self.format_message())
        click.echo(f"Error: {message}", file=file, err=True)


class UsageError(QuizgenError):
    """The command was called wrongly (missing folder, bad option); exit code 2."""

    exit_code = 2


def warning_lines(warnings: Iterable[Problem], repeated: int = 0) -> list[str]:
    """Each warning as printed, and a note of those shown before and not repeated."""
    lines = [f"warning: {w}" for w in warnings]
    if repeated:
        them = "it" if repeated == 1 else "them"
        told = count(repeated, "warning")
        lines.append(f"note: {told} shown before, not repeated (--all-warnings shows {them})")
    return lines


class CardErrors(QuizgenError):
    """One or more cards are wrong; every problem is listed with its location, errors first, then the
    warnings (true but suspicious) after a blank line."""

    def __init__(
        self,
        problems: Iterable[Problem],
        what: str = "card error",
        warnings: Iterable[Problem] = (),
        repeated: int = 0,
    ) -> None:
        self.problems = list(problems)
        self.warnings = list(warnings)
        self.repeated = repeated  # warnings shown before and not repeated
        n = len(self.problems)
        super().__init__("\n".join([*(str(p) for p in self.problems), count(n, what)]))

    def format_message(self) -> str:
        after = warning_lines(self.warnings, self.repeated)
        return self.message + ("\n\n" + "\n".join(after) if after else "")


class OutputError(QuizgenError):
    """An output could not be written; what was built before is left as it was."""


class PushError(QuizgenError):
    """Anki could not take the decks (not running, a profile locked, a note type changed by hand): the
    message starts with where (the AnkiConnect address or the collection) and says what to do."""


class InternalError(QuizgenError):
    """quizgen itself failed (not the cards): reported as a bug, with its traceback."""

    exit_code = INTERNAL_ERROR_EXIT

    def __init__(self, context: str, trace: str, stderr: str = "") -> None:
        message = f"quizgen failed {context}: this is a bug in quizgen, not in your cards.\n{trace.rstrip()}"
        if stderr.strip():
            message += f"\nworker stderr:\n{stderr.rstrip()}"
        message += "\nPlease report it with the card that triggered it."
        super().__init__(message)
