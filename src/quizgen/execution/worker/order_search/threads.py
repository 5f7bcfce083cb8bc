"""What the fast search (order.tree) is given, holds and hands back: the candidates it explores as
threads, the spaces of candidates one tree searches, what the runner knows of steps that fail, and the
states it keeps (nodes, anchors)."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterator
from dataclasses import dataclass, field
from itertools import product
from typing import NamedTuple, Protocol

from quizgen.execution.worker.order_search.levels import Onward
from quizgen.execution.worker.order_search.names import Liveness
from quizgen.execution.worker.order_search.plan import Plan
from quizgen.execution.worker.order_search.program import CHECK, Chunk, Orders
from quizgen.execution.worker.order_search.routes import Record, Routes, Trie, Walked
from quizgen.execution.worker.order_search.steps import Lines, Reached, Tail
from quizgen.execution.worker.order_search.torch_state import Settings


class Hints(Protocol):
    """What the runner knows of steps that fail (order.steps.Runs): those that cannot compile, and
    how far the last failed step got (order.reach)."""

    reached: Reached | None
    routes: Routes | None  # (order.routes)
    route: Record | Walked | None  # the last step's run, traced (or run block by block) for its route

    def broken(self, step: Chunk) -> bool: ...

    def masked(self, lines: Lines, mask: tuple[int, ...]) -> Lines | None: ...

    def where(self, step: Chunk) -> Lines: ...

    def tail(self, step: Chunk, count: int) -> Tail: ...

    def beginnings(self, step: Chunk) -> tuple[int, ...]: ...


class Failures:
    """The steps that raised from one state, by how many lines they ran, those lines with every loose
    one as a wildcard (Runs.beginnings) and their tail; each with which of the lines were not reached
    (its mask) and the lines so masked: a sibling that begins as one did (loose lines aside) and is
    followed alike raises too. A sibling can match only the failures filed under its own beginnings and
    tail, so it is checked against those alone (a mask turns only loose lines into the wildcard)."""

    def __init__(self) -> None:
        self._counts: dict[int, None] = {}  # the line counts met, in order
        self._by: dict[int, dict[Tail, set[tuple[tuple[int, ...], Lines]]]] = {}  # by beginning

    def add(self, runs: Hints, step: Chunk, reached: Reached) -> None:
        count, mask, lines, tail = reached
        self._counts[count] = None
        self._by.setdefault(runs.beginnings(step)[count], {}).setdefault(tail, set()).add((mask, lines))

    def include(self, runs: Hints, step: Chunk) -> bool:
        """Whether the step raises, as one of them did (order.reach)."""
        if not self._by:
            return False
        begins = runs.beginnings(step)
        for k in self._counts:
            tails = self._by.get(begins[k]) if k < len(begins) else None
            got = tails.get(runs.tail(step, k)) if tails else None  # (its tail only where lines match)
            if got:
                where = runs.where(step)[:k]
                if any(runs.masked(where, mask) == lines for mask, lines in got):
                    return True
        return False


class Siblings:
    """What the steps run from one state tell of the siblings still to run from it: a sibling that
    begins as a failed one did raises too (Failures, order.reach), and one that would run what a step
    ran does what it did: goes on from the state it left, or raises (order.routes). Without a runner's
    hints (lines cannot be traced) nothing is told."""

    def __init__(self, runs: Hints | None) -> None:
        self.runs, self.failed = runs, Failures()
        self.routes = runs.routes if runs is not None else None
        self.trie = Trie()

    def known(self, step: Chunk) -> Node | str | None:
        """What the step does, told without running it: FAILED when it does not compile, begins with the
        lines a sibling ran from the same state before raising (loose ones aside), followed alike, or would
        run what a sibling ran up to its raise; the node a sibling that would run what it runs went on to;
        None when it must run."""
        runs = self.runs
        if runs is None or step == CHECK:
            return None
        found = None if self.routes is None else self.routes.find(self.trie, step)
        if found is not None:  # (a step with a route compiles: order.routes)
            return FAILED if found[0] else found[1] if isinstance(found[1], Node) else None
        return FAILED if self.failed.include(runs, step) or runs.broken(step) else None

    def ran(self, step: Chunk, failure: BaseException | None, outcome: Node | None) -> None:
        """What the step just run tells (its outcome: the node it went on to, if it did)."""
        runs = self.runs
        if runs is None:
            return
        if failure is not None and runs.reached is not None:
            self.failed.add(runs, step, runs.reached)
        told = failure is not None or outcome is not None
        if self.routes is not None and runs.route is not None and told:
            self.routes.add(self.trie, step, runs.route, failure is not None, outcome)


class Thread(NamedTuple):
    """A candidate (or, in the first pass, every candidate that begins so) and how far it has run (a
    named tuple: the search makes tens of thousands, and a frozen dataclass's are 5 times as dear)."""

    chunks: tuple[Chunk, ...]  # its steps so far, or all of them once `complete`
    placed: int  # the blocks in `chunks` (a bit mask)
    complete: bool
    ran: int = 0  # steps run
    tag: int = -1  # the caller's name for an explicit candidate
    space: int = 0  # which of the tree's spaces of candidates it is in (Tree.spaces)
    ways: int = 1  # the arrangements it stands for: its steps' alike ones (Space.steps), multiplied


@dataclass
class Space:
    """One set of candidates a tree searches. Spaces share every run their candidates have in common
    (a distractor inserted, or in place of each line: the candidates share all prefixes that do not
    hold the line it replaces)."""

    orders: Orders
    liveness: Liveness
    onward: Onward | None = None  # (indented puzzles) steps that lead on to one that compiles
    same: Callable[[Chunk], Hashable] | None = None  # steps with one key are the same code (Runs.same)
    _steps: dict[int, list[tuple[Chunk, int, int, Hashable]]] = field(default_factory=dict)
    _alike: dict[Chunk, list[Chunk]] = field(default_factory=dict)  # the steps each first one stands for
    _programs: dict[int, int] = field(default_factory=dict)

    def steps(self, placed: int) -> list[tuple[Chunk, int, int, Hashable]]:
        """The steps that can come next, one for all those that are the same code (a suite indented
        deeper, `same`): each as (the first of them, the blocks placed after it, how many they are, their
        key: Groups). Without `same`, every step."""
        found = self._steps.get(placed)
        if found is None:
            same = self.same
            groups: dict[Hashable, tuple[Chunk, int, list[Chunk], Hashable]] = {}
            for chunk, after in self.orders.next_chunks(placed):
                code = chunk if same is None else same(chunk)
                group = groups.get((after, code))
                if group is None:
                    group = groups[(after, code)] = (chunk, after, [], code)
                group[2].append(chunk)
            found = self._steps[placed] = []
            for first, after, alike, code in groups.values():
                self._alike.setdefault(first, alike)
                found.append((first, after, len(alike), code))
        return found

    def programs(self, placed: int) -> int:
        """How many different programs begin with the blocks in `placed` (1 once every block is)."""
        if placed == self.orders.full:
            return 1
        if placed not in self._programs:
            self._programs[placed] = sum(self.programs(after) for _, after, _, _ in self.steps(placed))
        return self._programs[placed]

    def arrangements(self, chunks: tuple[Chunk, ...]) -> Iterator[tuple[Chunk, ...]]:
        """Every candidate a thread's steps stand for (each step's alike ones), in sorted order."""
        return product(*(sorted(self._alike.get(chunk, [chunk])) for chunk in chunks))

    def first(self, chunks: tuple[Chunk, ...]) -> tuple[Chunk, ...]:
        """The first of them in sorted order (alike steps have as many blocks: the first of each)."""
        return tuple(min(self._alike.get(chunk, [chunk])) for chunk in chunks)


@dataclass
class Anchor:
    """A state kept whole (never run on): others are rebuilt from a copy of it. The starting state
    when it cannot be copied (a setup leaving an autograd graph in a name the lines use) has no copy
    (`ns` None): it is rebuilt by running setup again (`Tree.rebuild`)."""

    ns: dict[str, object] | None
    settings: Settings
    live: frozenset[str] | None
    plan: Plan | None = None  # how to copy it again (order.plan)
    copies: int = 0


@dataclass(frozen=True)
class Seen:
    """A state's fingerprint as some threads observe it (their live variables), and what taking it cost."""

    live: frozenset[str] | None
    key: tuple[object, ...]
    seconds: float | None  # (None: not timed, Costs.timing)


@dataclass
class Node:
    threads: list[Thread]
    anchor: Anchor
    path: tuple[Chunk, ...]  # steps that lead from the anchor to this state
    objects: tuple[dict[str, object], Settings] | None  # the state itself, until a step runs on it
    live: frozenset[str] | None = None
    opaque: bool = False  # its state is known not to be copyable
    trail: tuple[Chunk, ...] = ()  # steps that lead from the start to this state
    plan: Plan | None = None  # how to copy its objects again (order.plan)
    copies: int = 0
    seen: dict[frozenset[str] | None, Seen] = field(default_factory=dict)  # its state's fingerprints, by live


def objects_of(node: Node) -> tuple[dict[str, object], frozenset[str] | None]:
    assert node.objects is not None
    return node.objects[0], node.live


FAILED, PASSED = "failed", "passed"  # a Group's outcome, besides the node its step made
STILL = "still"  # its step left the state as its threads observe it: they went on from the node


@dataclass
class Group:
    """One step to run from a node's state, for the threads that take it (those whose steps are the same
    code: one run); once run, its outcome: the node it made, FAILED, PASSED (the check) or STILL."""

    step: Chunk
    threads: list[Thread]
    outcome: Node | str | None = None


class Groups:
    """The steps run from one state, in the order they run (order.tree: Tree._expand). A thread that
    arrives after its step ran (one whose last step left the state as it was) takes the outcome."""

    def __init__(self) -> None:
        self.work: list[Group] = []
        self._index: dict[Hashable, Group] = {}

    def add(self, step: Chunk, thread: Thread, key: Hashable) -> Group:
        """The group the thread joins (a new one, run last, for a step not met yet); `key`: the step's
        (`same`'s, or the step where there is none: Space.steps tells it)."""
        group = self._index.get(key)
        if group is None or group.outcome == STILL:  # (left as it was for those threads, not this one)
            group = self._index[key] = Group(step, [])
            self.work.append(group)
        if group.outcome is None:
            group.threads.append(thread)
        return group

    def cheap_first(self) -> None:
        """Single blocks first: they are cheap, and those that leave the state as it was (a
        `zero_grad()` with no gradients yet) send their threads on to the steps still to run."""
        self.work.sort(key=lambda group: len(group.step) != 1)


def point(node: Node, repeat: int, orders: Orders) -> frozenset[tuple[int, int]]:
    """Where the node's threads are: which pass, and which blocks ran in it (only nodes at the same
    point, the least of their points, are compared: elsewhere equal states are too rare to pay for
    comparing)."""
    found = set()
    for t in node.threads:
        if not t.complete:
            found.add((0, t.placed))
            continue
        m = len(t.chunks)
        done = t.chunks[: t.ran % m] if t.ran < m * repeat else ()
        origin = orders.program.origin
        found.add((1 + t.ran // m, sum(1 << origin(b) for chunk in done for b in chunk)))
    return frozenset(found)


def work(node: Node, spaces: list[Space], repeat: int, split: bool) -> int:
    """The steps the node's threads still have to run (the check included); `split`: a part of a split
    search, whose threads stand for their candidates as they are (Space.steps is not used)."""
    total = 0
    for t in node.threads:
        if t.complete:
            total += len(t.chunks) * repeat + 1 - t.ran
        else:
            space = spaces[t.space]
            left = len(space.orders.blocks) * repeat + 1 - t.ran
            ahead = space.orders.completions(t.placed) if split else space.programs(t.placed)
            total += ahead * max(left, 1)
    return total


def live_of(spaces: list[Space], threads: list[Thread], aside: frozenset[str]) -> frozenset[str] | None:
    """The variables the threads may still read but those set aside (None: any variable)."""
    found: set[str] = set()
    for t in threads:
        liveness = spaces[t.space].liveness
        live = liveness.of_complete(t.chunks, t.ran) if t.complete else liveness.of_prefix(t.placed)
        if live is None:
            return None
        found |= live
    return frozenset(found - aside)


def firsts(spaces: list[Space], passed: list[Thread]) -> list[list[int] | None]:
    """The first passing arrangement of each space, in sorted order (None: none passes)."""
    best: list[list[int] | None] = [None] * len(spaces)
    for thread in passed:
        order = [b for chunk in spaces[thread.space].first(thread.chunks) for b in chunk]
        if best[thread.space] is None or order < best[thread.space]:  # type: ignore[operator]
            best[thread.space] = order
    return best


def weight(spaces: list[Space], thread: Thread) -> int:
    """The candidates a thread stands for (those that begin as it does)."""
    if thread.complete:
        return thread.ways
    return thread.ways * spaces[thread.space].orders.completions(thread.placed)
