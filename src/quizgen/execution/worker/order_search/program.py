"""An order puzzle as a program: its blocks, the steps a candidate runs, and the names each step uses.

A candidate is an order of the blocks; in an indented puzzle each block keeps its level, and the
candidate is the program the blocks make, joined with their indentation. It runs as steps: without
indentation each block is a step; with it, a step is one top-level statement of that program (a
level-0 block with the blocks indented under it, and `else:`-like blocks that continue it).
Pure: no torch, so the loader may use it too.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import cached_property

from quizgen.execution.protocol import SearchJob
from quizgen.execution.worker.order_search.indentation import logical_columns, read_suites, shape

Chunk = tuple[int, ...]  # one step: its blocks, in program order
CHECK: Chunk = ()  # the step that runs the check
Read = tuple[int, tuple[int, ...]]  # same_code's key, the suites open


@dataclass
class Memo:
    """What every Orders of one program works out once (Orders.key), and Program.same_code's readings."""

    fits: dict[tuple[tuple[int, ...], int, int], tuple[int, ...] | None] = field(default_factory=dict)
    counts: dict[Hashable, int] = field(default_factory=dict)  # candidates from the blocks left
    next: dict[Hashable, list[tuple[Chunk, int]]] = field(default_factory=dict)  # steps, the blocks placed
    # the candidates that go on from a statement's beginning (Orders._within), by what they depend on
    within: dict[tuple[Hashable, tuple[int, ...], int], int] = field(default_factory=dict)
    read: dict[Chunk, Read | None] = field(default_factory=dict)
    # same_code's keys: one number for each reading (the key before the last block, its origin, the
    # suites its lines open and close), so a key is hashed and compared as one int, however long
    keys: dict[tuple[int, int, tuple[int, ...]], int] = field(default_factory=dict)
    suites: dict[tuple[int, tuple[int, ...]], tuple[tuple[int, ...], tuple[int, ...]] | None] = field(
        default_factory=dict
    )


