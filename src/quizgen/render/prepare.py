"""A build's rendering, begun while the worker pool runs the snippets: the parent would only wait.

Highlighting every card's code, and parsing it to tell whether it uses torch, were most of a cold
build's rendering and need no executed result, so a thread does them as soon as the cards are loaded
(what earlier builds worked out read from the cache in one go).
It is a warm-up: a code it did not guess is highlighted by the render as before.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from pathlib import Path

from quizgen import kinds
from quizgen.cards.model import Card, Deck, Snippet
from quizgen.project.store import Store
from quizgen.render import present, torch_use
from quizgen.render.code import highlighting


def shown_code(deck: Deck, card: Card) -> Iterator[str]:
    """The code a card's views are likely to highlight: its snippets, and its setups as shown."""
    for value in getattr(card, "__dict__", {}).values():
        if isinstance(value, Snippet) and value.code:
            yield value.code
    shown = [s for s in kinds.get(card.kind).setup_shown(card) if s.code.strip()]
    if shown:
        yield "\n".join(s.code.strip() for s in shown)
    if deck.setup is not None and deck.setup.code.strip():
        yield "\n".join(s.code.strip() for s in [deck.setup, *shown])


class Preparation:
    """Started with the loaded decks (`start`), stopped before the render begins (`stop`)."""

    def __init__(self, cache_dir: Path, use_cache: bool = True) -> None:
        self.cache_dir, self.use_cache = cache_dir, use_cache
        self.halt = threading.Event()
        self.thread: threading.Thread | None = None

    def start(self, decks: list[Deck]) -> None:
        self.thread = threading.Thread(target=self._run, args=(decks,), daemon=True)
        self.thread.start()

    def _run(self, decks: list[Deck]) -> None:
        cache = Store(self.cache_dir, self.use_cache)  # its own: SQLite connections stay in their thread
        try:  # a part of the warm-up that fails leaves its work to the render
            with contextlib.suppress(Exception):
                self._torch(decks, cache)
            with contextlib.suppress(Exception):
                codes = [code for deck in decks for card in deck.cards for code in shown_code(deck, card)]
                highlighting.prepare(codes, lambda keys: cache.lookup("highlight", keys), self.halt)
        finally:
            cache.close()

    def _torch(self, decks: list[Deck], cache: Store) -> None:
        """Whether each card's code uses torch (what its view tells): earlier builds' answers read in
        one go, the rest worked out until `halt`."""
        jobs = [job for deck in decks for card in deck.cards if (job := present.card_job(deck, card))]
        parts = {torch_use.torch_parts(job): job for job in jobs}
        keys = {torch_use.torch_key(part): part for part in parts}
        torch_use.recall(cache.lookup("torch", list(keys)), keys)
        for part, job in parts.items():
            if self.halt.is_set():
                return
            torch_use.uses_torch(job, part)

    def stop(self) -> None:
        self.halt.set()
        if self.thread is not None:
            self.thread.join()
