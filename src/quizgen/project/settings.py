"""Project settings: `quizgen.toml` beside the cards folder, or else the `[tool.quizgen]` tables of the
`pyproject.toml` there (the same sections and keys, `[tool.quizgen.quiz]`, ...): the quiz's title,
default timeout and tolerance, the outputs for an LMS ([export]), and (a key before any section) the
torch versions the cards are verified on (torch_versions/matrix.py). quizgen.toml wins when both exist. Every
setting is optional; a file with a mistake is an error naming its line.

The file comes with the cards, so it is not trusted to lift a limit: its timeout may not pass the
ceiling the user sets (`--max-timeout`, QUIZGEN_MAX_TIMEOUT, else MAX_TIMEOUT). Its other settings
bound nothing the build spends (attempts are capped by MAX_ATTEMPTS, tolerances judge only answers)."""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import cast

from quizgen.cards.model import Tolerance
from quizgen.constants import DEFAULT_TIMEOUT, MAX_TIMEOUT, MAX_TIMEOUT_ENV
from quizgen.errors import CardErrors, Location, Problem
from quizgen.project import files
from quizgen.torch_versions import versions

FILE = "quizgen.toml"
PYPROJECT = "pyproject.toml"
PYPROJECT_TABLE = "tool.quizgen."  # the prefix of the settings' sections in pyproject.toml
MAX_BYTES = 1 << 20  # a settings file comes with the cards: as big as a card file at most

TEMPLATE = """\
# quizgen project settings; every line is optional.

# torch = ["1.13.1", "2.13.0"]   # the torch versions the cards are verified on (default: the installed one)

[quiz]
title = "{title}"          # the quiz's site title
value_answers = "choice"   # value cards with variants: "choice" (pick one) or "typed" (type it)
attempts = 3               # checks an order puzzle allows before its answer (a deck's `attempts:` wins)
shuffle = false            # quiz mode: cards in a new random order each run (a deck's `shuffle:` wins)

[defaults]
timeout = 30               # seconds one snippet may run (--timeout overrides it)
rtol = 1e-3                # how close a number must be to count as equal: |a - b| <= atol + rtol * |b|
atol = 1e-6                # (a card's own `tolerance:` overrides these)

[export]                   # for an LMS, each off unless set (docs/lms.md)
# scorm = true             # build/scorm/: each deck as a graded SCORM package, 1.2 and 2004 (or "2004")
# qti = true               # build/qti/: the cards an LMS grades itself, as a QTI 2.1 question bank
# moodle = true            # build/moodle/: the same cards as Moodle XML
# passing_score = 0.8      # the share of a deck's cards right that passes it, as SCORM reports
"""

_KEYS: dict[str, dict[str, type | tuple[type, ...]]] = {
    "quiz": {"title": str, "value_answers": str, "attempts": int, "shuffle": bool},
    "defaults": {"timeout": (int, float), "rtol": (int, float), "atol": (int, float)},
    "export": {"scorm": (bool, str), "qti": bool, "moodle": bool, "passing_score": (int, float)},
}
SCORM_VERSIONS = ("1.2", "2004")  # [export] scorm = true packages both


@dataclass(frozen=True)
class Exports:
    """The outputs for an LMS that quizgen.toml's [export] asks for (render/lms/: scorm.py, qti.py, ...)."""

    scorm: tuple[str, ...] = ()  # the SCORM versions each deck is packaged for: SCORM_VERSIONS
    qti: bool = False  # the cards an LMS grades itself, as a QTI 2.1 question bank
    moodle: bool = False  # ... as Moodle XML
    passing_score: float = 0.8  # the share of a deck's cards right that passes it (SCORM's success)


@dataclass(frozen=True)
class Settings:
    title: str = "Quizzes"
    timeout: float = DEFAULT_TIMEOUT
    tolerance: Tolerance = field(default_factory=Tolerance)
    value_answers: str = "choice"  # how value cards with variants are answered: VALUE_ANSWERS
    attempts: int = 3  # checks an order puzzle allows before its answer, unless its deck says otherwise
    shuffle: bool = False  # quiz mode shows a deck's cards in a new random order, unless its deck says
    torch: tuple[str, ...] = ()  # torch versions the cards are verified on, oldest first; (): the installed
    exports: Exports = field(default_factory=Exports)  # [export]: outputs for an LMS


VALUE_ANSWERS = ("choice", "typed")  # pick one of the executed answers, or type the answer
MAX_ATTEMPTS = 10  # checks an order puzzle may allow (quizgen.toml's [quiz] attempts, a deck's attempts)


def path_for(cards_dir: Path) -> Path:
    return cards_dir.parent / FILE