@dataclass(frozen=True)
class Program:
    """The blocks (lines, then distractors) and how they combine."""

    codes: tuple[str, ...]  # each block's code, its first line unindented
    lines: int  # how many of the blocks are the puzzle's lines (the rest are distractors)
    unit: int  # spaces per level; 0 when indentation is not part of the answer
    levels: tuple[int, ...]  # each block's level (all 0 without indentation)
    # with indentation, after the blocks: each block again at every other level a learner may give it
    # (`origin` is the block each one is; a candidate uses a block once, at one of its levels)
    origins: tuple[int, ...] = ()

    @property
    def indented(self) -> bool:
        return self.unit > 0

    @cached_property
    def blocks(self) -> int:
        """How many blocks the puzzle has (lines and distractors, each counted once)."""
        return len(self.codes) - len(self.origins)

    @cached_property
    def _origins(self) -> tuple[int, ...]:
        return (*range(self.blocks), *self.origins)

    def origin(self, block: int) -> int:
        """The block a block at another level is (a block written so is itself)."""
        return self._origins[block]

    def placement(self, block: int) -> tuple[int, int]:
        """(block, level) of a block at any level."""
        return self.origin(block), self.levels[block]

    def at_levels(self) -> Program:
        """The program with every block also at every other level from 0 to one past the deepest
        used (the levels the quiz lets a learner give a line)."""
        if not self.indented or self.origins:
            return self
        top = max(self.levels, default=0) + 1
        codes, levels, origins = list(self.codes), list(self.levels), []
        for b in range(len(self.codes)):
            for level in range(top + 1):
                if level != self.levels[b]:
                    codes.append(self.codes[b])
                    levels.append(level)
                    origins.append(b)
        return Program(tuple(codes), self.lines, self.unit, tuple(levels), tuple(origins))

    @cached_property
    def memo(self) -> Memo:
        """What the program's candidates' spaces work out once for all of them (Orders.key)."""
        return Memo()

    @cached_property
    def heights(self) -> tuple[int, ...]:
        """How many lines each block has (as `source` splits them)."""
        return tuple(len(code.rstrip("\n").split("\n")) for code in self.codes)

    def source(self, chunk: Chunk) -> tuple[str, list[tuple[int, int]]]:
        """The chunk's source and, for each of its lines, (block, line within the block)."""
        text: list[str] = []
        where: list[tuple[int, int]] = []
        for block in chunk:
            indent = " " * (self.unit * self.levels[block])
            for k, line in enumerate(self.codes[block].rstrip("\n").split("\n")):
                text.append(indent + line if line.strip() else "")
                where.append((block, k))
        return "\n".join(text) + "\n", where

    def starts(self, block: int) -> bool:
        """Whether the block begins a top-level statement (with indentation, the others join one)."""
        return not self.indented or (self.levels[block] == 0 and not shape(self.codes[block]).continues)

    def chunks(self, order: Sequence[int]) -> tuple[Chunk, ...]:
        """The steps of one candidate."""
        steps: list[list[int]] = []
        for b in order:
            if not steps or (self.starts(b) and not shape(self.codes[steps[-1][-1]]).decorates):
                steps.append([])
            steps[-1].append(b)
        return tuple(tuple(s) for s in steps)

    def same_code(self, chunk: Chunk) -> Hashable:
        """A key equal for two steps exactly when Python reads them as the same statement, line for line:
        the same blocks in the same order, each logical line opening, keeping or closing the same
        suites (with indentation a suite may be indented by any amount: `if c:` with its body at level
        2 or 3 is one statement). Steps with equal keys compile to the same code but for the columns
        it records, so from one state they do the same. A step whose lines cannot be followed so is
        its own key. (A key read is a number: one per reading, Memo.keys.)"""
        if not self.indented or not chunk:
            return chunk
        read = self._read(chunk)
        return chunk if read is None else read[0]

    def _read(self, chunk: Chunk) -> Read | None:
        """same_code's key of a chunk and Python's stack of indentation after it, read block by block
        from the reading of the chunk without its last block (chunks share their beginnings: the
        search asks of tens of thousands)."""
        reads = self.memo.read
        if chunk in reads:
            return reads[chunk]
        before: Read | None = (0, (0,)) if len(chunk) == 1 else self._read(chunk[:-1])
        read = None
        if before is not None:
            block = chunk[-1]
            moved = self._suites(block, before[1])
            if moved is not None:
                keys = self.memo.keys
                key = keys.setdefault((before[0], self.origin(block), moved[0]), len(keys) + 1)
                read = key, moved[1]
        reads[chunk] = read
        return read

    def _suites(self, block: int, stack: tuple[int, ...]) -> tuple[tuple[int, ...], tuple[int, ...]] | None:
        """read_suites of the block's logical lines at its level after `stack` (None: they cannot be read)."""
        suites = self.memo.suites
        if (block, stack) not in suites:
            columns = logical_columns(self.codes[block])
            shift = self.unit * self.levels[block]
            read = None if columns is None else read_suites([shift + column for column in columns], stack)
            suites[(block, stack)] = read
        return suites[(block, stack)]

    def fits(self, stack: tuple[int, ...], last: int, block: int) -> tuple[int, ...] | None:
        """The levels of the suites open once `block` comes right after `last` inside one statement,
        `stack` being those open before it; None when its level cannot compile there. As Python reads
        indentation: after a line that opens a suite any deeper level opens it (a suite may be indented
        by any amount), elsewhere a line stays in an open suite or returns to an enclosing one."""
        s, level, at = shape(self.codes[last]), self.levels[last], self.levels[block]
        if s.opens:
            return (*stack, at) if at > level + s.inner else None
        if s.decorates:
            return stack if at == level else None
        inside = tuple(level + k for k in range(1, s.inner + 1))  # suites the block opens within itself
        open_levels = (*(x for x in stack if x <= level), *inside)
        if at not in open_levels or (at == 0 and not shape(self.codes[block]).continues):
            return None
        return tuple(x for x in open_levels if x <= at)


def program_of(job: SearchJob) -> Program:
    """The job's program, with indentation its blocks at every level they may take too (at_levels)."""
    blocks = [s["code"] for s in job["lines"] + job["distractors"]]
    unit = job.get("indent", 0)
    levels = tuple(job.get("levels") or [0] * len(blocks))
    return Program(tuple(blocks), len(job["lines"]), unit, levels).at_levels()


@dataclass(frozen=True)
class Share:
    """One part of a search split across workers: the candidates that begin with one of its prefixes."""

    prefixes: frozenset[tuple[Chunk, ...]]  # the part's prefixes and every prefix of them
    depth: int  # steps in the longest of them (a complete candidate may be shorter)

    def allows(self, chunks: tuple[Chunk, ...]) -> bool:
        """Whether a candidate (or a prefix of one) beginning so is this part's."""
        return chunks[: self.depth] in self.prefixes


