"""Which torch is installed: the one place that answers it, for quizgen's own Python and for an
environment's, from the wheel's metadata (importing torch takes seconds)."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterable
from functools import cache
from pathlib import Path

from quizgen.torch_versions.versions import release as _release

NONE = "none"  # no torch installed


def _read(infos: Iterable[Path]) -> str | None:
    """The `Version:` header of the first torch dist-info folder that has one."""
    for info in infos:
        with contextlib.suppress(OSError):
            for line in (info / "METADATA").read_text(encoding="utf-8").splitlines():
                if line.startswith("Version: "):
                    return line.removeprefix("Version: ").strip()
                if not line:
                    break  # the headers end here
    return None


@cache
def version() -> str:
    """The version of the torch installed with quizgen, with its local tag (`2.13.0+cpu`), or "none"."""
    found = _read(info for entry in sys.path for info in sorted(Path(entry or ".").glob("torch-*.dist-info")))
    if found is not None:  # where importlib.metadata looks first, without importing it (and email)
        return found
    from importlib import metadata

    try:
        return metadata.version("torch")
    except metadata.PackageNotFoundError:
        return NONE


def release() -> str:
    """The installed torch's release: `2.13.0`."""
    return _release(version())


def of(python: Path) -> str:
    """The torch version an environment's Python runs (the key of its results), or "none"."""
    if python == Path(sys.executable):
        return version()
    prefix = python.parent.parent
    return _read(sorted(prefix.glob("lib/python*/site-packages/torch-*.dist-info"))) or NONE
