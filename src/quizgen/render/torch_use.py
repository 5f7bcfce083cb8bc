"""Whether a card's own code uses torch (so a plain-Python card never claims torch verified it): what
its code names, and what its deck's setup bound to torch, read without running it."""

from __future__ import annotations

import ast
import hashlib
import json
import re
import textwrap
from functools import cache

from quizgen.cards import syntax
from quizgen.execution.protocol import Job, job_snippets
from quizgen.render.kept import Kept


@cache
def statements(code: str) -> tuple[tuple[frozenset[str], frozenset[str], frozenset[str]], ...]:
    """Each statement of a snippet as (names it reads, names it binds, names it binds to torch); a piece
    that does not parse alone (an order line such as `for x in xs:`) as one statement reading every name
    it mentions. Cached: every card of a deck shares its setup."""
    try:
        statements = syntax.parse(textwrap.dedent(code)).body
    except SyntaxError:
        return ((frozenset(re.findall(r"[A-Za-z_]\w*", code)), frozenset(), frozenset()),)
    return tuple(_names(statement) for statement in statements)


def _names(statement: ast.stmt) -> tuple[frozenset[str], frozenset[str], frozenset[str]]:
    read: set[str] = set()
    bound: set[str] = set()
    for node in ast.walk(statement):
        if isinstance(node, ast.Name):
            (read if isinstance(node.ctx, ast.Load) else bound).add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
    torch: set[str] = set()
    if isinstance(statement, (ast.Import, ast.ImportFrom)):
        module = statement.module if isinstance(statement, ast.ImportFrom) else None
        torch = {
            (alias.asname or alias.name).split(".")[0]
            for alias in statement.names
            if (module or alias.name).split(".")[0] == "torch"
        }
    return frozenset(read), frozenset(bound), frozenset(torch)


# Whether a job's own code uses torch, by what it reads of the job (`torch_parts`): parsing every card's
# code was ~1.5 s of a 10,000-card build, so the answers are kept in the build cache ("torch" table,
# "1"/"0" by `torch_key`) and read back in one go (`recall`, the warm-up) or one by one (`kept_results`).
Parts = tuple[tuple[str, bool], ...]


@cache
def _torch_salt() -> str:
    from quizgen.project.store import code_stamp  # the rule below is quizgen's code: a change forgets

    return code_stamp()


def torch_parts(job: Job) -> Parts:
    """All `uses_torch` reads of a job: its snippets' code, and which of them are the setup's."""
    setup = job["setup"]
    return tuple((snippet["code"], snippet in setup) for snippet in job_snippets(job))


def torch_key(parts: Parts) -> str:
    """The store's name for a job's answer."""
    return hashlib.sha256(json.dumps([_torch_salt(), parts]).encode()).hexdigest()


TORCH_USE: Kept[Parts, bool] = Kept(torch_key, lambda uses: "1" if uses else "0", lambda text: text == "1")
recall = TORCH_USE.recall  # earlier builds' answers, read in one go by the warm-up


def uses_torch(job: Job, parts: Parts | None = None) -> bool:
    """Whether the card's own code uses torch: names it, or names what the setup made with it.

    A deck's `import torch` alone does not count, so a plain-Python card never claims torch verified it.
    `parts` are the job's `torch_parts`, when known.
    """
    return TORCH_USE.get(parts or torch_parts(job), lambda: _parsed_uses_torch(job))


def _parsed_uses_torch(job: Job) -> bool:
    setup = job["setup"]
    own = [snippet["code"] for snippet in job_snippets(job) if snippet not in setup]  # setups come first
    torch = set(_torch_names(tuple(snippet["code"] for snippet in setup)))
    if any(_reads_attribute_of(code, torch) for code in own):
        return True  # what the walk below would find, found without parsing (most cards)
    for code in own:
        for read, _, imported in statements(code):
            if imported or not read & torch:
                torch |= imported
            else:
                return True
    return False


@cache
def _torch_names(setups: tuple[str, ...]) -> frozenset[str]:
    """The names a job's setups bind to torch or to something made with it (every card of a deck asks)."""
    torch: set[str] = set()
    for code in setups:
        for read, bound, imported in statements(code):
            torch |= imported if imported or not read & torch else bound
    return frozenset(torch)


# A comment, a one-line string, or a whole name (strings and comments are skipped over whole).
_WORD = re.compile(r"#[^\n]*|'(?:[^'\\\n]|\\.)*'|\"(?:[^\"\\\n]|\\.)*\"|(?<!\w)[^\W\d]\w*")


def _reads_attribute_of(code: str, names: set[str]) -> bool:
    """True when `code` surely reads one of `names`: one stands before a `.` (`torch.ones`), outside
    strings, comments, imports and attributes (`x.torch.y`). Such a name is an `ast.Name` in Load context
    in a statement that is no import, so the walk in `_parsed_uses_torch` would return True there too.
    False says nothing; code where lines may join or strings span lines is left to the walk."""
    if not names or "\\" in code or "'''" in code or '"""' in code:
        return False
    for match in _WORD.finditer(code):
        word = match.group()
        if word not in names or not code[match.end() :].lstrip(" ").startswith("."):
            continue
        start = code.rfind("\n", 0, match.start()) + 1
        end = code.find("\n", match.end())
        if "import" in code[start : end if end >= 0 else len(code)]:
            continue
        if not code[: match.start()].rstrip().endswith("."):
            return True
    return False
