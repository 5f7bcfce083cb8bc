"""The lock file beside the cards (quizgen.lock) read as JSON, once bounded: the Anki lock
(project/lock.py), the torch matrix and the judged cards (torch_versions/matrix.py, judged.py) each take their
section of what this returns.

It comes with the repository: a lock of 60 MB (80 KB as git ships it, repeated records compress well)
parsed into 1 GB and 27 s. Its size is checked before it is read, and it is read only as a regular file,
not through a symlink.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from quizgen.constants import MAX_LOCK_BYTES
from quizgen.errors import QuizgenError
from quizgen.project import files

MENDING = "Restore it from version control, or delete it: Anki then sees every note as changed once."


def load(path: Path) -> Any:
    """The lock's JSON, None when there is none. QuizgenError when it is not a file a lock can be (too
    large, a symlink, a FIFO); ValueError or RecursionError when it does not parse; OSError when it
    cannot be read."""
    try:
        data = files.read_bytes(path, MAX_LOCK_BYTES)
    except FileNotFoundError:
        return None
    except files.Refused as exc:
        raise QuizgenError(f"{path}: not a quizgen lock file ({exc.strerror}). {MENDING}") from None
    return json.loads(data.decode("utf-8"))  # (UnicodeDecodeError is a ValueError)
