"""How far a step of an indented puzzle got before it raised: its siblings that begin alike fail alike.

A step with indentation is one top-level statement (a loop with its body, say). From one state, when
such a step raises after running only its first m source lines (traced: no later line ran, not even
once), any step whose first m lines are the same, followed by blocks with the same tail (order.steps
Runs.tail: where a suite among those lines goes when it ends), raises too: Python runs a statement's
lines in the order control reaches them, the code compiled for those lines does not depend on the
lines after them, and with the same tail control leaves them for a later line (which never ran) in
the same cases, through the same handlers. So the search need not run those siblings (nor copy the
state for them).

Among those first m lines, one control never reached may differ in the sibling (`loose`): where it is
an assignment or a call, one line at the same level in both, and the puzzle defines no function or
class and declares nothing global (so no line changes how another's names are looked up: at the top
level of a module and in its loops and ifs every name is looked up as it runs), the sibling's statement
is the failed one but for a simple statement control does not reach in either: the same lines run,
alike, up to the same raise. (An assignment or a call always runs code of its line, so a line that
ran is never taken for one that did not; a constant alone, compiled to nothing, is not loose.)
"""

from __future__ import annotations

import ast
import io
import keyword
import sys
import textwrap
import tokenize
from collections.abc import Callable
from types import CodeType, FrameType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from quizgen.execution.worker.order_search.routes import Record


def _nested(code: CodeType) -> set[CodeType]:
    """The code and every function, class and comprehension body written in it."""
    found = {code}
    for const in code.co_consts:
        if isinstance(const, CodeType):
            found |= _nested(const)
    return found


class Tracer:
    """The lines of one code object (and the code nested in it) that run, while it is installed. Once
    every one of the step's `lines` has run the trace can tell nothing more (a step that raises after
    them all rules out no sibling: `reached` is all its lines, whatever runs later), so it uninstalls
    itself: tracing slows every Python frame torch runs, not only the step's own."""

    def __init__(self, code: CodeType, lines: int, record: Record | None = None) -> None:
        self.codes = _nested(code)
        self.lines: set[int] = set()
        # how many lines the step has (each line seen once is all there is to see, unless the route
        # through them is recorded: order.routes)
        self.every = lines if record is None else -1
        self.record = record
        self.done = False  # every line ran: the tracer took itself out

    def __call__(self, frame: FrameType, event: str, arg: Any) -> Callable[..., Any] | None:
        if frame.f_code not in self.codes:
            return None
        if len(self.codes) == 1:  # no nested code to trace: every other frame's call (torch's) goes
            sys.settrace(getattr)  # to a function of C, getattr(frame, "call", None): None, untraced
        if self.record is not None and frame.f_code is self.record.code:
            return self._route
        return self._line

    def _route(self, frame: FrameType, event: str, arg: Any) -> Callable[..., Any] | None:
        """The step's own frame, its route recorded (order.routes)."""
        if event == "line":
            number = frame.f_lineno
            self.lines.add(number)
            self.record.line(number)  # type: ignore[union-attr]
        return self._route

    def _line(self, frame: FrameType, event: str, arg: Any) -> Callable[..., Any] | None:
        if event == "line":
            self.lines.add(frame.f_lineno)
            if len(self.lines) >= self.every > 0:
                self.done = True
                sys.settrace(None)
                return None
        return self._line

    def installed(self) -> bool:
        """Whether its record is whole: it ran to the end of the step, or saw every line."""
        return self.done or sys.gettrace() in (self, getattr)

    @staticmethod
    def usable() -> bool:
        """Whether lines can be traced here (not under a debugger or a coverage tool's own tracer)."""
        return sys.gettrace() is None


def reached(lines: set[int], numbers: list[int]) -> tuple[int, frozenset[int]] | None:
    """How many of the step's lines (their numbers in the card file, in order) control reached: one
    past the last that ran; and which of them ran (positions). None when a line ran that is not the
    step's (then nothing is known)."""
    position = {number: k for k, number in enumerate(numbers)}
    if not lines or not lines <= set(position):
        return None
    ran = frozenset(position[n] for n in lines)
    return max(ran) + 1, ran


_SCOPES = {"def", "class", "lambda", "global", "nonlocal", "async", "await", "yield"}


def loose(code: str) -> bool:
    """Whether a block is one line holding one assignment or call (see above)."""
    if "\n" in code.strip():
        return False
    try:
        body = ast.parse(code.strip()).body
    except SyntaxError:
        return False
    statement = body[0] if len(body) == 1 else None
    if isinstance(statement, ast.Expr):
        return isinstance(statement.value, ast.Call)
    return isinstance(statement, (ast.Assign, ast.AugAssign))


def scoped(sources: list[str]) -> bool:
    """Whether some block defines a function or a class, or declares a name global (or nonlocal): a
    line that does not run may then change how a line that does looks its names up."""
    for source in sources:
        try:
            tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
        except (tokenize.TokenError, IndentationError, SyntaxError):
            return True
        if any(t.type == tokenize.NAME and t.string in _SCOPES for t in tokens):
            return True
    return False


def annotates(sources: list[str]) -> bool:
    """Whether some block may hold an annotated assignment (`x: int = 1`): one anywhere in a module's
    code, run or not, makes Python bind `__annotations__` as the code starts, so a line that does not run
    changes what the lines that do may see (a statement whose first word names something, with a `:`
    outside brackets; unreadable code, a soft keyword such as `match` and `x = lambda: 0` count too)."""
    for source in sources:
        try:
            tokens = list(tokenize.generate_tokens(io.StringIO(textwrap.dedent(source)).readline))
        except (tokenize.TokenError, IndentationError, SyntaxError):
            return True
        depth, first = 0, None
        for tok in tokens:
            if tok.type == tokenize.NEWLINE:
                depth, first = 0, None
            elif tok.type in (tokenize.NL, tokenize.COMMENT, tokenize.INDENT, tokenize.DEDENT):
                continue
            elif first is None:
                first = tok
            if tok.type != tokenize.OP or first is None:
                continue
            depth += (tok.string in "([{") - (tok.string in ")]}")
            named = first.type == tokenize.NAME and not keyword.iskeyword(first.string)
            if tok.string == ":" and depth == 0 and named:
                return True
    return False
