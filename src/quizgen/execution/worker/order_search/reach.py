"""How far a step of an indented puzzle got before it raised: its siblings that begin alike fail alike.

A step with indentation is one top-level statement (a loop with its body, say). From one state, when
such a step raises after running only its first m source lines (traced: no later line ran, not even
once), any step whose first m lines are the same, followed by blocks with the same tail (order.steps
Runs.tail: where a suite among those lines goes when it ends), raises too: Python runs a statement's
lines in the order control reaches them, the code compiled for those lines does not depend on the
lines after them, and with the same tail control leaves them for a later line (which never ran) in
the same cases, through the same handlers. So the search need not run those siblings (nor copy the
state for them).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from types import CodeType, FrameType
from typing import Any


def _nested(code: CodeType) -> set[CodeType]:
    """The code and every function, class and comprehension body written in it."""
    found = {code}
    for const in code.co_consts:
        if isinstance(const, CodeType):
            found |= _nested(const)
    return found


class Tracer:
    """The lines of one code object (and the code nested in it) that run, while it is installed."""

    def __init__(self, code: CodeType) -> None:
        self.codes = _nested(code)
        self.lines: set[int] = set()

    def __call__(self, frame: FrameType, event: str, arg: Any) -> Callable[..., Any] | None:
        if frame.f_code not in self.codes:
            return None
        if len(self.codes) == 1:  # no nested code to trace: every other frame's call (torch's) goes
            sys.settrace(getattr)  # to a function of C, getattr(frame, "call", None): None, untraced
        return self._line

    def _line(self, frame: FrameType, event: str, arg: Any) -> Callable[..., Any]:
        if event == "line":
            self.lines.add(frame.f_lineno)
        return self._line

    def installed(self) -> bool:
        return sys.gettrace() in (self, getattr)

    @staticmethod
    def usable() -> bool:
        """Whether lines can be traced here (not under a debugger or a coverage tool's own tracer)."""
        return sys.gettrace() is None


def reached(lines: set[int], numbers: list[int]) -> int | None:
    """How many of the step's lines (their numbers in the card file, in order) control reached: one
    past the last that ran. None when a line ran that is not the step's (then nothing is known)."""
    position = {number: k for k, number in enumerate(numbers)}
    if not lines or not lines <= set(position):
        return None
    return max(position[n] for n in lines) + 1
