"""A deck with math and an image (a PNG made here, no image files), built once per test module; read in
the quiz and in Anki."""

from __future__ import annotations

import hashlib
import struct
import zlib
from pathlib import Path

import pytest

from quizgen import pipeline
from quizgen.execution.pool import Pool
from tests.support.projects import write_project

GRADIENT = r"\frac{\partial L}{\partial w_1} * x_2"
MATH_DECK = r"""
deck: Math::Images
description: 'Chain rule \( a_1 * b_2 \) ![the graph](img/graph.png)'
setup: |
  import torch
cards:
  - id: grad-formula
    kind: value
    ask: 'With \( GRADIENT \) for \( L = 3 w_1 \), what is `w.grad`?  ![the graph](img/graph.png)'
    code: |
      w = torch.tensor(2.0, requires_grad=True)
      (3 * w).backward()
    answer_expr: w.grad.item()
    answer: 3.0
    explain: 'Display math: \[ \sum_{i=1}^n x_i^2 \] and code stays code: `\(x_1\)`.'
  - id: graph-basic
    kind: basic
    front: '![the graph again](img/graph.png) What does the graph show?'
    back: 'The graph of \( w \mapsto 3 w \).'
""".replace("GRADIENT", GRADIENT)


def png(width: int, height: int) -> bytes:
    """A real PNG of one colour (width x height), made here so the test needs no image files."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    rows = b"".join(b"\x00" + b"\x20\x80\xe0" * width for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows))
        + chunk(b"IEND", b"")
    )


def math_project(root: Path, deck: str = MATH_DECK) -> Path:
    write_project(root, {"math.yaml": deck})
    (root / "cards" / "img").mkdir()
    (root / "cards" / "img" / "graph.png").write_bytes(png(12, 8))
    return root


@pytest.fixture(scope="module")
def math_build(tmp_path_factory: pytest.TempPathFactory, pool: Pool) -> pipeline.Report:
    root = math_project(tmp_path_factory.mktemp("math"))
    report = pipeline.build(pipeline.Options(cards_dir=root / "cards", out_dir=root / "build", pool=pool))
    report.root = root  # type: ignore[attr-defined]
    return report


def image_name() -> str:
    return f"qg-{hashlib.sha256(png(12, 8)).hexdigest()[:16]}.png"
