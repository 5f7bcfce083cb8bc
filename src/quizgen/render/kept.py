"""Results worked out once per distinct input in this process and kept across builds in the build cache.

Highlighting and the "uses torch" reading of card code both cost too much to redo on every build: each
keeps its results here, reads earlier builds' results from the store while a render runs (`using`) or in
one go ahead of it (`recall`), and hands the new ones to the store when the render ends.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Generic, TypeVar

K = TypeVar("K")
V = TypeVar("V")


class Kept(Generic[K, V]):
    """Values by item: `key` names an item in the store, `encode`/`decode` turn a value into its text."""

    def __init__(
        self, key: Callable[[K], str], encode: Callable[[V], str], decode: Callable[[str], V]
    ) -> None:
        self.key, self.encode, self.decode = key, encode, decode
        self.known: dict[K, V] = {}
        self.fresh: dict[K, V] = {}  # worked out in this process and not yet handed to the store
        self.lookup: Callable[[str], str | None] | None = None  # the store, while `using` it

    def get(self, item: K, work: Callable[[], V]) -> V:
        """The value of `item`: known, else stored by an earlier build, else `work()` (kept as fresh)."""
        found = self.known.get(item)
        if found is None and self.lookup is not None and (stored := self.lookup(self.key(item))) is not None:
            found = self.known[item] = self.decode(stored)
        if found is None:
            found = self.known[item] = self.fresh[item] = work()
        return found

    def recall(self, stored: dict[str, str], items: dict[str, K]) -> None:
        """Take in what an earlier build stored (`stored`, by the store's name of each of `items`)."""
        self.known.update((items[key], self.decode(text)) for key, text in stored.items() if key in items)

    @contextmanager
    def using(
        self, lookup: Callable[[str], str | None], keep: Callable[[list[tuple[str, str]]], None]
    ) -> Iterator[None]:
        """Read earlier builds' values through `lookup` meanwhile; hand the new ones to `keep` at the end."""
        self.lookup = lookup
        try:
            yield
        finally:
            self.lookup = None
            keep(self.take_fresh())

    def take_fresh(self) -> list[tuple[str, str]]:
        """The values worked out since the last take, as the store keeps them; no longer fresh after."""
        fresh = [(self.key(item), self.encode(value)) for item, value in self.fresh.items()]
        self.fresh.clear()
        return fresh
