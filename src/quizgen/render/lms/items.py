"""The cards an LMS can grade itself, as plain questions for the question-bank exports (render/lms/qti.py,
render/lms/moodle.py) and the SCORM packages' interactions: each kind says what its cards become
(CardKind.lms_question). A myth card is true/false; a value card with variants a multiple choice (the
executed misconceptions are the wrong answers, their labels the feedback), one without numerical (a
number, within the card's tolerance) or short answer (None, a bool, a dtype, a string, an exception's
name); an order puzzle with one accepted order, no distractors and no indentation an ordering question.
The rest (basic cards, tensors and shapes typed by hand, puzzles accepting several orders) need the
quiz's own judge, which an LMS does not have."""

from __future__ import annotations

import html
import re
from collections.abc import Callable
from pathlib import Path

from quizgen import kinds
from quizgen.cards.model import VerifiedDeck
from quizgen.constants import MAX_IMAGE_BYTES
from quizgen.project import files
from quizgen.render.base import Project, Rendered
from quizgen.render.lms.question import Question
from quizgen.render.markup import rewrite_images
from quizgen.render.present import deck_views
from quizgen.render.quiz import slugify
from quizgen.render.stage import Stage
from quizgen.render.view import CardView

Writer = Callable[[Path, str, str, list[Question]], None]  # (folder, deck slug, deck name, its questions)


def slugs(decks: list[VerifiedDeck]) -> list[str]:
    """Each deck's file name, as the quiz names its page."""
    taken: set[str] = set()
    return [slugify(vd.deck.name, taken) for vd in decks]


def questions(vd: VerifiedDeck) -> tuple[list[Question], int]:
    """The deck's cards an LMS can grade, in the deck's order, and how many cards it holds."""
    views = deck_views(vd)
    found = [q for q in (question(view) for view in views) if q is not None]
    return found, len(views)


def question(view: CardView) -> Question | None:
    """The card as a question an LMS grades, or None when it cannot."""
    text = view.prompt_html + (f"<pre><code>{html.escape(view.code)}</code></pre>" if view.code else "")
    return kinds.get(view.kind).lms_question(
        view, Question(view.id, "", _title(view), text, view.explain_html, media=view.media)
    )


def images(text_html: str, q: Question, src: Callable[[str], str]) -> tuple[str, dict[str, bytes]]:
    """The HTML with each of the card's images named `src(name)` (where the export puts it), and those
    images' bytes by name (for the export to package)."""
    found: dict[str, bytes] = {}

    def place(name: str) -> str | None:
        if name not in q.media:  # a remote image is a link already; nothing else names a file
            return None
        found[name] = files.read_bytes(q.media[name], MAX_IMAGE_BYTES, follow=True)
        return src(name)

    return rewrite_images(text_html, place), found


def _title(view: CardView) -> str:
    """The card's id and the start of its prompt as plain text."""
    words = " ".join(html.unescape(re.sub(r"<[^>]*>", " ", view.prompt_html)).split())
    return f"{view.id}: {words[:80]}{'…' if len(words) > 80 else ''}"


def banks(project: Project, stage: Stage, name: str, what: str, write: Writer) -> Rendered:
    """A question bank per deck in build/<name>/, each written by `write(folder, slug, deck name,
    questions)`; the build's note says how many cards they took."""
    folder = stage.folder(project.out_dir / name)
    exported = total = 0
    for slug, vd in zip(slugs(project.decks), project.decks, strict=True):
        found, count = questions(vd)
        exported, total = exported + len(found), total + count
        write(folder, slug, vd.deck.name, found)
    return Rendered([project.out_dir / name], [note(what, exported, total)])


def note(what: str, exported: int, total: int) -> str:
    """What a question-bank export took, for the build's summary."""
    if exported == total:
        return f"{what}: all {total} cards, graded by the LMS"
    rest = total - exported
    return f"{what}: {exported} of {total} cards; the other {rest} need quizgen's own judge (docs/lms.md)"
