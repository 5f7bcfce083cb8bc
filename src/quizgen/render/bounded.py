"""A project's own templates render in a child process with bounded memory and CPU time.

Jinja's sandbox keeps a template from Python's internals, not from asking for gigabytes (`('x' *
1500000000)|length` took 1.46 GB) or from loops nested for hours. Every operator, filter, string method,
format width and `lipsum` would each need its own refusal, and one missed is the attack: so the
renderers that run a project's templates (the quiz) render in a forked child (render/parallel.py) whose
address space grows at most MEMORY and whose CPU time is at most SECONDS. Past either, the template's
innermost frame is named in the error (render/quiz.py), or, if the child is killed, the templates folder.
"""

from __future__ import annotations

import resource
import signal
from types import FrameType

from quizgen.render.base import Project

TEMPLATED = frozenset({"quiz", "scorm"})  # the renderers that run a project's templates
MEMORY = 512 << 20  # bytes the child may grow by: the quiz of 10,000 cards grows by tens of MB
SECONDS = 120  # CPU seconds the child may take: the quiz of 10,000 cards takes a few
GRACE = 5  # seconds after SECONDS when the kernel kills a child that did not stop at the signal
SAID = f"{MEMORY >> 20} MiB of memory and {SECONDS} s of CPU time: far past what any page needs"


class OutOfTime(Exception):
    """The child rendering a project's templates passed its CPU time."""


def applies(project: Project) -> bool:
    """Whether the project has templates of its own for the renderers in TEMPLATED."""
    return (project.templates_dir / "quiz").is_dir()


def limit() -> None:
    """In the child: cap its address space MEMORY above its size now, and its CPU time at SECONDS."""
    try:
        with open("/proc/self/statm") as f:
            grown = int(f.read().split()[0]) * resource.getpagesize() + MEMORY
        resource.setrlimit(resource.RLIMIT_AS, (grown, grown))
    except (OSError, ValueError):  # pragma: no cover - not Linux: the CPU time alone is bounded
        pass
    used = resource.getrusage(resource.RUSAGE_SELF)
    soft = int(used.ru_utime + used.ru_stime) + SECONDS
    signal.signal(signal.SIGXCPU, _out_of_time)
    resource.setrlimit(resource.RLIMIT_CPU, (soft, soft + GRACE))


def _out_of_time(signum: int, frame: FrameType | None) -> None:
    raise OutOfTime()
