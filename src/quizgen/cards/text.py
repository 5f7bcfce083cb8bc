"""The Markdown of cards and decks, checked where it is written and again as its placeholders filled it
in (what a snippet printed or computed is as untrusted as what was written): math the quiz cannot show
or Anki must not read, a math opener Markdown leaves outside math, and images that are missing (or no
image, or outside the project) are errors; a remote image is a warning, since nothing is loaded from the
network (it shows as a link). The math checked is what the renderer's own Markdown parser reads as math."""

from __future__ import annotations

import difflib
import os
import re
from dataclasses import replace
from pathlib import Path

from quizgen.cards import schema, svg
from quizgen.cards.model import Deck
from quizgen.constants import MAX_CARD_FILE_BYTES, MAX_IMAGE_BYTES
from quizgen.errors import Location, Problem
from quizgen.project import files
from quizgen.render import markup
from quizgen.render.math.mathml import problem as tex_problem

IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".gif", ".svg", ".webp")
# How each raster format's file starts (WebP: "RIFF", a size, "WEBP"): an image is published as it is, so
# its bytes must be an image's, not a file of the project it names through a symlink (.git/config, which
# CI checkouts leave holding the job's token).
_STARTS = {".png": b"\x89PNG\r\n\x1a\n", ".jpg": b"\xff\xd8\xff", ".jpeg": b"\xff\xd8\xff", ".gif": b"GIF8"}


def image_file(card_file: str, src: str) -> Path:
    """The file a card's image source names: a path relative to the card's YAML file."""
    return Path(card_file).parent / markup.image_path(src)


def _image_problem(card_file: str, src: str, root: Path) -> str | None:
    path = markup.image_path(src)
    if Path(path).is_absolute():
        return f"image '{path}': write its path relative to the card file"
    if not path.lower().endswith(IMAGE_SUFFIXES):
        return f"image '{path}' is not an image file ({', '.join(IMAGE_SUFFIXES)})"
    file = image_file(card_file, src)
    if not file.resolve().is_relative_to(root.resolve()):
        return f"image '{path}' is outside the project folder {root}"
    if not file.is_file():
        return f"image not found: {file} (image paths are relative to the card file)"
    if (why := _content_problem(file, Path(path).suffix.lower())) is not None:
        return f"image '{path}' is not {why}"
    if file.suffix.lower() == ".svg" and (why := svg.problem(file)) is not None:
        return (
            f"image '{path}' is not plain drawing: {why} (a published SVG is also a page of the quiz's site)"
        )
    return None


def _content_problem(file: Path, suffix: str) -> str | None:
    """What the file is not, when its bytes are not those of an image of its suffix (None when they are)."""
    try:
        with files.open_regular(file, follow=True) as f:  # (a link: checked to stay in the project)
            size, start = os.fstat(f.fileno()).st_size, f.read(12)
    except OSError as exc:
        return f"readable ({exc.strerror or exc})"
    if size > MAX_IMAGE_BYTES:
        return f"an image of at most {MAX_IMAGE_BYTES:,} bytes (it has {size:,})"
    if suffix == ".svg":
        return None  # (svg.problem reads it whole)
    if suffix == ".webp":
        fits = start[:4] == b"RIFF" and start[8:12] == b"WEBP"
    else:
        fits = start.startswith(_STARTS[suffix])
    return None if fits else f"a {suffix[1:].upper()} file (its bytes are not an image's)"


def text_problems(
    text: str, card_file: str, root: Path, where: Location
) -> tuple[list[Problem], list[Problem]]:
    """(errors, warnings) of one Markdown text written at `where`."""
    errors, warnings = [], []
    for tex, display in markup.math_in(text):
        reason = tex_problem(tex, display)
        if reason:
            shown = f"\\[{tex}\\]" if display else f"\\({tex}\\)"
            errors.append(Problem(where, f"math {shown} cannot be shown: {reason}"))
    errors += _stray_problems(text, where) + _unbalanced_problems(text, where)
    warnings += _wrapped_problems(text, where)
    for src in markup.image_sources(text):
        if markup.is_remote(src):
            if not src.lower().startswith("data:"):
                message = f"image {src} is not offline: it is shown as a link; save it beside the card file"
                warnings.append(Problem(where, message))
        elif (reason := _image_problem(card_file, src, root)) is not None:
            errors.append(Problem(where, reason))
    return errors, warnings


def _wrapped_problems(text: str, where: Location) -> list[Problem]:
    """A line of a paragraph that Markdown reads as the start of a list, heading or quote is a warning at
    its line (a `|` block's text starts on the line after its key): the quiz and Anki would break the
    sentence there, as a wrap that put "1." first on a line did."""
    problems = []
    lines = text.split("\n")
    for at, block in markup.wrapped_blocks(text):
        start = lines[at].strip()
        here = replace(where, line=where.line + 1 + at, col=0) if where.line else where
        message = (
            f"the line '{start[:30]}' starts a Markdown {block} inside a paragraph: rewrap the text so no "
            f"line starts with '{start.split()[0]}' (or put a blank line before a {block} you mean)"
        )
        problems.append(Problem(here, message))
    return problems


