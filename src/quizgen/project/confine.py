"""A repository's symlinks cannot lead the build out of its project.

The project is the folder holding the cards folder. The cards folder, every card file, the settings, the
Anki lock and an output folder inside the project must resolve inside it (a symlink from one place in
the project to another is fine). An output folder named outside the project on the command line is the
user's own choice.
"""

from __future__ import annotations

import os
from pathlib import Path

from quizgen.errors import CardErrors, Location, OutputError, Problem


def lexical(path: Path) -> Path:
    """`path` made absolute with `.` and `..` taken as written, no symlink followed."""
    return Path(os.path.normpath(os.path.abspath(path)))


def project_of(cards_dir: Path) -> Path:
    """The project: the folder holding the cards folder."""
    return lexical(cards_dir).parent


def leaving(path: Path, project: Path) -> Path | None:
    """The first part of `path`, from `project` down, that is a symlink resolving outside `project`;
    None when there is none, or when `path` is not in `project` at all."""
    top, here = lexical(project), lexical(path)
    if not here.is_relative_to(top):
        return None
    real = top.resolve()
    part = top
    for name in here.relative_to(top).parts:
        part = part / name
        if part.is_symlink():
            try:
                if not part.resolve().is_relative_to(real):
                    return part
            except (OSError, RuntimeError):  # a symlink loop: it leads nowhere safe
                return part
    return None


def _how(path: Path, link: Path) -> str:
    return "is a symlink" if link == lexical(path) else f"passes through a symlink ({link})"


def cards_folder(cards_dir: Path) -> None:
    """Refuse a cards folder that is, or passes through, a symlink leaving the project."""
    link = leaving(cards_dir, project_of(cards_dir))
    if link is not None:
        message = f"the cards folder {_how(cards_dir, link)} leading outside the project: refused"
        raise CardErrors([Problem(Location(str(cards_dir)), message)])


def output_folder(out_dir: Path, cards_dir: Path) -> None:
    """Refuse an output folder in the project that is, or passes through, a symlink leaving it."""
    project = project_of(cards_dir)
    link = leaving(out_dir, project)
    if link is not None:
        raise OutputError(
            f"{out_dir}: the output folder {_how(out_dir, link)} leading outside the project {project}: "
            "refused (nothing was written)"
        )


def card_files(files: list[Path], cards_dir: Path) -> tuple[list[Path], list[Problem]]:
    """The card files that stay in the project, and a problem for each symlink leading out of it."""
    project = project_of(cards_dir)
    kept: list[Path] = []
    problems: list[Problem] = []
    for path in files:
        if path.is_symlink() and leaving(path, project) is not None:
            problems.append(Problem(Location(str(path)), "a symlink leading outside the project: refused"))
        else:
            kept.append(path)
    return kept, problems


def project_files(files: list[Path], cards_dir: Path) -> None:
    """Refuse any of `files` (the settings, the lock: files the build reads) that is a symlink leading
    out of the project."""
    problems = card_files(files, cards_dir)[1]
    if problems:
        raise CardErrors(problems)
