"""A step run block by block along its structure (order.interpret) does what Python does running it
compiled whole, and tells what a traced run tells: its route and the blocks control reached."""

from __future__ import annotations

import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from quizgen.execution.worker.order_search.interpret import Interpreter
from quizgen.execution.worker.order_search.program import Program, program_of
from quizgen.execution.worker.order_search.reach import Tracer
from quizgen.execution.worker.order_search.routes import Routes, Trie, Walked, _Reading, run_along, watched
from tests.support.order_puzzles import job

SETUP = "n, m, w = 0, 1, 0\nxs = [3, 0, 2]\npairs = [(1, 2), (3, 4)]\n"
SIMPLE = [
    "n += 1",
    "m = m * 2 + n",
    "xs.append(n)",
    "xs.pop()",
    "z = 1 / (n - 2)",
    "pairs[0] = (n, m)",  # (a list a loop iterates, changed as it does)
    "n, m = m % 5, n",
    '"a string alone: no docstring here"',
    "t = [q * n for q in xs]",
]
TESTS = ["n > 1", "n % 2 == 0", "m == n", "xs.pop()", "len(xs) > 2", "not pairs", "xs[n]"]
# (every loop ends: `xs` may grow, `pairs` not; `w` only grows, and nothing else binds it)
LOOPS = ["for k in range(2):", "for k, (a, b) in enumerate(pairs):", "for q in xs[:3]:", "while w < 3:"]

Lines = list[tuple[str, int]]


def _suite(draw: st.DrawFn, level: int, depth: int) -> Lines:
    """A suite at `level`: one to three statements, simple or (`depth` left) compound."""
    found: Lines = []
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(["simple", "simple", "if", "loop"] if depth else ["simple"]))
        if kind == "simple":
            found.append((draw(st.sampled_from(SIMPLE)), level))
            continue
        if kind == "if":
            found.append((f"if {draw(st.sampled_from(TESTS))}:", level))
            found += _suite(draw, level + 1, depth - 1)
            tail = draw(st.sampled_from(["", "elif", "else"]))
            if tail == "elif":
                found.append((f"elif {draw(st.sampled_from(TESTS))}:", level))
                found += _suite(draw, level + 1, depth - 1)
            if tail == "else":
                found.append(("else:", level))
                found += _suite(draw, level + 1, depth - 1)
            continue
        header = draw(st.sampled_from(LOOPS))
        found.append((header, level))
        if header.startswith("while"):
            found.append(("w += 1", level + 1))  # (it ends)
        found += _suite(draw, level + 1, depth - 1)
        if draw(st.booleans()):
            found.append(("else:", level))
            found += _suite(draw, level + 1, depth - 1)
    return found


@st.composite
def statements(draw: st.DrawFn) -> Lines:
    """One top-level compound statement of random blocks, nested two deep at most."""
    header = draw(st.sampled_from([*LOOPS, f"if {TESTS[0]}:"]))
    body = [("w += 1", 1)] if header.startswith("while") else []
    return [(header, 0), *body, *_suite(draw, 1, 2)]


def _program(lines: Lines) -> tuple[Program, tuple[int, ...]]:
    """The program of those blocks, and the step that is all of them as written, once each (a block
    written twice is two blocks)."""
    program = program_of(job("", [line for line, _ in lines], "pass\n", levels=[lv for _, lv in lines]))
    step = []
    for b, (_, level) in enumerate(lines):
        step.append(
            next(
                i for i in range(len(program.codes)) if program.origin(i) == b and program.levels[i] == level
            )
        )
    return program, tuple(step)


def _observed(ns: dict[str, object], failure: BaseException | None) -> tuple[object, ...]:
    state = sorted((k, repr(v)) for k, v in ns.items() if k != "__builtins__")
    return state, None if failure is None else (type(failure), str(failure))


def _compiled(
    program: Program, step: tuple[int, ...], record: bool
) -> tuple[tuple[object, ...], object, set[int]]:
    """The step compiled whole and run traced as Runs.step traces it: what it did, its route as read,
    the positions of the blocks whose lines ran."""
    routes = Routes(program)
    source = program.source(step)[0]
    code = compile(source, "step", "exec")
    ns: dict[str, object] = {}
    exec(SETUP, ns)
    lines = source.count("\n")
    trace = routes.record(step, code, list(range(1, lines + 1)), ns)
    assert trace is not None
    tracer = Tracer(code, lines, trace)
    failure = None
    sys.settrace(tracer)
    try:
        exec(code, ns)
    except Exception as exc:
        failure = exc
    finally:
        sys.settrace(None)
    structure = routes.structure(step)
    assert structure is not None
    final = None if failure is not None else watched(trace.values())
    reading = _Reading(routes, step, trace.events, failure is not None, final)
    try:
        run_along(structure, reading)
        if failure is None:
            reading.end()
        effects: object = reading.effects
    except Exception as exc:  # (_Raised: the effect that raised, kept; Unknown: nothing told)
        effects = reading.effects if type(exc).__name__ == "_Raised" else None
    where = [b for b in step for _ in range(program.heights[b])]
    return _observed(ns, failure), effects, {step.index(where[n - 1]) for n in tracer.lines}


