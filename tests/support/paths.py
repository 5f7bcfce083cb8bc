"""Where the checkout's files are, whatever folder a test file sits in."""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]  # tests/support/paths.py -> the checkout
