"""Project settings: `quizgen.toml` beside the cards folder (the quiz's title, default timeout and
tolerance). Every setting is optional; a file with a mistake is an error naming its line."""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from quizgen.cards.model import Tolerance
from quizgen.constants import DEFAULT_TIMEOUT
from quizgen.errors import CardErrors, Location, Problem

FILE = "quizgen.toml"

TEMPLATE = """\
# quizgen project settings; every line is optional.

[quiz]
title = "{title}"          # the quiz's site title

[defaults]
timeout = 30               # seconds one snippet may run (--timeout overrides it)
rtol = 1e-3                # how close a number must be to count as equal: |a - b| <= atol + rtol * |b|
atol = 1e-6                # (a card's own `tolerance:` overrides these)
"""

_KEYS: dict[str, dict[str, type | tuple[type, ...]]] = {
    "quiz": {"title": str},
    "defaults": {"timeout": (int, float), "rtol": (int, float), "atol": (int, float)},
}


@dataclass(frozen=True)
class Settings:
    title: str = "Quizzes"
    timeout: float = DEFAULT_TIMEOUT
    tolerance: Tolerance = field(default_factory=Tolerance)


def path_for(cards_dir: Path) -> Path:
    return cards_dir.parent / FILE


def _line_of(text: str, section: str, key: str | None) -> int:
    """The line a section (or a key in it) is written on, for messages (1 when it cannot be found)."""
    lines = text.splitlines()
    start = next((n for n, ln in enumerate(lines) if re.match(rf"\s*\[{re.escape(section)}\]", ln)), None)
    if start is None or key is None:
        return (start or 0) + 1
    for n in range(start + 1, len(lines)):
        if re.match(r"\s*\[", lines[n]):
            break
        if re.match(rf"\s*{re.escape(key)}\s*=", lines[n]):
            return n + 1
    return start + 1


def load(cards_dir: Path) -> Settings:
    """The project's settings (the defaults when it has no quizgen.toml)."""
    path = path_for(cards_dir)
    if not path.is_file():
        return Settings()
    name = str(path)
    try:
        text = path.read_text(encoding="utf-8")
        data = tomllib.loads(text)
    except (OSError, UnicodeDecodeError) as exc:
        raise CardErrors([Problem(Location(name), f"cannot read: {exc}")]) from None
    except tomllib.TOMLDecodeError as exc:
        found = re.search(r"\(at line (\d+), column (\d+)\)", str(exc))
        line, col = (int(found.group(1)), int(found.group(2))) if found else (0, 0)
        message = re.sub(r"\s*\(at line \d+, column \d+\)", "", str(exc))
        raise CardErrors([Problem(Location(name, line, col), f"invalid TOML: {message}")]) from None
    problems: list[Problem] = []
    values: dict[str, object] = {}
    for section, body in data.items():
        if section not in _KEYS or not isinstance(body, dict):
            where = Location(name, _line_of(text, section, None))
            problems.append(Problem(where, f"unknown section [{section}]; sections: quiz, defaults"))
            continue
        for key, value in body.items():
            expected = _KEYS[section].get(key)
            where = Location(name, _line_of(text, section, key), field=f"{section}.{key}")
            if expected is None:
                allowed = ", ".join(_KEYS[section])
                problems.append(Problem(where, f"unknown setting '{key}'; [{section}] has {allowed}"))
            elif isinstance(value, bool) or not isinstance(value, expected):
                problems.append(Problem(where, f"expected {'text' if expected is str else 'a number'}"))
            elif isinstance(value, (int, float)) and (value <= 0 if key == "timeout" else value < 0):
                problems.append(Problem(where, f"must be {'> 0' if key == 'timeout' else '>= 0'}"))
            else:
                values[key] = value
    if problems:
        raise CardErrors(problems, what="settings error")
    default = Settings()
    return Settings(
        title=str(values.get("title", default.title)),
        timeout=float(values.get("timeout", default.timeout)),  # type: ignore[arg-type]
        tolerance=Tolerance(
            rtol=float(values.get("rtol", default.tolerance.rtol)),  # type: ignore[arg-type]
            atol=float(values.get("atol", default.tolerance.atol)),  # type: ignore[arg-type]
        ),
    )
