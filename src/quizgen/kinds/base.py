"""What a card kind is: everything the rest of quizgen needs to know about one kind, in one class.

A kind reads its fields (parse), says what must run (job), checks what ran (verify), and shows itself
to learners (view) and to Anki (note_fields). Everything else of a kind lies in its own folder beside its
module (`kinds/<name>/`): its Anki templates `anki.{front,back}.html` and script `anki.js`, its quiz
template `quiz.html` (a project overrides it as `templates/quiz/kinds/<name>.html`) and its quiz script
`quiz.js`, if any.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import ClassVar, Generic, TypeVar, cast

from quizgen.answers import compare
from quizgen.answers import placeholders as prose
from quizgen.cards.fields import Field
from quizgen.cards.model import Card, Deck, Snippet, VerifiedCard
from quizgen.cards.reader import Reader
from quizgen.errors import Location, Problem
from quizgen.execution.protocol import Job, Outcome, SnippetJob, last_line
from quizgen.render.lms.question import Question
from quizgen.render.view import CardView

C = TypeVar("C", bound=Card)  # the kind's own card class


class CardKind(Generic[C]):
    """A kind of card, for its own card class `C`: everything quizgen asks of a kind."""

    name: ClassVar[str]
    title: ClassVar[str]  # the heading a card of this kind gets in the quiz
    fields: ClassVar[dict[str, Field]]  # the kind's own fields (besides id, kind, tags, explain)
    run_field: ClassVar[str] = "code"  # the field blamed when execution fails
    anki_model_id: ClassVar[int]  # frozen for ever: Anki matches note types by id
    anki_fields: ClassVar[tuple[str, ...]]  # frozen for ever under anki_model_id (see render/anki/notetypes)
    quiz_scripts: ClassVar[dict[str, str]] = {}  # asset name -> a further script in the kind's folder

    def parse(self, reader: Reader, common: Card) -> C:
        """The card, from its YAML fields; problems go to the reader."""
        raise NotImplementedError

    def job(self, deck: Deck, card: C) -> Job | None:
        """What the worker must run for the card, or None when nothing in it executes."""
        return None

    def further_jobs(self, deck: Deck, card: C) -> dict[str, Job]:
        """Jobs the card needs besides its own, by name (a value card's variants); their outcomes reach
        verify and view as outcome.parts."""
        return {}

    def failure(self, card: C, message: str) -> str:
        """The message for a card whose execution failed."""
        return message

    def verify(self, card: C, outcome: Outcome) -> list[Problem]:
        """Every way a successfully executed card disagrees with its execution."""
        return []

    def warnings(self, card: C, outcome: Outcome) -> list[Problem]:
        """What is true but suspicious about an executed card (printed; the build goes on)."""
        return []

    def placeholders(self, card: C) -> set[str]:
        """The `{{names}}` the card's text may cite: what its execution computes."""
        if not self.runs(card):
            return set()
        return {"output", *card.cite, *(prose.TORCH_CHANGE if card.varies_with_torch else ())}

    def runs(self, card: C) -> bool:
        """Whether anything of the card executes (a card that runs nothing cannot cite)."""
        return True

    def cited(self, card: C, outcome: Outcome) -> dict[str, str]:
        """The placeholders' values, as the card's text shows them."""
        values = {"output": outcome.output.strip()}
        for name, value in (outcome.cited or {}).items():  # a string is quoted as text, not as its repr
            values[name] = str(value["value"]) if value["type"] == "str" else compare.show(value)
        return values

    def torch_answer(self, card: C, outcome: Outcome) -> str:
        """What must agree across the project's torch matrix: the answer as learners see it ("" when the
        kind has none: its code must only run)."""
        values = self.cited(card, outcome)
        return values.get("answer", values.get("verdict", ""))

    def torch_agrees(self, card: C, other: str, outcome: Outcome) -> bool:
        """Whether another torch's answer (as torch_answer shows it) is this outcome's answer."""
        return other == self.torch_answer(card, outcome)

    def accepted(self, card: C, outcome: Outcome | None) -> list[str]:
        """What the card accepts, as `quizgen show` prints it for its author."""
        answer = self.torch_answer(card, outcome) if outcome is not None and self.runs(card) else ""
        return [f"answer: {answer}" if answer else "nothing of it is judged by running code"]

    def published(self, card: C, outcome: dict[str, object]) -> dict[str, object]:
        """The outcome as build/cards.json publishes it (a kind may ship a shorter equivalent)."""
        return outcome

    def view(self, vc: VerifiedCard, view: CardView) -> None:
        """Fill in the kind's part of what learners see."""
        raise NotImplementedError

    def note_fields(self, vc: VerifiedCard, view: CardView) -> dict[str, str]:
        """The kind's own Anki note fields, as HTML that still needs making Anki-safe."""
        raise NotImplementedError

    def lms_question(self, view: CardView, common: Question) -> Question | None:
        """The card as a question an LMS grades itself (`common` filled in but for its type and answer),
        or None when only quizgen's judge can (render/lms/items.py)."""
        return None

    def setup_shown(self, card: C) -> list[Snippet]:
        """The card's own setup, shown to Anki learners after the deck's."""
        return []

    def card_of(self, vc: VerifiedCard) -> C:
        """A verified card of this kind, as the kind's own card class."""
        return cast(C, vc.card)

    @property
    def folder(self) -> Path:
        """The kind's own folder: its templates and scripts (the folder of the module defining it)."""
        return Path(sys.modules[type(self).__module__].__file__ or "").parent

    def anki_templates(self) -> tuple[str, str]:
        """(front, back) Anki templates, with `%QUIZGEN_JS%` where the media script's name goes."""
        front, back = (self.folder / f"anki.{side}.html" for side in ("front", "back"))
        return front.read_text(encoding="utf-8"), back.read_text(encoding="utf-8")

    def anki_script(self) -> str:
        """The kind's Anki script (`anki.js`: its hooks for the shared glue), or "" when it needs none."""
        script = self.folder / "anki.js"
        return script.read_text(encoding="utf-8") if script.is_file() else ""

    def quiz_assets(self) -> dict[str, Path]:
        """The kind's files among the quiz's assets, by asset name: its `quiz.js` as `kinds/<name>.js`, and
        the further scripts `quiz_scripts` names."""
        found = {name: self.folder / file for name, file in self.quiz_scripts.items()}
        script = self.folder / "quiz.js"
        return {**found, f"kinds/{self.name}.js": script} if script.is_file() else found


def raised_problem(card: Card, outcome: Outcome, fields: dict[str, Snippet | None], hint: str) -> Problem:
    """An exception the card did not declare, reported at the line that raised it, with its traceback.

    `fields` are the card's snippets by field name: the one holding the line is named (else the first).
    """
    placed = outcome.placed
    field = next(iter(fields))
    where = card.at(field)
    if placed and placed.line:
        spot = (placed.path, placed.line)
        field = next((name for name, s in fields.items() if spot in snippet_lines(s)), field)
        where = Location(placed.path, placed.line, 0, card.id, field)
    trace = placed.traceback if placed else compare.show(outcome.value) if outcome.value else ""
    return Problem(where, f"{hint}:\n{trace}")


def snippet_lines(*snippets: Snippet | None) -> set[tuple[str, int]]:
    """(file, line) of every line of the snippets: where an exception may come from."""
    return {(s.path, n) for s in snippets if s is not None for n in range(s.line, last_line(s.to_job()) + 1)}


def setup_jobs(deck: Deck, *extra: Snippet | None) -> list[SnippetJob]:
    """The deck's setup and any further setup snippets, as they go into a job."""
    return [s.to_job() for s in (deck.setup, *extra) if s is not None]
