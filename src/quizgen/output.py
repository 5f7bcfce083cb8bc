"""Writing outputs atomically: a file or folder is replaced whole, or not at all."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict
from pathlib import Path
from typing import Any

from quizgen.errors import OutputError
from quizgen.model import VerifiedDeck

FORMAT_VERSION = 1


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


@contextmanager
def atomic_file(path: Path) -> Iterator[Path]:
    """Yield a temporary path beside `path`; it replaces `path` only if the block succeeds."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        os.fchmod(fd, 0o666 & ~_umask())  # mkstemp makes it private; an output is an ordinary file
        os.close(fd)
    except OSError as exc:
        raise OutputError(f"{path}: cannot write: {exc.strerror or exc}") from None
    try:
        yield Path(tmp)
        os.replace(tmp, path)
    except OSError as exc:
        raise OutputError(f"{path}: cannot write: {exc.strerror or exc}") from None
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


@contextmanager
def atomic_dir(path: Path) -> Iterator[Path]:
    """Yield a fresh folder beside `path`; it takes `path`'s place only if the block succeeds."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(dir=path.parent, prefix=f".{path.name}."))
        tmp.chmod(0o777 & ~_umask())  # a web server must be able to read a published folder
    except OSError as exc:
        raise OutputError(f"{path}: cannot write: {exc.strerror or exc}") from None
    old = path.parent / f".{path.name}.old"
    try:
        yield tmp
        shutil.rmtree(old, ignore_errors=True)
        if path.exists():
            os.replace(path, old)
        os.replace(tmp, path)
        shutil.rmtree(old, ignore_errors=True)
    except OSError as exc:
        raise OutputError(f"{path}: cannot write: {exc.strerror or exc}") from None
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def cards_data(decks: list[VerifiedDeck]) -> dict[str, Any]:
    """The verified cards as JSON-able data (what `build/cards.json` holds)."""
    out = []
    for vd in decks:
        deck = asdict(vd.deck)
        deck.pop("cards")
        cards = []
        for vc in vd.cards:
            card = asdict(vc.card)
            card.pop("fields", None)
            card["location"] = str(vc.card.location)
            outcome = vc.outcome.to_json() if vc.outcome else None
            if outcome is not None:
                outcome.pop("seconds")  # the same sources must build the same bytes
            card["outcome"] = outcome
            cards.append(card)
        deck["cards"] = cards
        out.append(deck)
    return {"format": FORMAT_VERSION, "decks": out}


def write_cards_json(decks: list[VerifiedDeck], out_dir: Path) -> list[Path]:
    path = out_dir / "cards.json"
    with atomic_file(path) as tmp:
        tmp.write_text(json.dumps(cards_data(decks), indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return [path]


def write_schema(out_dir: Path) -> list[Path]:
    from quizgen.schema import json_schema

    path = out_dir / "quizgen.schema.json"
    with atomic_file(path) as tmp:
        tmp.write_text(json.dumps(json_schema(), indent=2) + "\n", encoding="utf-8")
    return [path]