def source(cards_dir: Path) -> tuple[Path, str] | None:
    """The settings file in force and its sections' prefix: quizgen.toml, else a pyproject.toml that has
    a [tool.quizgen...] table, else None."""
    if path_for(cards_dir).is_file():
        return path_for(cards_dir), ""
    pyproject = cards_dir.parent / PYPROJECT
    try:
        text = files.read_text(pyproject, MAX_BYTES, follow=True) if pyproject.is_file() else ""
    except files.TooLarge:
        return pyproject, PYPROJECT_TABLE  # (refused by load, unread)
    except (OSError, UnicodeDecodeError):
        return None
    # `[ \t]`, not `\s`: `^\s*` would span lines, quadratic in a file of blank lines (hours for 1 MiB).
    found = re.search(r"^[ \t]*\[+[ \t]*tool\.quizgen\b", text, re.M)
    return (pyproject, PYPROJECT_TABLE) if found else None


def _table(data: dict[str, object], prefix: str) -> dict[str, object]:
    """The settings' sections of a parsed file (those under [tool.quizgen] in a pyproject.toml)."""
    for part in prefix.split(".")[:-1]:
        inner = data.get(part)
        data = inner if isinstance(inner, dict) else {}
    return data


def _line_of(text: str, section: str, key: str | None) -> int:
    """The line a section (or a key in it) is written on, for messages (1 when it cannot be found)."""
    where = _lines(text)
    start = where.get((section, None))
    if start is None or key is None:
        return start or 1
    return where.get((section, key), start)


@lru_cache(maxsize=2)
def _lines(text: str) -> dict[tuple[str, str | None], int]:
    """The line of each section header and of each key under it, read once per text: a file with many
    wrong keys asks for each one's line."""
    found: dict[tuple[str, str | None], int] = {}
    section = None
    for n, line in enumerate(text.splitlines(), 1):
        if header := re.match(r"\s*\[([^\[\]]*)\]", line):
            section = header.group(1)
            found.setdefault((section, None), n)
        elif section is not None and (key := re.match(r"\s*([^\s=]+)\s*=", line)):
            found.setdefault((section, key.group(1)), n)
    return found


def _setting_problem(prefix: str, section: str, key: str, value: object, max_timeout: float) -> str:
    """What is wrong with one setting of a section ("" when nothing is)."""
    expected = _KEYS[section].get(key)
    if expected is None:
        return f"unknown setting '{key}'; [{prefix}{section}] has {', '.join(_KEYS[section])}"
    if key == "scorm":
        return "" if isinstance(value, bool) or value in SCORM_VERSIONS else 'expected true, "1.2" or "2004"'
    if (expected is bool) != isinstance(value, bool) or not isinstance(value, expected):
        what = "true or false" if expected is bool else "text" if expected is str else "a number"
        return f"expected {what}"
    if key == "attempts" and not 1 <= value <= MAX_ATTEMPTS:  # type: ignore[operator]
        return f"expected a whole number from 1 to {MAX_ATTEMPTS}"
    if key == "value_answers" and value not in VALUE_ANSWERS:
        return f"expected {' or '.join(map(repr, VALUE_ANSWERS))}"
    if key == "passing_score" and not 0 <= value <= 1:  # type: ignore[operator]
        return "expected a share from 0 to 1 (0.8: four cards in five right)"
    if isinstance(value, (int, float)) and (value <= 0 if key == "timeout" else value < 0):
        return f"must be {'> 0' if key == 'timeout' else '>= 0'}"
    if key == "timeout" and value > max_timeout:  # type: ignore[operator]
        return _over_ceiling(value, max_timeout)  # type: ignore[arg-type]
    return ""


def _top_line(text: str, prefix: str, key: str) -> int:
    """The line of a key outside the sections (under [tool.quizgen] in a pyproject.toml)."""
    if prefix:
        return _line_of(text, prefix.rstrip("."), key)
    found = re.search(rf"^[ \t]*{re.escape(key)}[ \t]*=", text, re.M)
    return text.count("\n", 0, found.start()) + 1 if found else 1


def matrix_at(cards_dir: Path, version: str) -> Location:
    """Where the settings file lists `version` in its torch matrix (file:line:col), for a located error
    about that version; the `torch` key's line when the version is not found written there."""
    chosen = source(cards_dir)
    if chosen is None:
        return Location(str(cards_dir))
    path, prefix = chosen
    text = _text(path)
    line = _top_line(text, prefix, "torch")
    start = sum(len(row) for row in text.splitlines(keepends=True)[: line - 1])
    found = re.compile(rf"""["']{re.escape(version)}["']""").search(text, start)
    if found is None:
        return Location(str(path), line, field=f"{prefix}torch")
    before = text[: found.start()]
    col = found.start() - (before.rfind("\n") + 1) + 1
    return Location(str(path), before.count("\n") + 1, col, field=f"{prefix}torch")


