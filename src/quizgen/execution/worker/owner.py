"""Which process runs jobs: the processes its snippets fork are not it, and must not answer for it."""

from __future__ import annotations

import os

_owner = 0  # the pid of the process that runs jobs (the job's own process); its forks must not answer


def claim_jobs() -> None:
    """Mark this process as the one that runs jobs: processes its snippets fork are not."""
    global _owner
    _owner = os.getpid()


def is_fork_of_job() -> bool:
    """True in a process a snippet forked: it must end instead of going on as the job."""
    return _owner != 0 and os.getpid() != _owner
