"""Whether a snippet compiles, remembered: an unchanged card is not compiled again on the next run.

The loader compiles every snippet to report a syntax error at its line; most runs see the same snippets
as the last. The pipeline fills `known` from the build cache and stores `fresh` back (by digest).
"""

from __future__ import annotations

import ast
import hashlib
import sys
import warnings

known: set[str] = set()  # digests of snippets that compiled, this run or an earlier one
fresh: list[str] = []  # digests first seen compiling in this process, not yet stored


def digest(code: str, mode: str) -> str:
    """What a snippet's compiling depends on: the code, the mode and the Python that compiles it."""
    return hashlib.sha256(f"{sys.version}\0{mode}\0{code}".encode()).hexdigest()


def check(code: str, path: str, mode: str) -> None:
    """compile(code, path, mode), unless this code is known to compile; raises what compile raises."""
    key = digest(code, mode)
    if key in known:
        return
    # A SyntaxWarning (`1if x`) is the worker's to report with the card's output, not a stray line on
    # the build's stderr.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SyntaxWarning)
        compile(code, path, mode, dont_inherit=True)
    known.add(key)
    fresh.append(key)


def parse(code: str) -> ast.Module:
    """ast.parse(code), without the SyntaxWarning Python would print for card code (`1if x`): the
    worker runs the code and shows its warnings with the card's output; the parent only reads it."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SyntaxWarning)
        return ast.parse(code)
