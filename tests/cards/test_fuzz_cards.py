"""Fuzzing the loader: the shipped card files, mutated line by line and byte by byte, always load or fail
with located problems, fast and in bounded memory; never another exception.

Execution is not fuzzed here (running mutated snippets is the sandbox's business); one test drives
`quizgen check` end to end on a few mutated projects.
"""

from __future__ import annotations

import re
import tempfile
import time
import tracemalloc
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from quizgen.cards.loader import load_project
from quizgen.cli import cli
from quizgen.errors import CardErrors, Problem, QuizgenError
from tests.support.paths import REPO

CARDS = REPO / "cards"
SHIPPED = {path.name: path.read_bytes() for path in sorted(CARDS.glob("*.yaml"))}
CPU_SECONDS = 10.0  # the CPU one load of a mutated project may take (a shipped file takes a few hundredths):
# CPU time, not wall clock, and far above it, so a busy machine cannot fail the test, but a blow-up would
MEGABYTES = 32  # its peak Python allocations (a shipped file takes under 1)
FUZZ = settings(
    derandomize=True,  # the same examples on every run, so CI is reproducible
    database=None,
    deadline=None,  # a wall-clock deadline fails examples on a busy machine; CPU_SECONDS bounds the work
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

TAGS = [f"!{tag} ".encode() for tag in ("note", "", "k", "!str", "!int", "!float", "!bool", "!null", "!seq")]
TAGS += [f"!!{tag} ".encode() for tag in ("binary", "set", "omap", "pairs", "timestamp", "merge", "value")]
TAGS += [b"!!python/object/apply:os.system ", b"!<tag:yaml.org,2002:str> "]
ALIASES = [b"&a ", b"*a", b"*a ", b"&b [*a, *a, *a, *a] ", b"*b", b"*undefined", b"<<: *a", b"<< ", b"= "]
SYNTAX = [b"? ", b"- ", b": ", b"{", b"}", b"[", b"]", b",", b"|", b"|-", b">", b"#", b"'", b'"', b"\\", b"@"]
SYNTAX += [b"%YAML 1.1\n", b"---\n", b"...\n", b"`", b"{{", b"}}", b"{{answer}}", b"{{nope}}", b"\t", b"\r\n"]
ODD_BYTES = [bytes([b]) for b in (0x0D, 0x00, 0x07, 0x1B, 0x7F, 0xFF, 0xFE, 0xC3, 0x80)]
ODD_BYTES += [b"\xed\xa0\x80", b"\xf4\x90\x80\x80"] + [c.encode() for c in "\x85\u2028\ufeffé😀"]
SCALARS = [b"0x1F", b"1e999", b"-.inf", b".nan", b"~", b"null", b"yes", b"2024-01-01", b"0o17", b"1:30"]
SCALARS += [b"9" * 5000]  # past the digits Python turns into an int
TOKENS = TAGS + ALIASES + SYNTAX + ODD_BYTES + SCALARS


def laughs(indent: bytes, levels: int) -> bytes:
    """A billion laughs as keys at the given indentation: each level nine aliases of the one before."""
    rows = [indent + b"lol0: &lol0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n"]
    for i in range(1, levels):
        rows.append(indent + b"lol%d: &lol%d [%s]\n" % (i, i, b", ".join([b"*lol%d" % (i - 1)] * 9)))
    return b"".join(rows)


def _indent(line: bytes) -> bytes:
    return line[: len(line) - len(line.lstrip(b" "))]


def _value_start(line: bytes) -> int:
    """Where the line's value starts: after `key: `, after `- `, or after the indentation."""
    indent = len(_indent(line))
    if (colon := line.find(b": ")) >= 0:
        return colon + 2
    return indent + 2 if line[indent:].startswith(b"- ") else indent


@st.composite
def mutated(draw: st.DrawFn, source: bytes) -> bytes:
    """A card file with a few lines deleted, duplicated, swapped, re-indented, or with tags, aliases,
    alias bombs and odd bytes written into them."""
    lines = source.splitlines(keepends=True)
    for _ in range(draw(st.integers(1, 4))):
        i, j = draw(st.integers(0, len(lines) - 1)), draw(st.integers(0, len(lines) - 1))
        line = lines[i]
        op = draw(
            st.sampled_from(["delete", "duplicate", "swap", "indent", "insert", "value", "bomb", "alias"])
        )
        if op == "delete" and len(lines) > 1:
            del lines[i]
        elif op == "duplicate":
            lines.insert(j, line)
        elif op == "swap":
            lines[i], lines[j] = lines[j], line
        elif op == "indent":
            change = draw(st.sampled_from([b" ", b"  ", b"    ", b"\t", b"-"]))
            lines[i] = change + line if draw(st.booleans()) else line[len(change) :]
        elif op in ("insert", "value"):  # anywhere in the line, or where its value starts
            at = _value_start(line) if op == "value" else draw(st.integers(0, len(line)))
            lines[i] = line[:at] + draw(st.sampled_from(TOKENS)) + line[at:]
        elif op == "bomb":
            lines.insert(i, laughs(_indent(line), draw(st.integers(2, 10))))
        else:  # an anchor on one value, an alias for another
            start = _value_start(line)
            lines[i] = line[:start] + b"&x " + line[start:]
            lines[j] = lines[j][: _value_start(lines[j])] + b"*x\n"
    return b"".join(lines)


@st.composite
def projects(draw: st.DrawFn) -> dict[str, bytes]:
    """One or two mutated card files; a file may come twice, and then deck names and ids clash."""
    names = draw(st.lists(st.sampled_from(sorted(SHIPPED)), min_size=1, max_size=2))
    return {f"{n}-{name}": draw(mutated(SHIPPED[name])) for n, name in enumerate(names)}


def write(root: Path, files: dict[str, bytes]) -> Path:
    cards = root / "cards"
    cards.mkdir()
    for name, data in files.items():
        (cards / name).write_bytes(data)
    return cards


def assert_located(problems: list[Problem]) -> None:
    for problem in problems:
        assert problem.location.line > 0, str(problem)
        assert problem.message.strip(), str(problem)


def check_loader(files: dict[str, bytes]) -> None:
    """Loading these files returns, or raises quizgen's own error with every problem located, within
    CPU_SECONDS and MEGABYTES. Any other exception fails the example."""
    with tempfile.TemporaryDirectory() as tmp:
        cards = write(Path(tmp), files)
        tracemalloc.start()
        start = time.process_time()
        try:
            load_project(cards)
        except CardErrors as exc:
            assert exc.problems
            assert_located(exc.problems)
        except QuizgenError:
            pass  # quizgen's own (a usage error): a message for the user, not a crash
        finally:
            seconds = time.process_time() - start
            peak = tracemalloc.get_traced_memory()[1] / 2**20
            tracemalloc.stop()
    assert seconds < CPU_SECONDS, f"loading took {seconds:.2f} s of CPU"
    assert peak < MEGABYTES, f"loading peaked at {peak:.1f} MB"


@settings(FUZZ, max_examples=1000)
@given(files=projects())
def test_the_loader_reports_mutated_cards_as_located_problems(files: dict[str, bytes]) -> None:
    check_loader(files)


@pytest.mark.slow
@settings(FUZZ, max_examples=5000)
@given(files=projects())
def test_the_loader_reports_mutated_cards_as_located_problems_at_length(files: dict[str, bytes]) -> None:
    check_loader(files)


def test_the_shipped_cards_load_as_they_are() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        decks = load_project(write(Path(tmp), SHIPPED))
    assert len(decks) == len(SHIPPED)


@pytest.fixture(scope="module")
def shared_out(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One output folder for every checked project: unchanged cards come from its cache."""
    return tmp_path_factory.mktemp("fuzz-check")


@settings(FUZZ, max_examples=4, deadline=None)
@given(files=projects())
def test_check_on_mutated_projects_exits_0_or_1_with_located_problems(
    shared_out: Path, files: dict[str, bytes]
) -> None:
    root = Path(tempfile.mkdtemp(dir=shared_out))
    cards = write(root, files)
    args = [
        "check",
        "--cards",
        str(cards),
        "--out",
        str(shared_out / "build"),
        "--jobs",
        "1",
        "--timeout",
        "10",
    ]
    result = CliRunner().invoke(cli, args)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    assert result.exit_code in (0, 1), result.output
    # A snippet's own traceback may be quoted, indented, under its card's located error; quizgen's never.
    assert not re.search(r"^Traceback", result.output, re.MULTILINE), result.output
    problems = [
        line.removeprefix("Error: ")
        for line in result.output.splitlines()
        if line.removeprefix("Error: ").startswith(str(cards))
    ]
    assert all(re.match(rf"{re.escape(str(cards))}/[^:]+:[1-9][0-9]*[:\s]", p) for p in problems), problems
    assert result.exit_code == 0 or problems, result.output
