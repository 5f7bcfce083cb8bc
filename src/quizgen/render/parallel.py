"""The renderers side by side: after the snippets ran, the build's last seconds were one core rendering
while the other waited. A forked child writes cards.json while this process makes the cards' views
(shared by the Anki and quiz outputs); then a second child renders the Anki packages while this process
renders the rest; each child hands back what it staged (the commit stays this process's, so the outputs
still change together).

A child that fails for any reason hands back nothing and its part is rendered here again, so an error
(an unwritable folder) is raised exactly as a build on one core raises it. The exception: a project with
templates of its own renders the quiz in a child of its own, whatever the number of cards, bounded in
memory and time (render/bounded.py); its failure is raised, never rendered again here unbounded.
"""

from __future__ import annotations

import os
import pickle
import traceback
from functools import partial
from pathlib import Path
from typing import Any

from quizgen.errors import QuizgenError
from quizgen.render import bounded
from quizgen.render.base import Project, Rendered, Renderer
from quizgen.render.stage import Stage
from quizgen.render.templating import TemplateProblem

# Forked in this order: cards.json needs no card view, so it is made while this process makes the views;
# then the Anki packages, while this process makes the quiz (the two take about as long).
CHILDREN = (frozenset({"cards.json"}), frozenset({"anki"}))
MIN_CARDS = 1000  # below this a fork (and making every view first) costs more than it saves


def render(project: Project, stage: Stage, renderers: list[Renderer], jobs: int) -> list[Rendered]:
    """Each renderer's result, in the order given; files staged in `stage` (the children's added to it)."""
    from quizgen.render import present

    forks = hasattr(os, "fork")
    fenced = (
        [r for r in renderers if r.name in bounded.TEMPLATED] if forks and bounded.applies(project) else []
    )
    side = forks and jobs >= 2 and sum(len(d.cards) for d in project.decks) >= MIN_CARDS
    groups = [[r for r in renderers if side and r.name in names and r not in fenced] for names in CHILDREN]
    groups.append(fenced)
    away = [r for group in groups for r in group]
    if not away:
        return [r.render(project, stage) for r in renderers]
    children: list[tuple[list[Renderer], int, int]] = []  # (its renderers, pid, the pipe it answers on)
    results: dict[str, Rendered] = {}
    done_here = False
    try:
        for number, group in enumerate(groups):
            if number == 1:
                for deck in project.decks:  # made once here, inherited by the next children
                    present.deck_views(deck)
            children.append(_fork(project, group, fenced=group is fenced))
        results.update((r.name, r.render(project, stage)) for r in renderers if r not in away)
        done_here = True
    finally:
        handed = [(group, _collect(read_fd, pid)) for group, pid, read_fd in children]
        if not done_here:  # this side failed: the children's staging goes too
            for _, each in handed:
                _discard(each)
    if fenced and handed[-1][1][0] != "ok":
        for _, each in handed:
            _discard(each)
        raise _refused(handed[-1][1], project)
    for group, each in handed:
        if each[0] == "ok":
            stage.adopt(each[2], each[3])
            results.update(each[1])
        else:
            results.update((r.name, r.render(project, stage)) for r in group)
    return [results[r.name] for r in renderers]


def _refused(handed: tuple[Any, ...], project: Project) -> QuizgenError:
    """The error of the bounded child: the one it raised, else (killed, or out of memory outside a
    template) the bound it passed."""
    if len(handed) > 2 and isinstance(handed[2], QuizgenError):
        return handed[2]
    return TemplateProblem(
        f"{project.templates_dir}: the project's templates went past a quiz's bounds ({bounded.SAID})"
    )


def _fork(project: Project, group: list[Renderer], fenced: bool) -> tuple[list[Renderer], int, int]:
    """A child rendering `group` (within render/bounded.py's limits when `fenced`); (group, its pid, the
    end of the pipe it hands its staging back on)."""
    read_fd, write_fd = os.pipe()
    pid = os.fork() if group else -1
    if pid == 0:  # pragma: no cover - runs in the child (coverage does not follow a fork)
        os.close(read_fd)
        if fenced:
            bounded.limit()
        _child(project, group, project.out_dir, write_fd)
    os.close(write_fd)
    return group, pid, read_fd


def _child(project: Project, away: list[Renderer], out_dir: Path, write_fd: int) -> None:
    """Render `away` into a stage of its own and hand back what it staged. Never returns."""
    own = Stage(None)
    try:
        _own_store(out_dir, project.reuse)
        done = {r.name: r.render(project, own) for r in away}
        _keep_fresh()
        payload = pickle.dumps(("ok", done, own.files(), own.folders()))
    except QuizgenError as exc:  # a user's error: a bounded part's is raised as it is
        own.discard()
        payload = _failed(exc)
    except BaseException:  # the parent renders this part again and reports what goes wrong
        own.discard()
        payload = _failed(None)
    try:
        view = memoryview(payload)
        while view:
            view = view[os.write(write_fd, view) :]
    finally:
        os._exit(0)  # nothing of the parent's (its store, its buffers) is closed or flushed from here


def _failed(error: QuizgenError | None) -> bytes:
    """What a failed child hands back: its traceback, and the user's error it raised (when it pickles)."""
    try:
        return pickle.dumps(("failed", traceback.format_exc(), error))
    except Exception:  # an error carrying what does not pickle: the traceback alone
        return pickle.dumps(("failed", traceback.format_exc(), None))


_store: Any = None  # the child's own connection to the build cache (a connection must not cross a fork)


def _own_store(out_dir: Path, enabled: bool) -> None:
    """Point the kept highlights and torch readings at a store connection of the child's own."""
    global _store
    from quizgen.project.store import Store
    from quizgen.render import present

    _store = Store.for_output(out_dir, enabled)
    for kept, table in present.kept_results():
        kept.fresh.clear()  # the parent's own, which the parent stores
        if kept.lookup is not None:
            kept.lookup = partial(_store.value, table)


def _keep_fresh() -> None:
    """What the child worked out anew goes into the store (the parent never sees it)."""
    from quizgen.render import present

    for kept, table in present.kept_results():
        _store.store(table, kept.take_fresh())
    _store.close()


def _collect(read_fd: int, pid: int) -> tuple[Any, ...]:
    chunks = []
    with os.fdopen(read_fd, "rb") as pipe:
        while chunk := pipe.read(1 << 16):
            chunks.append(chunk)
    if pid < 0:  # nothing was forked: an empty group
        return ("ok", {}, [], [])
    os.waitpid(pid, 0)
    try:
        handed: tuple[Any, ...] = pickle.loads(b"".join(chunks))
    except Exception:  # the child died before handing anything back
        handed = ("failed", "")
    return handed


def _discard(handed: tuple[Any, ...]) -> None:
    if handed[0] == "ok":
        leftover = Stage(None)
        leftover.adopt(handed[2], handed[3])
        leftover.discard()