def _stray_problems(text: str, where: Location) -> list[Problem]:
    """A math opener the rendered text holds outside math and code is an error: Anki's MathJax would
    read what follows it as math that no check read."""
    problems = []
    for opener in dict.fromkeys(markup.stray_math(text)):
        message = (
            f"'{opener}' outside math (Markdown makes it of '\\{opener}' or '&#92;{opener[1]}'): Anki would "
            "read what follows as math no check has read; put it in a code span to show it as text"
        )
        problems.append(Problem(where, message))
    return problems


_PAIRS = {"\\(": "\\)", "\\[": "\\]"}


def _unbalanced_problems(text: str, where: Location) -> list[Problem]:
    """A math opener no closer follows (or a closer no opener opened) is an error: Markdown would show
    a bare bracket and the TeX after it as text (`( \\frac{1}{1-p}?`)."""
    problems = []
    for delimiter in dict.fromkeys(markup.unbalanced_math(text)):
        bracket = delimiter[1]
        if delimiter in _PAIRS:
            message = (
                f"math opened with '{delimiter}' is never closed (no '{_PAIRS[delimiter]}' after it), so "
                f"the quiz would show '{bracket}' and the TeX as text: close it with '{_PAIRS[delimiter]}', "
                f"or write a plain '{bracket}'"
            )
        else:
            opener = next(o for o, c in _PAIRS.items() if c == delimiter)
            message = (
                f"'{delimiter}' closes math that no '{opener}' opened, so the quiz would show "
                f"'{bracket}': open the math with '{opener}', or write a plain '{bracket}'"
            )
        problems.append(Problem(where, message))
    return problems


def filled_problems(
    written: str, filled: str, root: Path, where: Location, names: list[str], shown: str = ""
) -> tuple[list[Problem], list[Problem]]:
    """(errors, warnings) of a text as its placeholders `names` filled it in: the same rules as for
    written text, for what the filling brought (the written text's own problems are told at load).
    `filled` has the values as they are; `shown`, when given, is the text as it is rendered (its values
    escaped), whose openers outside math are checked too."""
    told = {p.message for found in text_problems(written, where.path, root, where) for p in found}
    cited = ", ".join(f"{{{{{name}}}}}" for name in names)

    def new(found: list[Problem]) -> list[Problem]:
        said = f"as its placeholders ({cited}) filled it in: "
        return [Problem(where, said + p.message) for p in found if p.message not in told]

    errors, warnings = text_problems(filled, where.path, root, where)
    if shown:
        errors += [p for p in _stray_problems(shown, where) if p.message not in {e.message for e in errors}]
    return new(errors), new(warnings)


def _description_at(deck: Deck) -> Location:
    """The line of a deck's `description:` (the file alone when it cannot be found)."""
    try:
        text = files.read_text(deck.path, MAX_CARD_FILE_BYTES, follow=True)
    except (OSError, UnicodeDecodeError):
        return Location(deck.path, field="description")
    found = re.search(r"^description\s*:", text, re.M)
    line = text.count("\n", 0, found.start()) + 1 if found else 0
    return Location(deck.path, line, 1 if found else 0, field="description")


def check(decks: list[Deck], root: Path) -> tuple[list[Problem], list[Problem]]:
    """(errors, warnings) of every deck description and card text; images must lie under `root`, and a
    link to a card must name a card of the project."""
    errors: list[Problem] = []
    warnings: list[Problem] = []
    ids = sorted(card.id for deck in decks for card in deck.cards)
    known = set(ids)
    for deck in decks:
        found = [(deck.description, _description_at(deck))] if deck.description else []
        for card in deck.cards:
            found += [(text, card.at(name)) for name, text in schema.text_fields(card).items()]
        for text, where in found:
            bad, doubtful = text_problems(text, where.path, root, where)  # images beside their own file
            errors += bad + _link_problems(text, known, ids, where)
            warnings += doubtful
    return errors, warnings


def _link_problems(text: str, known: set[str], ids: list[str], where: Location) -> list[Problem]:
    """A link to a card (`[text](#card:id)`) naming no card of the project is an error at its field."""
    problems = []
    for target in markup.card_links(text):
        if target not in known:
            close = difflib.get_close_matches(target, ids, n=1)
            hint = f"; did you mean '{close[0]}'?" if close else ""
            problems.append(Problem(where, f"link to card '{target}': no card has that id{hint}"))
    return problems
