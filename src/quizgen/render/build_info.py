"""`build/build-info.json`: where this build took each torch version's answers from.

The decks and the quiz say only which versions a card is verified on, so the same cards and lock build
the same bytes on any machine. Whether a version ran here (executed or from the cache) or its answers
are what quizgen.lock recorded is this build's own business: said in its summary and here, for the
builder and CI, never shipped to learners.
"""

from __future__ import annotations

import json
import platform
from dataclasses import asdict, dataclass, field

from quizgen import __version__
from quizgen.cards.model import VerifiedDeck
from quizgen.render.base import Project, Rendered
from quizgen.render.stage import Stage
from quizgen.torch_versions import installed, versions

NAME = "build-info.json"
_ABOUT = (
    "Where this build's answers came from, by torch version: run here, or quizgen.lock's record of a "
    "version not provisioned. For the builder, not for learners (the decks and quiz do not depend on it)."
)


@dataclass
class Answered:
    """What one torch version answered in a build."""

    cards: int = 0  # cards it answered
    ran_here: int = 0  # ... run on this machine (in this build, or an earlier one whose result is cached:
    # which, the summary says; here it would make an incremental build's folder differ from a clean one's)
    from_lock: list[str] = field(default_factory=list)  # ids of the cards whose answer is the lock's

    def as_json(self) -> dict[str, object]:
        return {k.replace("_", " "): v for k, v in asdict(self).items()}


def provenance(decks: list[VerifiedDeck]) -> dict[str, Answered]:
    """By torch version (oldest first): what it answered, and where each answer came from."""
    found: dict[str, Answered] = {}
    for vc in (vc for vd in decks for vc in vd.cards):
        if vc.outcome is None or not vc.torch_version:
            continue
        for version in list(vc.torch.answers) if vc.torch else [vc.torch_version]:
            entry = found.setdefault(version, Answered())
            entry.cards += 1
            if vc.torch is not None and version in vc.torch.recorded:
                entry.from_lock.append(vc.card.id)
                continue
            entry.ran_here += 1
    return {v: found[v] for v in versions.ordered(found)}


class BuildInfo:
    name = "build info"

    def render(self, project: Project, stage: Stage) -> Rendered:
        path = project.out_dir / NAME
        data = {
            "about": _ABOUT,
            "quizgen": __version__,
            "python": platform.python_version(),
            "torch": {v: a.as_json() for v, a in provenance(project.decks).items()},
            "installed torch": installed.version(),  # with its wheel's local tag (`+cpu`)
        }
        stage.file(path).write_text(json.dumps(data, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        return Rendered([path])