def flatten(chunks: Sequence[Chunk]) -> list[int]:
    """A candidate's order from its steps."""
    return [b for chunk in chunks for b in chunk]


class Orders:
    """The candidates of one puzzle: orders of `blocks` that respect `before` (where a block runs at the
    top level) and, with indentation, whose levels make a program; with `levels`, each block at any of
    its levels (Program.at_levels). A mask of placed blocks has one bit per block, whatever its level."""

    def __init__(
        self, program: Program, blocks: Sequence[int], before: dict[int, set[int]], levels: bool = False
    ) -> None:
        self.program, self.blocks = program, list(blocks)
        self.needs = {b: sum(1 << j for j in before.get(b, ())) for b in self.blocks}
        self.full = sum(1 << b for b in self.blocks)
        chosen = set(self.blocks)
        every = range(len(program.codes)) if levels else range(program.blocks)
        self.choices = [b for b in every if program.origin(b) in chosen]  # the blocks at their levels
        self._next: dict[int, list[tuple[Chunk, int]]] = {}
        self._completions: dict[int, int] = {}
        self._keys: dict[int, Hashable] = {}
        self._counts: dict[int, int] = {}  # count(limit) by limit
        self.memo = program.memo  # (shared by every Orders of the program: `key`)
        self._fitting = self.memo.fits
        self._follows: dict[tuple[tuple[int, ...], int], list[tuple[int, int, int, tuple[int, ...]]]] = {}
        self._ends = [not (s.opens or s.decorates) for s in map(shape, program.codes)]
        origin, level = program.origin, program.levels
        self._needs = [(b, 1 << origin(b), 0 if level[b] else self.needs[origin(b)]) for b in self.choices]
        self._levels, self._sorted = levels, sorted(self.needs)

    def key(self, placed: int) -> Hashable:
        """What the steps that can follow `placed` depend on, whichever Orders of the program asks: the
        blocks left, which of them each needs first, and whether blocks move between levels. A
        distractor's spaces meet the same blocks left again and again (one with a line in place of
        the distractor is the other once both are placed), so what one works out the others read."""
        found = self._keys.get(placed)
        if found is None:
            left = self.full & ~placed
            needs = tuple(self.needs[b] & left for b in self._sorted if left >> b & 1)
            found = self._keys[placed] = (self._levels, left, needs)
        return found

    def completions(self, placed: int) -> int:
        """How many candidates begin with the blocks in `placed` (1 once every block is placed)."""
        if placed == self.full:
            return 1
        found = self._completions.get(placed)
        if found is None:
            found = self._completions[placed] = self._count(placed, None)
        return found

    def ready(self, b: int, placed: int) -> bool:
        b = self.program.origin(b)
        return not placed >> b & 1 and placed & self.needs[b] == self.needs[b]

    def next_chunks(self, placed: int) -> list[tuple[Chunk, int]]:
        """Each step that can come next and still lead to a whole candidate, with the blocks placed
        after it (a bit mask). A step that leaves only blocks no statement can hold (a loop taking
        part of its body, the rest of which cannot stand at the top level) is no candidate's."""
        found = self._next.get(placed)
        if found is None:
            shared, key = self.memo.next, self.key(placed)
            if key not in shared:  # (each step with the blocks it places; a later mask never meets this one)
                shared[key] = [
                    (chunk, after & ~placed) for chunk, after in self._grow(placed) if self.completions(after)
                ]
            found = self._next[placed] = [(chunk, placed | bits) for chunk, bits in shared[key]]
        return found

    def _grow(self, placed: int) -> Iterator[tuple[Chunk, int]]:
        program = self.program
        if not program.indented:
            for b in self.blocks:
                if self.ready(b, placed):
                    yield (b,), placed | 1 << b
            return

        ends = self._ends  # (each block: whether a statement may end with it)
        origin = program.origin
        for first in self.choices:
            if not (program.starts(first) and self.ready(first, placed)):
                continue
            # depth first through the statements that begin with `first`, on an explicit stack, each
            # block's followers listed once per (open suites, block) (`_after`), not every choice tried
            # at every block: the shipped loop's 15 spaces listed in 1,995 -> 1,042 M instructions
            # (nested generators over the same lists: 1,129 M)
            chunk, mask = [first], placed | 1 << origin(first)
            if ends[first]:
                yield (first,), mask
            todo = [(iter(self._after((0,), first)), mask)]
            while todo:
                following, mask = todo[-1]
                for b, bit, need, stack in following:
                    if mask & bit or mask & need != need:
                        continue
                    chunk.append(b)
                    if ends[b]:
                        yield tuple(chunk), mask | bit
                    todo.append((iter(self._after(stack, b)), mask | bit))
                    break
                else:
                    todo.pop()
                    chunk.pop()

    def _after(self, stack: tuple[int, ...], last: int) -> list[tuple[int, int, int, tuple[int, ...]]]:
        """The blocks that may come right after `last` in one statement, `stack` the suites open before
        it: each with its bit, the blocks it needs at the top level, and the suites open after it."""
        key = (stack, last)
        found = self._follows.get(key)
        if found is None:
            fitting, program = self._fitting, self.program  # (program.fits, shared by every Orders)
            found = []
            for b, bit, need in self._needs:
                fit = (stack, last, b)
                after = fitting[fit] if fit in fitting else fitting.setdefault(fit, program.fits(*fit))
                if after is not None:
                    found.append((b, bit, need, after))
            self._follows[key] = found
        return found

    def share(self, part: int, parts: int) -> Share:
        """Part `part` of `parts`: the prefixes, deep enough for a few per part, dealt out in turn
        (neighbours in the tree cost alike, so each part gets some of every kind)."""
        level: list[tuple[tuple[Chunk, ...], int]] = [((), 0)]
        depth = 0
        while len(level) < 4 * parts and any(mask != self.full for _, mask in level):
            deeper: list[tuple[tuple[Chunk, ...], int]] = []
            for prefix, mask in level:
                if mask == self.full:  # a whole candidate already
                    deeper.append((prefix, mask))
                else:
                    deeper += [((*prefix, chunk), after) for chunk, after in self.next_chunks(mask)]
            level = deeper
            depth += 1
        prefixes = {prefix[:k] for prefix, _ in level[part::parts] for k in range(len(prefix) + 1)}
        return Share(frozenset(prefixes), depth)

    def count(self, limit: int) -> int:
        """How many candidates there are (counting may stop past `limit`)."""
        if limit not in self._counts:
            self._counts[limit] = self._count(0, limit)
        return self._counts[limit]

    def _count(self, placed: int, limit: int | None) -> int:
        """The candidates that begin with the blocks in `placed`, counted without listing them: the
        statements one loop can make with every block at every level are far more than a puzzle may
        have candidates, but what follows a statement's beginning depends only on the blocks placed, the
        suites open and its last block (`within`), so each of those is counted once. Past `limit` the
        count stops (a count that stopped is not kept: only this call's)."""
        if placed == self.full:
            return 1
        counts, key = self.memo.counts, self.key(placed)
        if key in counts:
            return counts[key]
        program, ends, origin = self.program, self._ends, self.program.origin
        total, indented = 0, program.indented
        for first in self.choices if indented else self.blocks:  # (without indentation a block is a step)
            if program.starts(first) and self.ready(first, placed):
                mask = placed | 1 << origin(first)
                if ends[first] or not indented:
                    total += self._count(mask, limit)
                if indented:
                    total += self._within(mask, (0,), first, limit)
                if limit is not None and total > limit:
                    return total
        counts[key] = total
        return total

    def _within(self, mask: int, stack: tuple[int, ...], last: int, limit: int | None) -> int:
        """The candidates whose statement so far places the blocks in `mask` (the earlier statements'
        too), ends with `last` and has the suites `stack` open, and goes on with at least one more block."""
        within, key = self.memo.within, (self.key(mask), stack, last)
        found = within.get(key)
        if found is not None:
            return found
        total, ends = 0, self._ends
        for b, bit, need, after in self._after(stack, last):
            if mask & bit or mask & need != need:
                continue
            if ends[b]:
                total += self._count(mask | bit, limit)
            total += self._within(mask | bit, after, b, limit)
            if limit is not None and total > limit:
                return total
        within[key] = total
        return total

    def all(self) -> Iterator[tuple[Chunk, ...]]:
        """Every candidate, as its steps."""

        def extend(chunks: tuple[Chunk, ...], placed: int) -> Iterator[tuple[Chunk, ...]]:
            if placed == self.full:
                yield chunks
                return
            for chunk, after in self.next_chunks(placed):
                yield from extend((*chunks, chunk), after)

        yield from extend((), 0)
