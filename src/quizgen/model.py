"""The cards as plain data: what the loader produces and the pipeline passes on. No I/O here."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from quizgen.errors import Location

Kind = Literal["value", "myth", "order", "basic"]
KINDS: tuple[Kind, ...] = ("value", "myth", "order", "basic")

DEFAULT_RTOL = 1e-3
DEFAULT_ATOL = 1e-6


@dataclass(frozen=True)
class Snippet:
    """Python source from a card file, with the file line its first line stands on."""

    code: str
    path: str
    line: int

    def to_job(self) -> dict[str, Any]:
        return {"code": self.code, "path": self.path, "line": self.line}


@dataclass(frozen=True)
class Tolerance:
    rtol: float = DEFAULT_RTOL
    atol: float = DEFAULT_ATOL


@dataclass(frozen=True)
class Declared:
    """An answer the author wrote down; execution must agree with it."""

    value: Any
    location: Location


@dataclass
class Card:
    id: str
    kind: Kind
    deck: str
    location: Location
    tags: list[str] = field(default_factory=list)
    explain: str = ""
    fields: dict[str, Location] = field(default_factory=dict)

    def at(self, name: str) -> Location:
        """The location of one of this card's fields (the card's own where the field is absent)."""
        return self.fields.get(name, self.location)


@dataclass
class ValueCard(Card):
    ask: str = ""
    code: Snippet | None = None
    answer_expr: Snippet | None = None
    declared: Declared | None = None
    tolerance: Tolerance = field(default_factory=Tolerance)


@dataclass
class MythCard(Card):
    claim: str = ""
    verdict: bool = False
    proof: Snippet | None = None


@dataclass
class OrderCard(Card):
    ask: str = ""
    setup: Snippet | None = None
    lines: list[Snippet] = field(default_factory=list)
    distractors: list[Snippet] = field(default_factory=list)
    repeat: int = 1
    check: Snippet | None = None


@dataclass
class BasicCard(Card):
    front: str = ""
    back: str = ""
    code: Snippet | None = None


@dataclass
class Deck:
    name: str
    path: str
    description: str = ""
    tags: list[str] = field(default_factory=list)
    setup: Snippet | None = None
    cards: list[Card] = field(default_factory=list)


@dataclass
class Outcome:
    """What executing one card produced (from the worker or the cache)."""

    ok: bool
    output: str = ""
    value: dict[str, Any] | None = None
    orders: list[list[int]] | None = None
    usable_distractors: list[dict[str, Any]] | None = None
    error: str | None = None
    torch_version: str = ""
    seconds: float = 0.0
    cached: bool = False

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Outcome:
        return cls(
            ok=bool(data["ok"]),
            output=str(data.get("output", "")),
            value=data.get("value"),
            orders=data.get("orders"),
            usable_distractors=data.get("usable_distractors"),
            error=data.get("error"),
            torch_version=str(data.get("torch_version", "")),
            seconds=float(data.get("seconds", 0.0)),
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "output": self.output,
            "value": self.value,
            "orders": self.orders,
            "usable_distractors": self.usable_distractors,
            "error": self.error,
            "torch_version": self.torch_version,
            "seconds": self.seconds,
        }


@dataclass
class VerifiedCard:
    """A card whose computable parts were executed and checked; what the renderers consume."""

    card: Card
    outcome: Outcome | None = None

    @property
    def answer(self) -> dict[str, Any] | None:
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
