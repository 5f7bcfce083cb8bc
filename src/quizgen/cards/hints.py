"""Hints for the YAML mistakes authors make most, added to PyYAML's terse messages; and the indentation
slips YAML reads without complaint or misreads: a key shifted a space, a key swallowed by `code: |`."""

from __future__ import annotations

import re
from collections.abc import Container, Iterable

import yaml

from quizgen.constants import MAX_CARD_FILE_BYTES
from quizgen.errors import Location, Problem
from quizgen.project import files

# What PyYAML says about the slips authors make most, and what they usually mean.
_HINTS = {
    "expected '-' indicator": "check this line's indentation: a card's keys line up under its `id`, "
    "and a new card starts with '- '",
    "expected <block end>": "check this line's indentation: it is indented less or more than the lines "
    "around it",
    "mapping values are not allowed": "a value holding ': ' needs quotes, e.g. front: \"Why: this?\"",
    "tab character": "indent with spaces, not tabs",
    "could not find expected ':'": "a key needs ': ' after it, or a text spanning lines needs quotes or `|`",
    "found unknown escape character": "in double quotes a backslash starts an escape (\\n, \\t): write "
    "TeX and other backslashes in single quotes ('\\(x^2\\)') or in a block scalar (`|`)",
}
# A value that opens with a double quote (a key's, or a list item's), and what follows the quote.
_QUOTED = re.compile(r'^ *(?:- +)?(?:[A-Za-z_][\w-]*: +)?(")(.*)$')
_CLOSED = re.compile(r'(?:[^"\\]|\\.)*"')  # text up to an unescaped closing quote
# A line that starts a mapping's key (perhaps as a list item): its indentation, then the key.
_KEY_LINE = re.compile(r"^( *)(?:- +)?([A-Za-z_][\w-]*):(?: |$)")
_SLIP = 2  # a key this many spaces off (or fewer) from the one above it was meant to line up with it


def yaml_hint(problem: str, text: str = "", line: int = 0) -> str:
    """A hint for a PyYAML problem message at a 1-based line of `text` (with a leading space and
    parentheses), or ''. A key that is a space or two off the one above it is named first."""
    shifted = _shifted_key(text.split("\n"), line) if text and line else None
    if shifted is not None:
        return f" ({shifted})"
    return next((f" ({hint})" for key, hint in _HINTS.items() if key in problem), "")


def unclosed_quote(text: str, line: int) -> tuple[int, int] | None:
    """(line, column), 1-based, of the nearest double quote at or before `line` that opens a value and is
    not closed on its own line: where a YAML error PyYAML finds lines later started."""
    lines = text.split("\n")
    for at in range(min(line, len(lines)), 0, -1):
        found = _QUOTED.match(lines[at - 1])
        if found is not None and _CLOSED.match(found.group(2)) is None:
            return at, found.start(1) + 1
    return None


def quote_problem(problem: str, text: str, line: int) -> tuple[int, int, str] | None:
    """A YAML error (at `line`) that an unclosed double quote above it caused: (line, column, message) at
    the quote. It is the cause when closing it on its line moves the error past `line` or ends it."""
    start = unclosed_quote(text, line)
    if start is None or (start[0] == line and "escape" in problem):
        return None
    lines = text.split("\n")
    lines[start[0] - 1] += '"'
    after = _error_line("\n".join(lines))
    if after is not None and after <= line:
        return None
    message = (
        f"invalid YAML: this double quote is not closed on its line, so YAML read the lines below as its "
        f"text and failed at line {line}: close it with '\"', or write a text holding quotes or spanning "
        "lines in single quotes or a block scalar (`|`), indented under its key"
    )
    return start[0], start[1], message


def _error_line(text: str) -> int | None:
    """The 1-based line of the text's YAML syntax error, None when it has none (nodes are composed, never
    constructed: nothing in the text runs or expands)."""
    try:
        yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        return mark.line + 1 if mark else 0
    except yaml.YAMLError:
        return 0
    return None


def _shifted_key(lines: list[str], line: int) -> str | None:
    """`key:` at `line` is indented a little more or less than the key above it, if so."""
    if not 0 < line <= len(lines) or (here := _KEY_LINE.match(lines[line - 1])) is None:
        return None
    col = here.start(2)
    for above in range(line - 1, 0, -1):
        if (there := _KEY_LINE.match(lines[above - 1])) is None:
            continue  # text or code between them
        off = col - there.start(2)
        if off == 0 or abs(off) > _SLIP:
            return None  # lined up with it (the slip is elsewhere), or too far off to be a slip
        how = f"{abs(off)} space{'s' if abs(off) > 1 else ''} {'more' if off > 0 else 'less'}"
        key, other = here.group(2), there.group(2)
        return (
            f"`{key}:` at line {line} is indented {how} than `{other}:` at line {above}: line it up with it"
        )
    return None


def _swallowed_keys(block: str, fields: Container[str]) -> tuple[int, list[str]] | None:
    """The keys of `fields` that a `|` block took in as its last lines (an indentation slip): the first
    one's line in the block (0-based) and their names. Code that only looks like a key (`answer: int = 3`)
    has more code after it; what a block swallows is its end: keys, and what is indented under them."""
    lines = block.split("\n")
    for at, text in enumerate(lines):
        found = _KEY_LINE.match(text)
        if found is None or found.group(2) not in fields or text.lstrip().startswith("-"):
            continue
        indent = len(found.group(1))
        rest = [ln for ln in lines[at + 1 :] if ln.strip()]
        keys = [m.group(2) for ln in rest if (m := _field(ln, indent, fields))]
        if all(len(ln) - len(ln.lstrip()) > indent or _field(ln, indent, fields) for ln in rest):
            return at, [found.group(2), *keys]
    return None


def _field(text: str, indent: int, fields: Container[str]) -> re.Match[str] | None:
    """The line as a key of `fields` at this indentation, if it is one."""
    found = _KEY_LINE.match(text)
    return found if found is not None and len(found.group(1)) == indent and found.group(2) in fields else None


def swallowed(path: str, raw: dict[str, yaml.Node], fields: Iterable[str], card: str | None) -> list[Problem]:
    """Each key the card lacks that a `code: |` block above took in, as its indentation slipped."""
    problems = []
    missing = {name for name in fields if name not in raw}
    for name, node in raw.items():
        if not (isinstance(node, yaml.ScalarNode) and node.style == "|"):
            continue
        found = _swallowed_keys(node.value, missing)
        if found is None:
            continue
        at, keys = found
        line = node.start_mark.line + 2 + at  # the block's text starts on the line after its `|`
        named = " and ".join(f"`{k}:`" for k in keys)
        are = f"at line {line} is" if len(keys) == 1 else f"from line {line} on are"
        message = f"{named} {are} indented into `{name}: |` above: un-indent to line up with `{name}:`"
        problems.append(Problem(Location(path, line, _key_column(path, line, keys[0]), card, name), message))
    return problems


def _key_column(path: str, line: int, key: str) -> int:
    """The column of `key` on a line of the file (0 when it cannot be read)."""
    try:
        text = files.read_text(path, MAX_CARD_FILE_BYTES, follow=True).split("\n")[line - 1]
    except (OSError, UnicodeDecodeError, IndexError):
        return 0
    return text.find(key) + 1
