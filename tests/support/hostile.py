"""A stranger's repository and what it leaves: decks of one-snippet cards, the key planted in a fake
$HOME, every byte a build wrote, the host processes still running."""

from __future__ import annotations

import os
import textwrap
import zipfile
from pathlib import Path

HOME_SECRET = "s3cret-0d5e-token"  # the key in the fake $HOME of safety/conftest.py's `home`


def basic(card_id: str, code: str) -> str:
    body = textwrap.indent(textwrap.dedent(code).strip("\n"), "      ")
    return f"  - id: {card_id}\n    kind: basic\n    front: f\n    back: b\n    code: |\n{body}\n"


def deck(*cards: str) -> dict[str, str]:
    return {"hostile.yaml": "deck: Hostile\nsetup: |\n  import os, socket\ncards:\n" + "".join(cards)}


def outputs(root: Path, cache: bool = True) -> str:
    """Every byte the build wrote, as text (the .apkg files are zip archives: their members too); with
    `cache` False, only what it publishes (not a build/.cache folder a repository shipped)."""
    texts = []
    for path in (root / "build").rglob("*") if (root / "build").exists() else []:
        if not cache and ".cache" in path.relative_to(root / "build").parts:
            continue
        if path.suffix == ".apkg":
            with zipfile.ZipFile(path) as z:
                texts += [z.read(name).decode("latin-1") for name in z.namelist()]
        elif path.is_file():
            texts.append(path.read_bytes().decode("latin-1"))
    return "\n".join(texts)


def running(token: str) -> list[int]:
    """Host processes (not zombies) whose command line holds `token`."""
    found = []
    for entry in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                if token.encode() in f.read():
                    found.append(int(entry))
        except OSError:
            continue
    return found
