"""The renderers side by side: after the snippets ran, the build's last seconds were one core rendering
while the other waited. The cards' views (shared by the Anki and quiz outputs) are made first; then a
forked child renders the Anki packages and cards.json while this process renders the rest, and the
child hands back what it staged (the commit stays this process's, so outputs still change together).

A child that fails for any reason hands back nothing and its part is rendered here again, so an error
(a template's, an unwritable folder) is raised exactly as a build on one core raises it.
"""

from __future__ import annotations

import os
import pickle
import traceback
from pathlib import Path
from typing import Any

from quizgen.render.base import Project, Rendered, Renderer
from quizgen.render.kept import Kept
from quizgen.render.stage import Stage

IN_CHILD = frozenset({"anki", "cards.json"})  # ~half of a big build's rendering, the quiz the other half
MIN_CARDS = 1000  # below this a fork (and making every view first) costs more than it saves


def render(project: Project, stage: Stage, renderers: list[Renderer], jobs: int) -> list[Rendered]:
    """Each renderer's result, in the order given; files staged in `stage` (the child's added to it)."""
    cards = sum(len(d.cards) for d in project.decks)
    away = [r for r in renderers if r.name in IN_CHILD]
    if jobs < 2 or cards < MIN_CARDS or not away or not hasattr(os, "fork"):
        return [r.render(project, stage) for r in renderers]
    from quizgen.render import present

    for deck in project.decks:  # made once here, inherited by the child
        present.deck_views(deck)
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - runs in the child (coverage does not follow a fork)
        os.close(read_fd)
        _child(project, away, project.out_dir, write_fd)
    os.close(write_fd)
    results: dict[str, Rendered] = {}
    handed: tuple[Any, ...] = ("failed", "")
    try:
        for r in renderers:
            if r not in away:
                results[r.name] = r.render(project, stage)
    finally:
        handed = _collect(read_fd, pid)
        if len(results) + len(away) < len(renderers):  # this side failed: the child's staging goes too
            _discard(handed)
    if handed[0] == "ok":
        done, files, dirs = handed[1], handed[2], handed[3]
        stage.adopt(files, dirs)
        results.update(done)
    else:
        results.update((r.name, r.render(project, stage)) for r in away)
    return [results[r.name] for r in renderers]


def _child(project: Project, away: list[Renderer], out_dir: Path, write_fd: int) -> None:
    """Render `away` into a stage of its own and hand back what it staged. Never returns."""
    own = Stage(None)
    try:
        _own_store(out_dir, project.reuse)
        done = {r.name: r.render(project, own) for r in away}
        _keep_fresh()
        payload = pickle.dumps(("ok", done, own.files(), own.folders()))
    except BaseException:  # the parent renders this part again and reports what goes wrong
        own.discard()
        payload = pickle.dumps(("failed", traceback.format_exc()))
    try:
        view = memoryview(payload)
        while view:
            view = view[os.write(write_fd, view) :]
    finally:
        os._exit(0)  # nothing of the parent's (its store, its buffers) is closed or flushed from here


_store: Any = None  # the child's own connection to the build cache (a connection must not cross a fork)


def _own_store(out_dir: Path, enabled: bool) -> None:
    """Point the kept highlights and torch readings at a store connection of the child's own."""
    global _store
    from quizgen.execution.cache import Cache
    from quizgen.render import highlighting, present

    _store = Cache(out_dir / ".cache", enabled)
    for kept, table in _kept(highlighting.KEPT, present.TORCH_USE):
        kept.fresh.clear()  # the parent's own, which the parent stores
        if kept.lookup is not None:
            kept.lookup = lambda key, table=table: _store.lookup(table, [key]).get(key)


def _keep_fresh() -> None:
    """What the child worked out anew goes into the store (the parent never sees it)."""
    from quizgen.render import highlighting, present

    for kept, table in _kept(highlighting.KEPT, present.TORCH_USE):
        _store.store(table, kept.take_fresh())
    _store.close()


def _kept(highlights: Kept[Any, Any], torch_use: Kept[Any, Any]) -> list[tuple[Kept[Any, Any], str]]:
    """The kept results a render works out, each with its table in the build cache."""
    return [(highlights, "highlight"), (torch_use, "torch")]


def _collect(read_fd: int, pid: int) -> tuple[Any, ...]:
    chunks = []
    with os.fdopen(read_fd, "rb") as pipe:
        while chunk := pipe.read(1 << 16):
            chunks.append(chunk)
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
