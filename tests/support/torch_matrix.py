"""A project verified on a torch matrix: the zero_grad card whose answer changed in torch 2.0, its lock
recording answers per version, what the build published, and the real torch 1.13.1 where it is kept."""

from __future__ import annotations

import json
import os
import sqlite3
import zipfile
from pathlib import Path

import pytest

from quizgen import kinds, pipeline
from quizgen.cards import loader
from quizgen.cards.model import Tolerance
from quizgen.errors import CardErrors
from quizgen.torch_versions import environments, installed, matrix
from tests.support.projects import write_project
from tests.support.quiz import as_shown

INSTALLED = installed.release()
OLD = "1.13.1"
REAL_TORCHES = environments.root()  # where this user keeps them (read before conftest moves the cache)

ZERO_GRAD_CARD = """\
deck: Matrix
setup: |
  import torch
cards:
  - id: zero-grad-default
    kind: value
    ask: "What is `w.grad` after `opt.zero_grad()`?"
    code: |
      w = torch.nn.Parameter(torch.ones(2))
      opt = torch.optim.SGD([w], lr=0.1)
      w.sum().backward()
      opt.zero_grad()
    answer_expr: w.grad
    answer: null
{extra}    explain: "{explain}"
"""


def real_old_python() -> Path:
    """The Python of the real torch 1.13.1 where this user keeps it; CI provisions it when absent (a
    download of about 1.8 GB), elsewhere the test is skipped."""
    python = REAL_TORCHES / OLD / "bin" / "python"
    if not python.exists():
        if os.environ.get("CI") != "true":
            pytest.skip(f"torch {OLD} is not provisioned (`quizgen torch add {OLD}`); CI provisions it")
        with pytest.MonkeyPatch.context() as patch:
            patch.setenv("QUIZGEN_TORCH_DIR", str(REAL_TORCHES))
            environments.provision(OLD)
    return python


def deck(extra: str = "", explain: str = "It is `{{answer}}`.") -> str:
    lines = "".join(f"    {line}\n" for line in extra.splitlines())
    return ZERO_GRAD_CARD.format(extra=lines, explain=explain)


def make(root: Path, text: str, versions: list[str]) -> Path:
    write_project(root, {"deck.yaml": text})
    (root / "quizgen.toml").write_text(f"torch = {json.dumps(versions)}\n", encoding="utf-8")
    return root


def record(root: Path, answers: dict[str, str], card_id: str = "zero-grad-default") -> None:
    """Write a lock that recorded `answers` (version -> answer) for the card's job as it is now."""
    decks, problems = loader.load(root / "cards", Tolerance(), "choice")
    assert not problems
    found = next((d, c) for d in decks for c in d.cards if c.id == card_id)
    job = kinds.get(found[1].kind).job(*found)
    assert job is not None
    lock = {"format": 1, "cards": {}, "notetypes": {}, "removed": {}, "torch": {}}
    for version, answer in answers.items():
        lock["torch"][version] = {card_id: {"answer": answer, "job": matrix.content(job)}}
    (root / "cards" / "quizgen.lock").write_text(json.dumps(lock), encoding="utf-8")


def published(root: Path) -> str:
    """The quiz pages and every Anki note's fields the build wrote, as text."""
    pages = sorted((root / "build" / "quiz").rglob("*.html"))
    texts = [as_shown(p.read_text(encoding="utf-8")) for p in pages]
    for apkg in sorted((root / "build" / "anki").glob("*.apkg")):
        with zipfile.ZipFile(apkg) as z:
            (root / "col.anki2").write_bytes(z.read("collection.anki2"))
        with sqlite3.connect(root / "col.anki2") as db:
            texts += [flds.replace("\x1f", "\n") for (flds,) in db.execute("select flds from notes")]
    return "\n".join(texts)


def errors_of(options: pipeline.Options) -> str:
    with pytest.raises(CardErrors) as caught:
        pipeline.check(options)
    return "\n".join(str(p) for p in caught.value.problems)
