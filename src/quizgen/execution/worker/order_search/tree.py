"""The fast order search: candidates explored as a tree of shared prefixes, merged where states agree.

Every candidate runs the same way: its steps, `repeat` times, then the check. Candidates that begin
with the same steps share those runs: the search goes one step deeper at a time over all of them
(breadth first), keeping each distinct state once. To run two different next steps from one state it
copies the state (order.state.capture); a state it cannot copy is reached again by running the steps
since the last state it copied. After each step, nodes holding the same blocks at the same point of
their run are compared, and nodes whose states are equal (order.state: the same live variables with
the same contents, generators and settings; autograd graphs too, where the code allows) go on as one:
from equal states the same steps do the same. A step that cannot compile is not run, nor one that
begins with the lines a failed sibling ran from the same state (order.reach). Variables only the
check reads are set aside (`aside`): shared by every branch, neither copied nor compared, where no
step can reach their objects (order.state.apart); each run of the check must leave them unchanged. A
search split across workers explores only its share of the candidates (order.program.Share).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Hashable, Iterator
from dataclasses import replace

from quizgen.execution import progress
from quizgen.execution.worker.order_search import program_state as order_state
from quizgen.execution.worker.order_search import torch_state as order_settings
from quizgen.execution.worker.order_search.budget import Budget
from quizgen.execution.worker.order_search.costs import Costs, clock
from quizgen.execution.worker.order_search.frozen import Frozen
from quizgen.execution.worker.order_search.glance import split
from quizgen.execution.worker.order_search.names import Liveness
from quizgen.execution.worker.order_search.program import CHECK, Chunk, Orders, Share
from quizgen.execution.worker.order_search.program_state import Opaque, Shared
from quizgen.execution.worker.order_search.threads import Anchor, Hints, Node, Space, Thread, objects_of
from quizgen.execution.worker.order_search.torch_state import Settings
from quizgen.execution.worker.snippets import SnippetFailed

ANCHOR_GAP = 3  # steps run again at most, mostly, before a branching state is kept as a copy
FRUITLESS = 3  # after this many layers without a merge, states are compared in every third layer only
RunStep = Callable[[Chunk], BaseException | None]
Failed = tuple[tuple[tuple[int, int], ...], tuple[tuple[int, bool], ...]]  # lines a step ran; its tail


class Tree:
    """One search over a namespace: `explore` runs threads to their check and says which passed."""

    def __init__(
        self,
        ns: dict[str, object],
        run_step: RunStep,
        orders: Orders,
        repeat: int,
        liveness: Liveness,
        generators: bool,
        share: Share | None = None,
    ) -> None:
        self.ns, self.run_step, self.orders, self.generators = ns, run_step, orders, generators
        self.spaces = [Space(orders, liveness)]  # more may be added: threads name theirs
        self.share = share  # the part of the candidates to search (None: all of them)
        self.aside: frozenset[str] = frozenset()  # variables only the check reads: shared, not copied
        self._aside_key: tuple[object, ...] = ()
        self._aside_objects: dict[str, object] = {}  # what they held (the check may bind them anew)
        self.graphs = False  # states holding autograd graphs are compared too (order.tensors)
        self.spans = False  # tensors are compared by the bytes they span, not their whole storages
        self.runs: Hints | None = None
        self.same: Callable[[Chunk], Hashable] | None = None  # steps with one key are the same code: run once
        self.rebuild: Callable[[], None] | None = None  # setup run again in `ns`: the start anew
        self.rebuilds = 0  # times the starting state was rebuilt so
        self.budget: Budget | None = None  # time and memory the search may use
        self.cap_passed = False  # more passing candidates than a puzzle can mean end the search
        self.passing = 0  # the candidates the passed threads stand for
        self._held = 0  # states held (the layer being expanded and the next)
        self.costs = Costs()
        self._start: Settings | None = None
        self.repeat = repeat
        self.shared = Shared()
        self.freeze = False  # tensors only read are shared, not copied (order.frozen)
        self.steps = 0  # steps run, the check included
        self.layer = 0  # steps run by the deepest threads so far
        self.fruitless = 0  # layers in a row in which comparing states merged none
        self.phase, self.total = 0, 0  # what the search is for, and its candidates (execution.progress)
        self.decided = 0  # candidates whose outcome is known (run to their end, or failed before it)

    def explore(self, threads: list[Thread]) -> list[Thread]:
        """The threads (completed: each one candidate) whose check passes. Raises Opaque when the
        starting state (the namespace as it is now) cannot be copied."""
        objects = (dict(self.ns), order_settings.settings(self.generators))
        live = self._set_aside(threads)
        if self.freeze and live is not None:
            self.shared.frozen = Frozen(self.ns, live)
        began = clock()
        try:
            _, pristine = order_state.capture(self.ns, live, self.shared, copy=True)
            self.costs.copied(clock() - began)
        except Opaque:
            if self.rebuild is None:
                raise
            pristine = None  # rebuilt by running setup again, as later states from the last copy
        anchor = Anchor(pristine, objects[1], live)
        self._start = objects[1]
        frontier = [Node(threads, anchor, (), objects, live)]
        passed: list[Thread] = []
        while frontier:
            children: list[Node] = []
            queue = deque(frontier)  # (a node's state goes once it is expanded)
            frontier = []
            while queue:
                node = queue.popleft()
                self._held = len(queue) + len(children)
                children += self._expand(node, passed)
            frontier = self._merge(children)
        return passed

    def _set_aside(self, threads: list[Thread]) -> frozenset[str] | None:
        """Keep `aside` only if no step can reach its objects (order.state.apart); the live variables."""
        self.aside &= frozenset(self.ns)
        live = self._live(threads)
        key = order_state.apart(self.ns, live or (), self.aside) if self.aside and live else None
        if key is None:
            self.aside = frozenset()
            return self._live(threads)
        self._aside_key = key
        self._aside_objects = {name: self.ns[name] for name in self.aside}
        return live

    def _checked(self) -> None:
        """After a check ran: it may have changed what is set aside (shared by every branch)."""
        if not self.aside:
            return
        now = order_state.capture(self._aside_objects, self.aside, Shared(), copy=False)[0]
        if now != self._aside_key:
            raise Opaque("the check changed a variable only it reads")

    def _live(self, threads: list[Thread]) -> frozenset[str] | None:
        found: set[str] = set()
        for t in threads:
            liveness = self.spaces[t.space].liveness
            live = liveness.of_complete(t.chunks, t.ran) if t.complete else liveness.of_prefix(t.placed)
            if live is None:
                return None
            found |= live
        return frozenset(found - self.aside)

    def _weight(self, thread: Thread) -> int:
        """The candidates a thread stands for (those that begin as it does)."""
        if thread.complete:
            return thread.ways
        return thread.ways * self.spaces[thread.space].orders.completions(thread.placed)

    def _next(self, thread: Thread) -> Iterator[tuple[Chunk, Thread]]:
        if not thread.complete:
            space = self.spaces[thread.space]
            full = space.orders.full
            if self.share is None:  # one thread for the steps that are the same code (Space.steps)
                steps = space.steps(thread.placed)
            else:  # (a part of a split search takes its candidates by their steps as they are)
                steps = [(chunk, after, 1) for chunk, after in space.orders.next_chunks(thread.placed)]
            for chunk, placed, alike in steps:
                chunks = (*thread.chunks, chunk)
                if space.onward is not None and not space.onward.leads_on(chunk, placed):
                    # (a step of each does not compile)
                    self.decided += thread.ways * alike * space.orders.completions(placed)
                    continue
                if self.share is None or self.share.allows(chunks):
                    ways = thread.ways * alike
                    after = Thread(
                        chunks, placed, placed == full, thread.ran + 1, thread.tag, thread.space, ways
                    )
                    yield chunk, after
            return
        m = len(thread.chunks)
        step = thread.chunks[thread.ran % m] if thread.ran < m * self.repeat else CHECK
        yield step, replace(thread, ran=thread.ran + 1)

    def _expand(self, node: Node, passed: list[Thread]) -> list[Node]:
        if len(node.threads) == 1 and node.threads[0].complete:
            self._finish(node, passed)
            return []
        groups: dict[Hashable, tuple[Chunk, list[Thread]]] = {}  # steps that are the same code run once
        same = self.same
        for thread in node.threads:
            for step, after in self._next(thread):
                groups.setdefault(step if same is None else same(step), (step, []))[1].append(after)
        if len(groups) > 1 and len(node.path) >= ANCHOR_GAP:
            self._anchor(node)
        children: list[Node] = []
        failed: dict[int, set[Failed]] = {}  # lines that raised from this state (and what followed), by count
        for i, (step, threads) in enumerate(groups.values()):
            progress.report(self.phase, self.decided, self.total)
            if self._fails(step, failed):
                self.decided += sum(map(self._weight, threads))
                continue
            self._load(node, last=i == len(groups) - 1)
            if self.budget is not None:
                self.budget.tick(self._held + len(children))
            began = clock()
            failure = self._run(step)
            self.costs.stepped(clock() - began)
            self.steps += 1
            if failure is not None and self.runs is not None and self.runs.reached is not None:
                failed.setdefault(len(self.runs.reached[0]), set()).add(self.runs.reached)
            if step == CHECK or failure is not None:
                self.decided += sum(map(self._weight, threads))
            if step == CHECK:
                self._checked()
                if failure is None:
                    passed += threads
                    self._passed(sum(t.ways for t in threads))
                continue
            if failure is None:
                objects = (dict(self.ns), order_settings.settings(self.generators))
                trail = (*node.trail, step)
                children.append(Node(threads, node.anchor, (*node.path, step), objects, trail=trail))
        node.objects = None
        return children

    def _run(self, step: Chunk) -> BaseException | None:
        failure = self.run_step(step)
        if self.shared.frozen is not None:
            self.shared.frozen.check()  # (Thawed: the search starts again, freezing nothing)
        return failure

    def _fails(self, step: Chunk, failed: dict[int, set[Failed]]) -> bool:
        """Whether the step fails without running it: it does not compile, or it begins with the lines
        a sibling ran from the same state before raising, followed alike (order.reach, Runs.tail)."""
        runs = self.runs
        if runs is None or step == CHECK:
            return False
        where = runs.where(step) if failed else ()  # (each length of a failed prefix looked up once)
        if any((where[:k], runs.tail(step, k)) in got for k, got in failed.items() if k <= len(where)):
            return True
        return runs.broken(step)

    def _finish(self, node: Node, passed: list[Thread]) -> None:
        """A single candidate left: run the rest of it straight through (nothing left to share)."""
        thread = node.threads[0]
        self.decided += 1
        self._load(node, last=True)
        m = len(thread.chunks)
        for k in range(thread.ran, m * self.repeat + 1):
            step = thread.chunks[k % m] if k < m * self.repeat else CHECK
            self.steps += 1
            if self.budget is not None:
                self.budget.tick(self._held)
            failure = self._run(step)
            if step == CHECK:
                self._checked()
            if failure is not None:
                return
        passed.append(replace(thread, complete=True, ran=m * self.repeat + 1))
        self._passed(thread.ways)

    def _passed(self, ways: int) -> None:
        self.passing += ways
        if self.cap_passed and self.budget is not None:
            self.budget.accepted(self.passing)

    def _anchor(self, node: Node) -> None:
        """Keep a copy of a branching state as an anchor when it can be copied: its subtree replays
        from it (the node's own objects still go to its last child)."""
        assert node.objects is not None
        if node.opaque or self._rebuild_is_cheaper(node):
            return
        try:
            _, copy = order_state.capture(node.objects[0], node.live, self.shared, copy=True)
        except Opaque:
            node.opaque = True
            return
        assert copy is not None
        node.anchor = Anchor(copy, node.objects[1], node.live)
        node.path = ()

    def _load(self, node: Node, last: bool) -> None:
        """Make the namespace hold the node's state: its own objects (on their last use), a copy of
        them, or a copy of its anchor with the steps since run again."""
        if node.objects is not None:
            if last:
                self._put(*node.objects)
                node.objects = None
                return
            copy = None
            if not node.opaque and not self._rebuild_is_cheaper(node):
                began = clock()
                try:
                    _, copy = order_state.capture(node.objects[0], node.live, self.shared, copy=True)
                    self.costs.copied(clock() - began)
                except Opaque:
                    node.opaque = True
            if copy is not None:
                self._put(copy, node.objects[1])
                return
        anchor = node.anchor
        path = node.path
        if anchor.ns is None or self._rebuild_is_cheaper(node):
            assert self.rebuild is not None and self._start is not None
            began = clock()
            self.rebuild()  # (setup run again in self.ns itself)
            self.costs.rebuilt(clock() - began)
            self.rebuilds += 1
            self.ns.update(self._aside_objects)  # (equal to the fresh ones; the check's changes are watched)
            order_settings.restore_settings(self._start)
            path = node.trail
        else:
            _, copy = order_state.capture(anchor.ns, anchor.live, self.shared, copy=True)
            assert copy is not None
            self._put(copy, anchor.settings)
        for step in path:
            if self._run(step) is not None:
                raise SnippetFailed(
                    "the lines do something else when run again: the puzzle is not deterministic"
                )
            self.steps += 1

    def _rebuild_is_cheaper(self, node: Node) -> bool:
        return self.rebuild is not None and self.costs.rebuild_is_cheaper(len(node.trail))

    def _put(self, ns: dict[str, object], settings: Settings) -> None:
        self.ns.clear()
        self.ns.update(ns)
        order_settings.restore_settings(settings)

    def _merge(self, children: list[Node]) -> list[Node]:
        """Children whose states are equal become one (only where they are at the same point)."""
        buckets: dict[object, list[Node]] = {}
        for child in children:
            child.live = self._live(child.threads)
            buckets.setdefault((self._point(child), child.live), []).append(child)
        merged: list[Node] = []
        self.layer += 1
        compare = self.fruitless < FRUITLESS or self.layer % FRUITLESS == 0
        compared = len(children)
        for coarse in buckets.values():
            for bucket in split(coarse, objects_of) if compare and len(coarse) > 1 else [coarse]:
                work = [self._work(node) for node in bucket] if compare and len(bucket) > 1 else []
                if len(bucket) == 1 or not compare or not self.costs.worth_comparing(work):
                    merged += bucket
                else:
                    self._merge_bucket(bucket, merged)
        if compare and compared >= 16:
            self.fruitless = self.fruitless + 1 if len(merged) == compared else 0
        return merged

    def _work(self, node: Node) -> int:
        """The steps the node's threads still have to run (the check included)."""
        total = 0
        for t in node.threads:
            if t.complete:
                total += len(t.chunks) * self.repeat + 1 - t.ran
            else:
                space = self.spaces[t.space]
                left = len(space.orders.blocks) * self.repeat + 1 - t.ran
                ahead = space.programs(t.placed) if self.share is None else space.orders.completions(t.placed)
                total += ahead * max(left, 1)
        return total

    def _merge_bucket(self, bucket: list[Node], merged: list[Node]) -> None:
        """Merge the nodes of a bucket whose states are equal."""
        seen: dict[tuple[object, ...], Node] = {}
        for child in bucket:
            assert child.objects is not None
            began = clock()
            try:
                key, _ = order_state.capture(
                    child.objects[0], child.live, self.shared, False, self.graphs, self.spans
                )
            except Opaque:
                child.opaque = True
                merged.append(child)
                continue
            key = (key, child.objects[1].token())
            self.costs.fingerprinted(clock() - began, key in seen)
            if key in seen:
                seen[key].threads += child.threads
            else:
                seen[key] = child
                merged.append(child)

    def _point(self, node: Node) -> frozenset[tuple[int, int]]:
        """Where the node's threads are: which pass, and which blocks ran in it (only nodes at the same
        point are compared: elsewhere equal states are too rare to pay for comparing)."""
        point = set()
        for t in node.threads:
            if not t.complete:
                point.add((0, t.placed))
                continue
            m = len(t.chunks)
            done = t.chunks[: t.ran % m] if t.ran < m * self.repeat else ()
            origin = self.orders.program.origin
            point.add((1 + t.ran // m, sum(1 << origin(b) for chunk in done for b in chunk)))
        return frozenset(point)