def _matrix_problem(value: object) -> str:
    """Why a `torch` setting is not a list of torch versions ("" when it is one)."""
    example = 'a list of torch versions, e.g. torch = ["1.13.1", "2.13.0"]'
    if not isinstance(value, list) or not value:
        return f"expected {example}"
    for item in value:
        if not isinstance(item, str) or not versions.VERSION.match(item):
            return f"expected {example}; {item!r} is not a torch release (three numbers: 1.13.1)"
    for n, item in enumerate(value):
        if any(versions.same(item, other) for other in value[:n]):
            return f"torch version {item} is listed twice"
    return ""


def _over_ceiling(value: float, ceiling: float) -> str:
    return (
        f"timeout {value:g} is over the {ceiling:g} seconds this machine allows a project; to allow it, "
        f"run with --max-timeout {value:g} (or set {MAX_TIMEOUT_ENV}), or give --timeout yourself"
    )


def _text(path: Path) -> str:
    """The settings file's text; a located error when it is not one quizgen reads."""
    try:
        return files.read_text(path, MAX_BYTES, follow=True)  # (links: project/confine.py's to judge)
    except files.TooLarge:
        message = f"over {MAX_BYTES >> 20} MiB: not a settings file"
    except OSError as exc:
        message = f"cannot read: {exc.strerror or exc}"
    except UnicodeDecodeError as exc:
        message = f"cannot read: {exc}"
    raise CardErrors([Problem(Location(str(path)), message)])


def load(cards_dir: Path, max_timeout: float = MAX_TIMEOUT) -> Settings:
    """The project's settings (the defaults when it has no quizgen.toml nor [tool.quizgen]); a timeout
    over `max_timeout` (the user's ceiling) is an error at its line."""
    chosen = source(cards_dir)
    if chosen is None:
        return Settings()
    path, prefix = chosen
    name = str(path)
    text = _text(path)
    try:
        data = _table(tomllib.loads(text), prefix)
    except RecursionError:  # tomllib reads nested arrays and tables by recursion
        raise CardErrors([Problem(Location(name), "invalid TOML: nested too deeply")]) from None
    except tomllib.TOMLDecodeError as exc:
        found = re.search(r"\(at line (\d+), column (\d+)\)", str(exc))
        line, col = (int(found.group(1)), int(found.group(2))) if found else (0, 0)
        message = re.sub(r"\s*\(at line \d+, column \d+\)", "", str(exc))
        raise CardErrors([Problem(Location(name, line, col), f"invalid TOML: {message}")]) from None
    problems: list[Problem] = []
    values: dict[str, object] = {}
    for section, body in data.items():
        if section == "torch":  # a key of its own, before any section: `torch = ["1.13.1", "2.13.0"]`
            where = Location(name, _top_line(text, prefix, section), field=f"{prefix}torch")
            if wrong := _matrix_problem(body):
                problems.append(Problem(where, wrong))
            else:
                values["torch"] = tuple(versions.ordered(cast(list[str], body)))
            continue
        if section not in _KEYS or not isinstance(body, dict):
            where = Location(name, _line_of(text, prefix + section, None))
            sections = ", ".join(_KEYS)
            problems.append(Problem(where, f"unknown section [{prefix}{section}]; sections: {sections}"))
            continue
        for key, value in body.items():
            where = Location(name, _line_of(text, prefix + section, key), field=f"{prefix}{section}.{key}")
            if wrong := _setting_problem(prefix, section, key, value, max_timeout):
                problems.append(Problem(where, wrong))
            else:
                values[f"{section}.{key}"] = value
    if problems:
        raise CardErrors(problems, what="settings error")
    default = Settings()
    return Settings(
        title=str(values.get("quiz.title", default.title)),
        value_answers=str(values.get("quiz.value_answers", default.value_answers)),
        attempts=int(values.get("quiz.attempts", default.attempts)),  # type: ignore[call-overload]
        shuffle=bool(values.get("quiz.shuffle", default.shuffle)),
        torch=values.get("torch", ()),  # type: ignore[arg-type]
        timeout=float(values.get("defaults.timeout", default.timeout)),  # type: ignore[arg-type]
        tolerance=Tolerance(
            rtol=float(values.get("defaults.rtol", default.tolerance.rtol)),  # type: ignore[arg-type]
            atol=float(values.get("defaults.atol", default.tolerance.atol)),  # type: ignore[arg-type]
        ),
        exports=_exports(values),
    )


def _exports(values: dict[str, object]) -> Exports:
    """The [export] section's settings (each already checked)."""
    scorm = values.get("export.scorm", False)
    return Exports(
        scorm=SCORM_VERSIONS if scorm is True else (str(scorm),) if scorm else (),
        qti=bool(values.get("export.qti", False)),
        moodle=bool(values.get("export.moodle", False)),
        passing_score=float(values.get("export.passing_score", Exports.passing_score)),  # type: ignore[arg-type]
    )