def _interpreted(
    program: Program, step: tuple[int, ...]
) -> tuple[tuple[object, ...], Walked | None, set[int]]:
    interpreter = Interpreter(Routes(program), "step")
    ns: dict[str, object] = {}
    exec(SETUP, ns)
    run = interpreter.start(step, ns, record=True)
    assert run is not None
    failure = None
    try:
        run.go()
    except Exception as exc:
        failure = exc
    return _observed(ns, failure), run.route(raised=failure is not None), run.reached


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(statements())
def test_a_statement_run_block_by_block_does_what_python_does(lines: Lines) -> None:
    program, step = _program(lines)
    compiled, effects, ran = _compiled(program, step, record=True)
    interpreted, route, reached = _interpreted(program, step)
    assert interpreted == compiled
    assert reached == ran
    if effects is not None:  # (a route the traced run tells, the run block by block tells alike)
        assert route is not None and route.effects == effects


def test_a_string_alone_is_a_docstring_only_as_the_first_statement() -> None:
    """Compiled whole, a step that is a string alone binds `__doc__`; a string inside a loop does not."""
    for lines, doc in ([('"hello"', 0)], True), ([("for k in range(1):", 0), ('"hello"', 1)], False):
        program, step = _program(lines)
        interpreted, _, _ = _interpreted(program, step)
        assert interpreted == _compiled(program, step, record=False)[0]
        assert ("__doc__" in dict(interpreted[0])) == doc  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("lines", "raises"),
    [
        (
            [("for k, (a, b) in [(1, (2, 3)), (4, (5,))]:", 0), ("n += a", 1)],
            ValueError,
        ),  # (a target that cannot bind)
        ([("for k in n:", 0), ("m = k", 1)], TypeError),  # (not iterable)
        ([("while xs.pop() < 5:", 0), ("n += 1", 1)], IndexError),  # (a test with effects, raising)
    ],
)
def test_a_header_fails_as_python_fails_it(lines: Lines, raises: type[Exception]) -> None:
    program, step = _program(lines)
    interpreted, _, _ = _interpreted(program, step)
    assert interpreted == _compiled(program, step, record=False)[0]
    assert interpreted[1] is not None and interpreted[1][0] is raises


def test_a_loop_lets_go_of_its_iterator_when_it_raises() -> None:
    """A generator only the loop holds is closed (its `finally` run) by the time the step's run raises,
    as when Python leaves the loop by an exception."""
    program, step = _program([("for k in make():", 0), ("z = 1 / k", 1)])
    interpreter = Interpreter(Routes(program), "step")
    closed: list[bool] = []

    def make():  # type: ignore[no-untyped-def]
        try:
            yield 1
            yield 0
        finally:
            closed.append(True)

    for interpreted in (True, False):
        closed.clear()

        ns: dict[str, object] = {"make": make}
        run = interpreter.start(step, ns, record=False)
        assert run is not None
        with pytest.raises(ZeroDivisionError):
            run.go() if interpreted else exec(program.source(step)[0], ns)
        assert closed == [True]


def test_a_route_told_by_a_run_block_by_block_tells_a_sibling() -> None:
    """As test_order_routes' traced runs: the sibling that differs only inside a suite never entered."""
    lines = [("for k in range(3):", 0), ("if k > 5:", 1), ("a = 1", 2), ("b = 2", 2), ("c = k", 1)]
    program, step = _program(lines)
    routes = Routes(program)
    interpreter = Interpreter(routes, "step")
    run = interpreter.start(step, {}, record=True)
    assert run is not None
    run.go()
    trie = Trie()
    routes.add(trie, step, run.route(raised=False), False, "node")  # type: ignore[arg-type]
    swapped = (step[0], step[1], step[3], step[2], step[4])
    assert routes.find(trie, swapped) == (False, "node")


def test_a_loop_run_block_by_block_does_not_look_up_the_builtins_a_card_may_rebind(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The compiled `for` and `if` look up no `iter`, `next` or `bool`: neither does a step run here."""
    import builtins

    program, step = _program([("for k in range(3):", 0), ("if k:", 1), ("n += k", 2)])
    expected = _compiled(program, step, record=False)[0]
    run = Interpreter(Routes(program), "step").start(step, {}, record=False)
    assert run is not None
    exec(SETUP, run.ns)

    def rebound(*args: object) -> object:
        raise AssertionError("a builtin the card rebound was called")

    for name in ("iter", "next", "bool"):
        monkeypatch.setattr(builtins, name, rebound)
    run.go()
    monkeypatch.undo()
    assert _observed(run.ns, None) == expected and run.ns["n"] == 3
