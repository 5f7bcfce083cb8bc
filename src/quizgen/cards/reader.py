"""Reading the fields of one YAML mapping node, reporting each problem at its file, line and column.

The loader reads decks with it and every card kind reads its own fields with it, so all of them
report the same way: `file:line:col: card 'id' -> field: message`.
"""

from __future__ import annotations

import ast
import difflib
import linecache
import re
import reprlib
import warnings
from typing import Any

import yaml

from quizgen.cards import syntax
from quizgen.cards.fields import Field
from quizgen.cards.model import Declared, Snippet, Tolerance
from quizgen.constants import MAX_ORDER_LINES
from quizgen.errors import Location, Problem

_CORE = "tag:yaml.org,2002:"
_CORE_TAGS: dict[type, tuple[str, ...]] = {
    yaml.ScalarNode: ("str", "int", "float", "bool", "null"),
    yaml.SequenceNode: ("seq",),
    yaml.MappingNode: ("map",),
}
_WHAT = {yaml.ScalarNode: "single value", yaml.SequenceNode: "list", yaml.MappingNode: "mapping"}
_PLAIN = "card files hold strings, numbers, booleans, null, lists and mappings only"
_SCALARS = yaml.constructor.SafeConstructor()  # its scalar constructors keep no state
_TAG = re.compile(r"^\S+$")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_BLOCK_STYLES = ("|", ">")


def did_you_mean(key: str, allowed: list[str]) -> str:
    close = difflib.get_close_matches(key, allowed, n=1)
    return f"; did you mean '{close[0]}'?" if close else f"; allowed: {', '.join(allowed)}"


class Unreadable(Exception):
    """A node the card format does not read: a tag other than YAML's core ones, or text its tag refuses."""

    def __init__(self, node: yaml.Node, message: str) -> None:
        super().__init__(message)
        self.node, self.message = node, message


def foreign(node: yaml.Node) -> str | None:
    """Why the node's own tag is not one of plain YAML's (str, int, float, bool, null, seq, map), if so."""
    name = node.tag.removeprefix(_CORE) if node.tag.startswith(_CORE) else None
    if name in _CORE_TAGS[type(node)]:
        return None
    tag = f"!!{name}" if name is not None else node.tag
    tag = tag if len(tag) <= 80 else tag[:77] + "..."
    if any(name in names for names in _CORE_TAGS.values()):
        return f"the YAML tag '{tag}' cannot mark a {_WHAT[type(node)]}"
    return f"the YAML tag '{tag}' is not allowed: {_PLAIN}"


def construct(node: yaml.Node) -> Any:
    """Plain data from a node, every alias written out (the loader bounds how far); raises Unreadable."""
    problem = foreign(node)
    if problem is not None:
        raise Unreadable(node, problem)
    if isinstance(node, yaml.SequenceNode):
        return [construct(item) for item in node.value]
    if isinstance(node, yaml.MappingNode):
        keys = [k for k, _ in node.value if not isinstance(k, yaml.ScalarNode)]
        if keys:
            raise Unreadable(keys[0], "a mapping key is a single value, not a list or mapping")
        return {construct(k): construct(v) for k, v in node.value}
    try:
        return _SCALARS.yaml_constructors[node.tag](_SCALARS, node)
    except (ValueError, KeyError, IndexError) as exc:  # `!!int x`, `!!bool maybe`, `!!float ""` (PyYAML
        # reads an empty int or float's first character), an int of 5000 digits
        message = f"cannot read {reprlib.repr(node.value)} as !!{node.tag.removeprefix(_CORE)}"
        raise Unreadable(node, message) from exc


def has_assert(code: str) -> bool:
    try:
        tree = syntax.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return True  # reported as a syntax error already
    return any(isinstance(n, ast.Assert) and not _always_true(n.test) for n in ast.walk(tree))


def _always_true(test: ast.expr) -> bool:
    """`assert True`, `assert 1` or `assert (x, "message")`: an assert that can never fail."""
    if isinstance(test, ast.Constant):
        return bool(test.value)
    return isinstance(test, ast.Tuple) and bool(test.elts)


