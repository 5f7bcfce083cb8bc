"""Where the checkout's files are, whatever folder a test file sits in."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

REPO = Path(__file__).resolve().parents[2]  # tests/support/paths.py -> the checkout


def bench_module(name: str) -> ModuleType:
    """bench/NAME.py, loaded as a module (the bench is scripts, not a package)."""
    spec = importlib.util.spec_from_file_location(f"bench_{name}", REPO / "bench" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
