"""An order puzzle's steps in a worker: each compiled once, run on a namespace, a failure traced to
how far it got; a whole candidate run from the start (the plain search's unit).

Without indentation a step is one block, compiled on its own as always. With indentation a step is one
top-level statement assembled from several blocks; it is compiled with every line numbered as in the
card file, so a traceback shows the lines the learner would have written. Where only whether it
raises matters it runs as compiled from its source alone, or, in the fast search's tree and where its
structure is known (order.routes), block by block without being compiled whole (order.interpret).
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Hashable, Sequence
from types import CodeType

from quizgen.execution.protocol import SearchJob, SnippetJob
from quizgen.execution.worker.order_search.budget import Budget
from quizgen.execution.worker.order_search.indentation import shape
from quizgen.execution.worker.order_search.interpret import Interpreter, Run
from quizgen.execution.worker.order_search.names import reads_columns, reads_lines
from quizgen.execution.worker.order_search.program import CHECK, Chunk, program_of
from quizgen.execution.worker.order_search.reach import Tracer, annotates, loose, reached, scoped
from quizgen.execution.worker.order_search.routes import Record, Routes, Walked
from quizgen.execution.worker.order_search.torch_state import Settings, restore_settings
from quizgen.execution.worker.snippets import SnippetFailed, compile_snippet, fresh_namespace, run, run_call

Tail = tuple[tuple[int, bool], ...]  # Runs.tail
# A step's lines as (block, line within it); (-1 - level, 0) stands for any loose line at that level.
Lines = tuple[tuple[int, int], ...]
# How far a failed step got (its first lines), which of them may differ (loose, not reached), those
# lines so masked (Runs.masked), and its tail (order.reach)
Reached = tuple[int, tuple[int, ...], Lines, Tail]


class Runs:
    """Compiled steps and the ways to run them on a namespace."""

    def __init__(self, job: SearchJob, setups: list[CodeType], paths: set[str]) -> None:
        self.job, self.setups, self.paths = job, setups, paths
        self.program = program_of(job)
        written: list[SnippetJob] = job["lines"] + job["distractors"]
        self.snippets = [written[self.program.origin(b)] for b in range(len(self.program.codes))]
        self.check = compile_snippet(job["check"])
        self.codes: dict[Chunk, CodeType | SyntaxError] = {CHECK: self.check}
        self.bare: dict[Hashable, CodeType | None] = {}  # by `same`: _compiled
        self._passed: dict[tuple[Hashable, ...], bool] = {}  # by program (`same`, step for step)
        self._where: dict[Chunk, tuple[tuple[int, int], ...]] = {}
        self._beginnings: dict[Chunk, tuple[int, ...]] = {}  # (Runs.beginnings, asked of each sibling)
        # each beginning's number (Runs.beginnings), by the number of the one before and its last line
        self._numbered: dict[tuple[int, tuple[int, int]], int] = {}
        self._broken: dict[Chunk, bool] = {}
        self.reached: Reached | None = None  # the lines the last failed step ran, and what follows them
        self.budget = Budget(0)  # what the search may spend (set once the candidates are counted)
        self.phase = 0  # what the search is finding (execution.progress.PHASES)
        sources = [s["code"] for s in [*job["setup"], job["check"], *written]]
        self.alike = self.program.indented and not reads_columns(sources)  # `same` may join steps
        # Where no code can see line numbers, a step whose failure is not reported runs as compiled for
        # the syntax check (`bare`), not assembled numbered as in the card file (most of a step's cost).
        self.unnumbered = self.alike and not reads_lines(sources)
        self.one = 0.0  # CPU seconds the order as written took, setup included
        codes = self.program.codes
        free = self.program.indented and not scoped([s["code"] for s in written])
        self.loose = [free and loose(codes[b]) for b in range(len(codes))]  # (order.reach)
        # (order.routes: siblings that would run what the last step ran do what it did)
        # (a line that never runs may bind `__annotations__`: then no sibling is told from another's run)
        self.annotated = annotates([s["code"] for s in written])
        self.routes = Routes(self.program) if free and self.unnumbered and not self.annotated else None
        self.route: Record | Walked | None = None  # the last step's run as traced, when it has a route
        # (a step with a route runs block by block in the tree, and tells its route as it runs)
        self.interpreter = None if self.routes is None else Interpreter(self.routes, self.snippets[0]["path"])
        self.start_cost = 0.0  # CPU seconds the last fast search took to start (_tree)

    def code(self, step: Chunk) -> CodeType | SyntaxError:
        """The step's code, or the syntax error that makes every candidate with this step wrong."""
        if step not in self.codes:
            if not self.program.indented:
                self.codes[step] = compile_snippet(self.snippets[step[0]])
            else:
                try:
                    self.codes[step] = self._assemble(step)
                except SyntaxError as exc:  # e.g. a body without its `for`: that candidate is wrong
                    self.codes[step] = exc
        return self.codes[step]

    def _assemble(self, step: Chunk) -> CodeType:
        source, where = self.program.source(step)
        lines = [self.snippets[block]["line"] + k for block, k in where]
        try:
            tree = ast.parse(source, self.snippets[0]["path"])
        except SyntaxError as exc:  # numbered as in the card file, like a traceback
            exc.lineno = lines[min(max((exc.lineno or 1) - 1, 0), len(lines) - 1)]
            exc.end_lineno = None
            raise
        for node in ast.walk(tree):
            if not isinstance(node, (ast.stmt, ast.expr, ast.excepthandler, ast.arg, ast.keyword)):
                continue
            start, end = lines[node.lineno - 1], lines[(node.end_lineno or node.lineno) - 1]
            node.lineno, node.end_lineno = start, max(start, end)
            if end <= start and node.end_col_offset is not None:
                node.end_col_offset = max(node.end_col_offset, node.col_offset)
        return compile(tree, self.snippets[0]["path"], "exec", dont_inherit=True)

    def step(
        self,
        ns: dict[str, object],
        step: Chunk,
        numbered: bool = True,
        traced: bool = False,
        walked: bool = False,
    ) -> BaseException | None:
        """Run one step; what it raised (SnippetFailed, the job's own failure, propagates). When a
        statement of several blocks raises, `traced`, `reached` says which of its lines (block, line)
        ran. Without `numbered` (only whether it raises matters) its lines may be numbered from 1, and
        `walked` (the fast search's tree), a step with a route runs block by block (order.interpret)."""
        stepwise, told = None, traced and len(step) > 1  # (as a trace: only a statement of several blocks)
        if walked and not numbered and self.interpreter is not None and step != CHECK:
            stepwise = self.interpreter.start(step, ns, told)
        if stepwise is not None:
            return self._walk(stepwise, step, told)
        bare = None if numbered or not self.unnumbered or step == CHECK else self._compiled(step)
        code = self.code(step) if bare is None else bare
        self.reached = self.route = None
        if isinstance(code, SyntaxError):
            return code
        tracer = None
        if traced and len(step) > 1 and Tracer.usable():
            record = None
            if self.routes is not None:
                record = self.routes.record(step, code, self._numbers(step, bare is not None), ns)
            tracer = Tracer(code, len(self.where(step)), record)
            sys.settrace(tracer)
        try:
            run(code, ns, "the check" if step == CHECK else "a line")
        except SnippetFailed:
            raise
        except Exception as exc:
            if tracer is not None and tracer.installed():  # (else the step replaced it: nothing known)
                sys.settrace(None)
                numbers = self._numbers(step, bare is not None)
                found = reached(tracer.lines, numbers)
                if found is not None:
                    self._failed(step, found[1])
                self.route = tracer.record
            return exc
        else:
            if tracer is not None and tracer.installed():
                self.route = tracer.record
        finally:
            if tracer is not None:
                sys.settrace(None)
        return None

    def _walk(self, stepwise: Run, step: Chunk, told: bool) -> BaseException | None:
        """Runs.step for a step run block by block: what it tells (`told`) is what a traced run tells."""
        self.reached = self.route = None
        try:
            run_call("a line", stepwise.go)
        except SnippetFailed:
            raise
        except Exception as exc:
            if told:
                reached, at = stepwise.reached, stepwise.position
                ran = frozenset(j for j, (block, _) in enumerate(self.where(step)) if at[block] in reached)
                self._failed(step, ran)
                self.route = stepwise.route(raised=True)
            return exc
        if told:
            self.route = stepwise.route(raised=False)
        return None

    def _failed(self, step: Chunk, ran: frozenset[int]) -> None:
        """`reached`: the step raised after running its lines at the positions `ran`."""
        count = max(ran) + 1 if ran else 0
        where = self.where(step)
        mask = tuple(j for j in range(count) if j not in ran and self.loose[where[j][0]])
        lines = self.masked(where[:count], mask)
        self.reached = None if lines is None or not ran else (count, mask, lines, self.tail(step, count))

    def _numbers(self, step: Chunk, bare: bool) -> list[int]:
        """The numbers of the step's lines in the code that ran (from 1 where it ran bare)."""
        where = self.where(step)
        if bare:
            return list(range(1, len(where) + 1))
        return [self.snippets[block]["line"] + k for block, k in where]

    def broken(self, step: Chunk) -> bool:
        """Whether the step does not compile (it fails from any state). Most statements assembled
        from an indented puzzle's blocks do not: compiling the source alone tells, at a fraction of
        the cost of assembling one numbered as in the card file (its syntax is the same)."""
        if step not in self._broken:  # (asked of each step again and again: Onward, Tree._fails)
            if self.routes is not None and self.routes.structure(step) is not None:
                self._broken[step] = False  # (its blocks compile alone and fit as Python reads them)
            elif step in self.codes or not self.program.indented:
                self._broken[step] = isinstance(self.code(step), SyntaxError)
            else:
                self._broken[step] = self._compiled(step) is None
        return self._broken[step]

    def _compiled(self, step: Chunk) -> CodeType | None:
        """The step's source compiled as it is (as _assemble, but for the lines' numbers), once for
        the steps that are the same code (`same`); None when it does not compile."""
        key = self.same(step)
        if key not in self.bare:
            try:
                path = self.snippets[0]["path"]
                self.bare[key] = compile(self.program.source(step)[0], path, "exec", dont_inherit=True)
            except SyntaxError:
                self.bare[key] = None
        return self.bare[key]

    def same(self, step: Chunk) -> Hashable:
        """The step's code but for its columns (Program.same_code): steps alike do the same."""
        return self.program.same_code(step) if self.alike else step

    def program_of(self, chunks: Sequence[Chunk]) -> tuple[Hashable, ...]:
        """The program a whole candidate is (`same`, step for step)."""
        return tuple(self.same(step) for step in chunks)

    def passes(self, chunks: Sequence[Chunk], start: Settings) -> bool:
        """Whether a whole candidate passes, run from a fresh namespace and torch's settings `start`,
        unless a candidate that is the same program step for step already ran: blocks at other levels
        that indent a suite deeper make the same program, which does the same."""
        key = self.program_of(chunks)
        if key not in self._passed:
            restore_settings(start)
            self._passed[key] = self.attempt(chunks, numbered=False)[0] is None
        return self._passed[key]

    def where(self, step: Chunk) -> tuple[tuple[int, int], ...]:
        """Each of the step's lines as (block, line within the block)."""
        if step not in self._where:  # (as Program.source lists them, without putting the source together)
            self._where[step] = tuple(
                (block, k) for block in step for k in range(self.program.heights[block])
            )
        return self._where[step]

    def masked(self, lines: Lines, mask: tuple[int, ...]) -> Lines | None:
        """The lines with those at the positions in `mask` as any loose line at their level (None when
        one of them is not loose: order.reach)."""
        if not mask:
            return lines
        if mask[-1] >= len(lines):
            return None
        found = list(lines)
        for j in mask:
            block = found[j][0]
            if not self.loose[block]:
                return None
            found[j] = (-1 - self.program.levels[block], 0)
        return tuple(found)

    def tail(self, step: Chunk, count: int) -> Tail:
        """Where control can go from the step's first `count` lines to the lines after them: the levels
        of the blocks after them that each end the suites deeper than they are (each a new least level
        among those blocks; whether it is an else/except-like block, which catches or diverts control).
        Two steps that begin with the same lines and have the same tail run those lines alike: a suite
        of them that ends goes on to a line after them in both, or in neither (order.reach)."""
        where = self.where(step)
        if count >= len(where):
            return ()
        block, line = where[count]
        found: list[tuple[int, bool]] = []
        low = self.program.levels[block] if line else None  # (the rest of a block cut is the same block)
        for b in step[step.index(block) + (1 if line else 0) :]:
            level = self.program.levels[b]
            if low is None or level <= low:
                found.append((level, shape(self.program.codes[b]).continues))
                low = level
        return tuple(found)

    def beginnings(self, step: Chunk) -> tuple[int, ...]:
        """A number for each beginning of the step's lines (its first k, for k from 0) read with every
        loose line as any loose line at its level: equal numbers, equal beginnings so read. Lines that
        match under some mask (`masked`) match so too (order.threads.Failures files failures by them)."""
        found = self._beginnings.get(step)
        if found is None:
            loose, levels, numbers = self.loose, self.program.levels, self._numbered
            at, begins = 0, [0]
            for block, k in self.where(step):
                line = (-1 - levels[block], 0) if loose[block] else (block, k)
                at = numbers.setdefault((at, line), len(numbers) + 1)
                begins.append(at)
            found = self._beginnings[step] = tuple(begins)
        return found

    def attempt(
        self, chunks: Sequence[Chunk], ns: dict[str, object] | None = None, numbered: bool = True
    ) -> tuple[BaseException | None, dict[str, object], Chunk]:
        """Run a whole candidate from a fresh namespace: what failed (if anything), the namespace, and
        the step that failed (`numbered`: Runs.step)."""
        ns = fresh_namespace(self.setups, self.paths) if ns is None else ns
        for step in [*list(chunks) * self.job["repeat"], CHECK]:
            failure = self.step(ns, step, numbered)
            if failure is not None:
                return failure, ns, step
        return None, ns, CHECK
