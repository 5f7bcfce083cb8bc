"""Code run in a fresh interpreter (what a module imports shows only where nothing imported it before)."""

from __future__ import annotations

import subprocess
import sys


def printed(code: str) -> str:
    """What `code` prints, run by this Python in a process of its own, stripped."""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return done.stdout.strip()