class Reader:
    """The fields of one mapping (a deck's top level or a card), each read at most once."""

    def __init__(
        self,
        path: str,
        node: yaml.MappingNode,
        allowed: dict[str, Field],
        problems: list[Problem],
        card: str | None = None,
        tolerance: Tolerance | None = None,
        answers: str = "choice",
    ) -> None:
        self.path, self.node, self.card, self.problems = path, node, card, problems
        self.default_tolerance = tolerance or Tolerance()  # the project's (quizgen.toml), else ours
        self.answers = answers  # how value cards are answered: the deck's value_answers, else the project's
        if (problem := foreign(node)) is not None:
            self.error(self.loc(), problem)
        self.entries = self._entries(allowed)

    # -- locations and errors ----------------------------------------------------------------

    def loc(self, node: yaml.Node | None = None, field: str | None = None) -> Location:
        mark = (node or self.node).start_mark
        return Location(self.path, mark.line + 1, mark.column + 1, self.card, field)

    def at(self, key: str) -> Location:
        """The location of a field's value (the mapping's own when the field is absent)."""
        return self.loc(self.entries[key][1], key) if key in self.entries else self.loc()

    def error(self, location: Location, message: str) -> None:
        self.problems.append(Problem(location, message))

    def has(self, key: str) -> bool:
        return key in self.entries

    def value_node(self, key: str) -> yaml.Node:
        return self.entries[key][1]

    def locations(self) -> dict[str, Location]:
        return {key: self.loc(v, key) for key, (_, v) in self.entries.items()}

    def _entries(self, allowed: dict[str, Field]) -> dict[str, tuple[yaml.Node, yaml.Node]]:
        """Key -> (key node, value node); reports duplicate, unknown and missing keys."""
        entries: dict[str, tuple[yaml.Node, yaml.Node]] = {}
        for key_node, value_node in self.node.value:
            key = key_node.value if isinstance(key_node, yaml.ScalarNode) else None
            if not isinstance(key, str):
                self.error(self.loc(key_node), "keys must be plain names")
                continue
            if (problem := foreign(key_node)) is not None:  # `!x ask: ...`: reported, then read as `ask`
                self.error(self.loc(key_node, key), problem)
            if key in entries:
                first = entries[key][0].start_mark.line + 1
                self.error(self.loc(key_node, key), f"duplicate key '{key}' (first on line {first})")
            elif key not in allowed:
                self.error(self.loc(key_node, key), f"unknown key '{key}'{did_you_mean(key, list(allowed))}")
            else:
                entries[key] = (key_node, value_node)
        for key, f in allowed.items():
            if f.required and key not in entries:
                self.error(self.loc(), f"missing required field '{key}'")
        return entries

    # -- typed fields ------------------------------------------------------------------------

    def plain(self, key: str) -> yaml.Node | None:
        """A field's value node, None when it is absent or not plain YAML (reported: a tag, say)."""
        if key not in self.entries:
            return None
        node = self.entries[key][1]
        try:
            construct(node)
        except Unreadable as exc:
            self.error(self.loc(exc.node, key), exc.message)
            return None
        return node

    def scalar(self, node: yaml.Node, field: str) -> Any:
        """A single value under a field `plain` accepted."""
        if not isinstance(node, yaml.ScalarNode):
            self.error(self.loc(node, field), "expected a single value, not a list or mapping")
            return None
        return construct(node)

    def text(self, key: str, required: bool = False) -> Any:
        """A text field: "" when absent (None when `required`); a bare number or bool is read as text."""
        node = self.plain(key)
        if node is None:
            return None if required else ""
        value = self.scalar(node, key)
        if value is None:
            if isinstance(node, yaml.ScalarNode):
                self.error(self.loc(node, key), f"'{key}' is empty")
            return None if required else ""
        if not isinstance(value, str):
            value = node.value  # `ask: 3` is almost always meant as text
        return value

    def code(self, key: str, mode: str = "exec") -> Snippet | None:
        """A snippet, compiled now so a syntax error is reported at its line in the card file."""
        if key not in self.entries:
            return None
        node = self.entries[key][1]
        value = self.text(key, required=True)
        if value is None:
            return None
        line = node.start_mark.line + 1
        if isinstance(node, yaml.ScalarNode) and node.style in _BLOCK_STYLES:
            line += 1  # block scalar content starts on the line after the indicator
        snippet = Snippet(code=value, path=self.path, line=line)
        self.compiles(snippet, mode, key)
        return snippet

    def compiles(self, snippet: Snippet, mode: str, field: str) -> bool:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # e.g. SyntaxWarning: the card is judged by its asserts
                syntax.check(snippet.code, snippet.path, mode)  # lines counted from the snippet's first
        except (RecursionError, MemoryError):  # the parser's stack: `-------...1`, `1+1+...+1`
            where = Location(self.path, snippet.line, 0, self.card, field)
            self.error(where, "Python cannot compile this: it is nested too deeply")
            return False
        except SyntaxError as exc:
            line = snippet.line + exc.lineno - 1 if exc.lineno else snippet.line
            # exc.text may be the card file's line (compile reads it from disk): take the code's own.
            code_lines = snippet.code.splitlines()
            own = code_lines[line - snippet.line] if 0 <= line - snippet.line < len(code_lines) else None
            where = Location(self.path, line, self._column(line, own, exc.offset), self.card, field)
            self.error(where, f"Python syntax error: {exc.msg}")
            return False
        return True

    def _column(self, line: int, code_line: str | None, offset: int | None) -> int:
        """The file column of a syntax error's offset in a code line (0 when it cannot be placed)."""
        if not (code_line and offset):
            return 0
        linecache.checkcache(self.path)  # watch mode: the file may have changed since the last read
        stripped = code_line.strip("\n").lstrip()
        start = linecache.getline(self.path, line).find(stripped) if stripped else -1
        if start < 0:
            return 0
        return start - (len(code_line.strip("\n")) - len(stripped)) + offset

    def lines(self, key: str) -> list[Snippet]:
        """A list of code blocks, each compiled (an order puzzle's lines or distractors)."""
        return [s for s in self.blocks(key) if self.compiles(s, "exec", key)]

    def blocks(self, key: str) -> list[Snippet]:
        """A list of code blocks, one line or several each, not compiled: an indented puzzle's block
        need not compile alone (`for x in xs:`)."""
        node = self.plain(key)
        if node is None:
            return []
        if not isinstance(node, yaml.SequenceNode):
            self.error(self.loc(node, key), f"'{key}' must be a list of code lines")
            return []
        if len(node.value) > MAX_ORDER_LINES:  # reported, and only so many read
            message = f"'{key}' has {len(node.value)} lines, more than {MAX_ORDER_LINES}"
            self.error(self.loc(node, key), message)
        snippets = []
        for item in node.value[:MAX_ORDER_LINES]:
            value = self.scalar(item, key)
            if not isinstance(value, str) or not value.strip():
                self.error(self.loc(item, key), "each line is a non-empty string of code")
                continue
            block = isinstance(item, yaml.ScalarNode) and item.style in _BLOCK_STYLES
            snippets.append(Snippet(value, self.path, item.start_mark.line + 1 + block))
        return snippets

    def cite(self, key: str = "cite") -> dict[str, Snippet]:
        """Named expressions: `cite: {name: python expression}`."""
        node = self.plain(key)
        if node is None:
            return {}
        if not isinstance(node, yaml.MappingNode):
            self.error(self.loc(node, key), "cite maps names to Python expressions, e.g. `final: w.item()`")
            return {}
        cites: dict[str, Snippet] = {}
        for name_node, value_node in node.value:
            name = name_node.value if isinstance(name_node, yaml.ScalarNode) else None
            if not isinstance(name, str) or not _NAME.fullmatch(name):
                self.error(self.loc(name_node, key), f"a cite name is a Python identifier, not {name!r}")
                continue
            if name in cites:
                self.error(self.loc(name_node, key), f"cite name '{name}' appears twice")
                continue
            value = self.scalar(value_node, key)
            if not isinstance(value, str) or not value.strip():
                self.error(self.loc(value_node, key), f"cite '{name}' needs a Python expression")
                continue
            line = value_node.start_mark.line + 1
            if isinstance(value_node, yaml.ScalarNode) and value_node.style in _BLOCK_STYLES:
                line += 1
            snippet = Snippet(value, self.path, line)
            if self.compiles(snippet, "eval", key):
                cites[name] = snippet
        return cites

    def tags(self) -> list[str]:
        node = self.plain("tags")
        if node is None:
            return []
        if not isinstance(node, yaml.SequenceNode):
            self.error(self.loc(node, "tags"), "'tags' must be a list of words")
            return []
        tags = []
        for item in node.value:
            value = self.scalar(item, "tags")
            if not isinstance(value, str) or not _TAG.match(value):
                self.error(self.loc(item, "tags"), f"a tag is one word without spaces, not {value!r}")
            else:
                tags.append(value)
        return tags

    def boolean(self, key: str, default: bool = False) -> bool:
        node = self.plain(key)
        if node is None:
            return default
        value = self.scalar(node, key)
        if not isinstance(value, bool):
            self.error(self.loc(node, key), f"{key} is true or false, not {node.value!r}")
            return default
        return value

    def integer(self, key: str, low: int, high: int, default: int) -> int:
        node = self.plain(key)
        if node is None:
            return default
        value = self.scalar(node, key)
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            self.error(self.loc(node, key), f"{key} is a whole number {low}..{high}, not {node.value!r}")
            return default
        return value

    def declared(self, key: str) -> Declared | None:
        """A value written by the author (checked by the kind that reads it)."""
        node = self.plain(key)
        if node is None:
            return None
        return Declared(construct(node), self.loc(node, key))

    def tolerance(self, key: str = "tolerance") -> Tolerance:
        default = self.default_tolerance
        node = self.plain(key)
        if node is None:
            return default
        value = construct(node)
        where = self.loc(node, key)
        if not isinstance(value, dict) or not set(value) <= {"rtol", "atol"}:
            self.error(where, "tolerance is a mapping with 'rtol' and/or 'atol'")
            return default
        for name, number in value.items():
            if isinstance(number, bool) or not isinstance(number, (int, float)) or number < 0:
                self.error(where, f"tolerance {name} must be a number >= 0, not {reprlib.repr(number)}")
                return default
        given = {k: float(v) for k, v in value.items()}
        return Tolerance(rtol=given.get("rtol", default.rtol), atol=given.get("atol", default.atol))
