"""Hints for the YAML mistakes authors make most, added to PyYAML's terse messages."""

from __future__ import annotations

# What PyYAML says about the slips authors make most, and what they usually mean.
_HINTS = {
    "expected '-' indicator": "check this line's indentation: a card's keys line up under its `id`, "
    "and a new card starts with '- '",
    "expected <block end>": "check this line's indentation: it is indented less or more than the lines "
    "around it",
    "mapping values are not allowed": "a value holding ': ' needs quotes, e.g. front: \"Why: this?\"",
    "tab character": "indent with spaces, not tabs",
    "could not find expected ':'": "a key needs ': ' after it, or a text spanning lines needs quotes or `|`",
}


def yaml_hint(problem: str) -> str:
    """A hint for a PyYAML problem message (with a leading space and parentheses), or ''."""
    return next((f" ({hint})" for key, hint in _HINTS.items() if key in problem), "")
