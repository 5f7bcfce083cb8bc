"""The cards as plain data: what the loader produces and the pipeline passes on. No I/O here.

Each kind's own card class lives with the kind (quizgen/kinds/); this module holds what they share.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from quizgen.constants import DEFAULT_ATOL, DEFAULT_RTOL
from quizgen.errors import Location
from quizgen.execution.protocol import JSON, Answer, Outcome, SnippetJob


@dataclass(frozen=True)
class Snippet:
    """Python source from a card file, with the file line its first line stands on."""

    code: str
    path: str
    line: int

    def to_job(self) -> SnippetJob:
        return {"code": self.code, "path": self.path, "line": self.line}


@dataclass(frozen=True)
class Tolerance:
    rtol: float = DEFAULT_RTOL
    atol: float = DEFAULT_ATOL


@dataclass(frozen=True)
class Declared:
    """An answer the author wrote down; execution must agree with it."""

    value: JSON
    location: Location


@dataclass
class Card:
    id: str
    kind: str
    deck: str
    location: Location
    tags: list[str] = field(default_factory=list)
    explain: str = ""
    fields: dict[str, Location] = field(default_factory=dict)
    cite: dict[str, Snippet] = field(default_factory=dict)  # named expressions its text may quote
    timeout: float | None = None  # seconds its snippets may run; None: the project's (or --timeout)
    torch: str = (
        ""  # the torch versions it is about, as a range (quizgen/torch_versions/versions.py); "": every one
    )
    varies_with_torch: bool = False  # its answer differs across the torch matrix, as a declared fact
    judged_on: str = (
        ""  # the torch version its question is about: it runs there alone (quizgen/torch_versions/judged.py)
    )

    def at(self, name: str) -> Location:
        """The location of one of this card's fields (the card's own where the field is absent)."""
        return self.fields.get(name, self.location)


@dataclass
class Deck:
    name: str
    path: str
    location: Location | None = None  # of its `deck:` field
    description: str = ""
    tags: list[str] = field(default_factory=list)
    setup: Snippet | None = None
    cards: list[Card] = field(default_factory=list)
    attempts: int | None = None  # checks an order puzzle allows: the deck's own, else the project's
    shuffle: bool | None = None  # quiz mode's cards in a random order: the deck's own, else the project's
    position: int | None = None  # its place in the course (cards/course.py); None: after the ordered decks
    position_at: Location | None = None  # of its `position:` field


@dataclass(frozen=True)
class TorchAnswers:
    """A card's answer on each torch version of the project's matrix that verified it (oldest first), and
    the content of its job (what the lock records the answers of the versions not installed for)."""

    answers: dict[str, str]
    job: str = ""
    judged: str = ""  # the version learners are judged on: the installed torch, which runs every card
    recorded: tuple[str, ...] = ()  # versions whose answers are the lock's (the build says so)
    since: tuple[str, str] | None = None  # (the last release with the older answer, the first with the newer)

    @property
    def differ(self) -> bool:
        return len(set(self.answers.values())) > 1

    def changed(self) -> tuple[str, str] | None:
        """(the last version whose answer is not the newest's, the first one after it with the newest
        answer), None when every version agrees."""
        shown = list(self.answers.items())
        older = [n for n, (_, answer) in enumerate(shown) if answer != shown[-1][1]]
        return (shown[older[-1]][0], shown[older[-1] + 1][0]) if older else None


@dataclass
class VerifiedCard:
    """A card whose computable parts were executed and checked; what the renderers consume."""

    card: Card
    outcome: Outcome | None = None
    torch: TorchAnswers | None = None  # with a torch matrix of more than the installed version

    @property
    def answer(self) -> Answer | None:
        return self.outcome.value if self.outcome else None

    @property
    def output(self) -> str:
        return self.outcome.output if self.outcome else ""

    @property
    def torch_version(self) -> str:
        return self.outcome.torch_version if self.outcome else ""


@dataclass
class VerifiedDeck:
    deck: Deck
    cards: list[VerifiedCard]
