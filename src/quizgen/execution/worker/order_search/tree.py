"""The fast order search: candidates explored as a tree of shared prefixes, merged where states agree.

Every candidate runs its steps `repeat` times, then the check. Candidates that begin with the same
steps share those runs: the search goes one step deeper at a time over all of them (breadth first),
keeping each distinct state once. To run two different next steps from one state it copies the state
(order.state.capture); one it cannot copy is reached again by running the steps since the last copy.
After each step, nodes holding the same blocks at the same point of their run are compared, and those
whose states are equal (order.state: the same live variables with the same contents, generators and
settings; autograd graphs too, where the code allows) go on as one: from equal states the same steps
do the same. A step that cannot compile is not run, nor one that begins with the lines a failed
sibling ran from the same state (order.reach), and one that would run what a sibling ran goes on from
the state that sibling left or fails as it did (order.routes; both told by threads.Siblings).
Variables only the check reads are set aside (`aside`): shared by every branch, neither copied nor
compared, where no step can reach their objects (order.aside); the check must leave them unchanged.
Threads whose single block left the state as they observe it (a `zero_grad()` with no gradients yet)
go on from the node itself, sharing its siblings' runs; a state is fingerprinted once for the threads
that observe it (Node.seen). A split search explores its share (program.Share).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Hashable, Iterator

from quizgen.execution import progress
from quizgen.execution.worker.order_search import program_state as order_state
from quizgen.execution.worker.order_search import torch_state as order_settings
from quizgen.execution.worker.order_search.aside import apart
from quizgen.execution.worker.order_search.budget import Budget
from quizgen.execution.worker.order_search.costs import Costs, clock
from quizgen.execution.worker.order_search.frozen import Frozen
from quizgen.execution.worker.order_search.glance import split
from quizgen.execution.worker.order_search.names import Liveness
from quizgen.execution.worker.order_search.plan import Plans
from quizgen.execution.worker.order_search.program import CHECK, Chunk, Orders, Share
from quizgen.execution.worker.order_search.program_state import Opaque, Shared
from quizgen.execution.worker.order_search.threads import (
    FAILED,
    PASSED,
    STILL,
    Anchor,
    Groups,
    Hints,
    Node,
    Seen,
    Siblings,
    Space,
    Thread,
    live_of,
    objects_of,
    point,
    weight,
)
from quizgen.execution.worker.order_search.threads import work as work_of
from quizgen.execution.worker.order_search.torch_state import Settings
from quizgen.execution.worker.snippets import SnippetFailed

ANCHOR_GAP = 3  # steps run again at most, mostly, before a branching state is kept as a copy
FRUITLESS = 3  # after this many layers without a merge, states are compared in every third layer only
RunStep = Callable[[Chunk, bool], BaseException | None]  # a step, traced or not (Runs.step)


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
        # (graphs: states holding autograd graphs are compared too, order.tensors; spans: tensors are
        # compared by the bytes they span, not their whole storages)
        self.graphs = self.spans = False
        self.runs: Hints | None = None
        self.same: Callable[[Chunk], Hashable] = lambda step: step  # steps with one key: one code, run once
        self.rebuild: Callable[[], None] | None = None  # setup run again in `ns`: the start anew
        self.rebuilds = self.steps = self.layer = 0  # setups run again; steps run (the check too); layers
        self.budget: Budget | None = None  # time and memory the search may use
        self.cap_passed, self.passing = False, 0  # whether too many passing end it; how many passed
        self._held = 0  # states held (the layer being expanded and the next)
        self.costs, self.shared, self.repeat = Costs(), Shared(), repeat
        self.plans = Plans(self.shared)  # states copied again are copied by a plan (order.plan)
        self._start: Settings | None = None
        self.freeze = False  # tensors only read are shared, not copied (order.frozen)
        self.fruitless = 0  # layers in a row in which comparing states merged none
        # what the search is for, its candidates (execution.progress) and those whose outcome is known
        self.phase = self.total = self.decided = 0

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
        """Keep `aside` only if no step can reach its objects (order.aside); the live variables."""
        self.aside &= frozenset(self.ns)
        live = live_of(self.spaces, threads, self.aside)
        key = apart(self.ns, live or (), self.aside) if self.aside and live else None
        if key is None:
            self.aside = frozenset()
            return live_of(self.spaces, threads, self.aside)
        self._aside_key = key
        self._aside_objects = {name: self.ns[name] for name in self.aside}
        return live

    def _checked(self) -> None:
        """After a check ran: it may have changed what is set aside (shared by every branch)."""
        aside = self.aside and order_state.capture(self._aside_objects, self.aside, Shared(), copy=False)
        if aside and aside[0] != self._aside_key:
            raise Opaque("the check changed a variable only it reads")

    def _next(self, thread: Thread) -> Iterator[tuple[Chunk, Thread, Hashable]]:
        """The steps the thread may take next, each with the thread after it and its key (Groups.add)."""
        if not thread.complete:
            space, onward = self.spaces[thread.space], self.spaces[thread.space].onward
            if self.share is None:  # one thread for the steps that are the same code (Space.steps)
                steps = space.steps(thread.placed)
            else:  # (a part of a split search takes its candidates by their steps as they are)
                steps = [(c, after, 1, self.same(c)) for c, after in space.orders.next_chunks(thread.placed)]
            for chunk, placed, alike, key in steps:
                if onward is not None and not onward.compiles_on(placed):
                    # (no way on compiles; whether the step does is asked just before it would run,
                    # after its failed siblings, Tree._fails: most steps they rule out are never compiled)
                    self.decided += thread.ways * alike * space.orders.completions(placed)
                    continue
                chunks = (*thread.chunks, chunk)
                if self.share is None or self.share.allows(chunks):
                    ran, ways = thread.ran + 1, thread.ways * alike
                    whole = placed == space.orders.full
                    yield chunk, Thread(chunks, placed, whole, ran, thread.tag, thread.space, ways), key
            return
        m = len(thread.chunks)
        step = thread.chunks[thread.ran % m] if thread.ran < m * self.repeat else CHECK
        yield step, thread._replace(ran=thread.ran + 1), self.same(step)

    def _expand(self, node: Node, passed: list[Thread]) -> list[Node]:
        if len(node.threads) == 1 and node.threads[0].complete:
            self._finish(node, passed)
            return []
        groups = Groups()  # steps that are the same code run once
        for thread in node.threads:
            for step, after, key in self._next(thread):
                groups.add(step, after, key)
        groups.cheap_first()
        if len(groups.work) > 1 and len(node.path) >= ANCHOR_GAP:
            self._anchor(node)
        children: list[Node] = []
        siblings = Siblings(self.runs)  # what the steps run from this state tell of the others
        for i, group in enumerate(groups.work):  # (threads a step left in place add groups as it goes)
            step, threads = group.step, group.threads
            progress.report(self.phase, self.decided, self.total)
            known = siblings.known(step)
            if known == FAILED:
                self.decided += sum(weight(self.spaces, t) for t in threads)
                group.outcome = FAILED
                continue
            if isinstance(known, Node):  # (it would run what a sibling ran: order.routes)
                known.threads += threads
                group.outcome = known
                continue
            last = i == len(groups.work) - 1
            self._load(node, last, more=len(groups.work) - i - 2)
            if self.budget is not None:
                self.budget.tick(self._held + len(children))
            still = None if last or len(step) != 1 else self._seen(threads, node)  # (single blocks)
            began = self.costs.timing("step")
            failure = self._run(step, traced=not last)  # (a trace only serves siblings still to run)
            self.costs.stepped(self.costs.since(began))
            self.steps += 1
            if failure is not None:
                siblings.ran(step, failure, None)
            if step == CHECK or failure is not None:
                self.decided += sum(weight(self.spaces, t) for t in threads)
                group.outcome = PASSED if failure is None else FAILED
            if step == CHECK:
                self._checked()
                if failure is None:
                    passed += threads
                    self._passed(threads)
                continue
            settings = order_settings.settings(self.generators) if failure is None else None
            seen = self._seen(threads, settings=settings) if settings and still is not None else None
            if seen is not None and seen.key == still.key:  # type: ignore[union-attr]
                self._onward(threads, groups, passed)  # (the step changed nothing they can observe)
                group.outcome = STILL
            elif settings is not None:
                objects, trail, path = (dict(self.ns), settings), (*node.trail, step), (*node.path, step)
                by_live = {} if seen is None else {seen.live: seen}
                group.outcome = Node(threads, node.anchor, path, objects, trail=trail, seen=by_live)
                children.append(group.outcome)
                siblings.ran(step, None, group.outcome)
        node.objects = node.plan = None  # (a plan holds the objects too)
        return children

    def _seen(
        self, threads: list[Thread], node: Node | None = None, settings: Settings | None = None
    ) -> Seen | None:
        """The state as the threads will observe it (live variables, settings, generators); None where
        unknown, or (given their node, before a step) where its state may not hold it all (Node.live)."""
        live = live_of(self.spaces, threads, self.aside)
        if node is not None and node.live is not None and (live is None or not live <= node.live):
            return None
        if node is not None and live in node.seen:
            return node.seen[live]  # (its state as these threads observe it, taken before: made, merged)
        try:
            seen = self._fingerprint(self.ns, live, settings or order_settings.settings(self.generators))
        except Opaque:
            return None
        if node is not None:
            node.seen[live] = seen
        return seen

    def _fingerprint(self, ns: dict[str, object], live: frozenset[str] | None, settings: Settings) -> Seen:
        began = self.costs.timing("compare")
        key, _ = order_state.capture(ns, live, self.shared, False, self.graphs, self.spans)
        return Seen(live, (key, settings.token()), self.costs.since(began))

    def _onward(self, threads: list[Thread], groups: Groups, passed: list[Thread]) -> None:
        """Threads whose last step left the state as they observe it go on from the node's state: each
        joins the group of its next step, or takes its outcome if it ran."""
        for thread in threads:
            for step, after, key in self._next(thread):
                outcome = groups.add(step, after, key).outcome
                if isinstance(outcome, Node):
                    outcome.threads.append(after)
                elif outcome is not None:
                    self.decided += weight(self.spaces, after)
                    if outcome == PASSED:
                        passed.append(after)
                        self._passed([after])

    def _run(self, step: Chunk, traced: bool = False) -> BaseException | None:
        failure = self.run_step(step, traced)
        if self.shared.frozen is not None:
            self.shared.frozen.check()  # (Thawed: the search starts again, freezing nothing)
        return failure

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
        passed.append(thread._replace(complete=True, ran=m * self.repeat + 1))
        self._passed([thread])

    def _passed(self, threads: list[Thread]) -> None:
        self.passing += sum(t.ways for t in threads if t.space == 0)  # (the lines' own: search._together)
        if self.cap_passed and self.budget is not None:
            self.budget.accepted(self.passing)

    def _anchor(self, node: Node) -> None:
        """Keep a copy of a branching state as an anchor when it can be copied: its subtree replays
        from it (the node's own objects still go to its last child)."""
        assert node.objects is not None
        if node.opaque or self._rebuild_is_cheaper(node):
            return
        try:
            copy = self.plans.copy(node, node.objects[0], node.live)
        except Opaque:
            node.opaque = True
            return
        node.anchor, node.path = Anchor(copy, node.objects[1], node.live), ()

    def _load(self, node: Node, last: bool, more: int | None = None) -> None:
        """Make the namespace hold the node's state: its own objects (on their last use), a copy of them
        (`more`: steps left to run from it but the last), or a copy of its anchor with the steps since
        run again."""
        if node.objects is not None:
            if last:  # (Thawed: a step changed a tensor states share; Plans.copy asks too)
                self.shared.kept.verify(node.objects[0])
                self._put(*node.objects)
                node.objects = node.plan = None  # (a plan holds the objects too)
                return
            copy = None
            if not node.opaque and not self._rebuild_is_cheaper(node):
                began = self.costs.timing("copy")
                try:
                    copy = self.plans.copy(node, node.objects[0], node.live, more)
                    self.costs.copied(self.costs.since(began))
                except Opaque:
                    node.opaque = True
            if copy is not None:
                return self._put(copy, node.objects[1])
        anchor, path = node.anchor, node.path
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
            self._put(self.plans.copy(anchor, anchor.ns, anchor.live), anchor.settings)
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
            child.live = live_of(self.spaces, child.threads, self.aside)
            # (by the least of its points: a node some of whose threads went on past a block that changed
            # nothing, Tree._onward, is at several, and was compared with none; a GAN's step, 2.9 -> 2.45 s)
            buckets.setdefault((min(point(child, self.repeat, self.orders)), child.live), []).append(child)
        merged: list[Node] = []
        self.layer += 1
        compare = self.fruitless < FRUITLESS or self.layer % FRUITLESS == 0
        parted = self.share is not None  # (a part of a split search)
        for coarse in buckets.values():
            for bucket in split(coarse, objects_of) if compare and len(coarse) > 1 else [coarse]:
                comparing = compare and len(bucket) > 1
                work = [work_of(n, self.spaces, self.repeat, parted) for n in bucket] if comparing else []
                if len(bucket) == 1 or not compare or not self.costs.worth_comparing(work):
                    merged += bucket
                else:
                    self._merge_bucket(bucket, merged)
        if compare and len(children) >= 16:
            self.fruitless = self.fruitless + 1 if len(merged) == len(children) else 0
        return merged

    def _merge_bucket(self, bucket: list[Node], merged: list[Node]) -> None:
        """Merge the nodes of a bucket whose states are equal."""
        seen: dict[tuple[object, ...], Node] = {}
        for child in bucket:
            assert child.objects is not None
            (ns, settings), known = child.objects, child.seen.get(child.live)  # (taken before: _seen)
            try:
                if known is None:
                    known = child.seen[child.live] = self._fingerprint(ns, child.live, settings)
            except Opaque:
                child.opaque = True
                merged.append(child)
                continue
            first = seen.setdefault(known.key, child)  # (the key hashed once: it is long)
            self.costs.fingerprinted(known.seconds, first is not child)
            if first is not child:
                first.threads += child.threads
            else:
                merged.append(child)
