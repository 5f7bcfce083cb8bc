"""YAML card files -> Decks, keeping the file line of every field and reporting every error at once.

The loader reads a deck's own fields and finds each card's kind; the kind (kinds/) reads the rest."""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Any

import yaml

from quizgen import kinds
from quizgen.answers import placeholders
from quizgen.cards import continued, course, hints, schema, stored
from quizgen.cards.fields import FILE_FIELDS, ID_PATTERN
from quizgen.cards.model import Card, Deck, Tolerance
from quizgen.cards.reader import Reader, did_you_mean, foreign
from quizgen.constants import MAX_CARD_FILE_BYTES, MAX_YAML_DEPTH, MAX_YAML_NODES, MAX_YAML_TEXT
from quizgen.errors import CardErrors, Location, Problem, UsageError
from quizgen.project import confine, files, trees
from quizgen.torch_versions import versions

_ID = re.compile(ID_PATTERN)
_LIMIT = "the most a card file may have"


class _PythonParser(yaml.reader.Reader, yaml.scanner.Scanner, yaml.parser.Parser):
    def __init__(self, stream: str) -> None:
        yaml.reader.Reader.__init__(self, stream)
        yaml.scanner.Scanner.__init__(self)
        yaml.parser.Parser.__init__(self)


_Parser: Any = yaml._yaml.CParser if yaml.__with_libyaml__ else _PythonParser  # libyaml where there is one
# YAML 1.1's implicit types less dates, `<<` merges and `=`: the card format reads those as text.
_AS_TEXT = (":timestamp", ":merge", ":value")
_IMPLICIT = {
    first: [(tag, regexp) for tag, regexp in resolvers if not tag.endswith(_AS_TEXT)]
    for first, resolvers in yaml.resolver.Resolver.yaml_implicit_resolvers.items()
}
# ... and YAML 1.2's floats on top: `1e-3`, `5E+2`, `1.0e3` are numbers, as people write them (YAML 1.1
# reads them as text: it wants a dot and a signed exponent, `1.0e-3`).
_EXPONENT = re.compile(r"^[-+]?(?:[0-9][0-9_]*(?:\.[0-9_]*)?|\.[0-9][0-9_]*)[eE][-+]?[0-9]+$")
for _first in "-+.0123456789":
    _IMPLICIT[_first] = [("tag:yaml.org,2002:float", _EXPONENT), *_IMPLICIT.get(_first, [])]


class _TooBig(yaml.composer.ComposerError):
    """A file past MAX_YAML_NODES nodes or MAX_YAML_DEPTH levels: not invalid YAML, but refused."""


class _Loader(yaml.composer.Composer, _Parser, yaml.resolver.Resolver):
    """libyaml's parser under PyYAML's composer, which stops at the first node past the limits."""

    def __init__(self, text: str) -> None:
        _Parser.__init__(self, text)
        yaml.composer.Composer.__init__(self)
        yaml.resolver.Resolver.__init__(self)
        self.yaml_implicit_resolvers = _IMPLICIT
        self.nodes = self.depth = 0

    def compose_node(self, parent: yaml.Node | None, index: Any) -> yaml.Node | None:
        if self.check_event(yaml.AliasEvent):
            return super().compose_node(parent, index)  # the node it names is counted by _measure
        mark = self.peek_event().start_mark
        self.nodes += 1
        if self.nodes > MAX_YAML_NODES:
            raise _TooBig(None, None, f"more than {MAX_YAML_NODES:,} YAML nodes ({_LIMIT})", mark)
        if self.depth == MAX_YAML_DEPTH:
            raise _TooBig(
                None, None, f"lists and mappings nested more than {MAX_YAML_DEPTH} deep ({_LIMIT})", mark
            )
        self.depth += 1
        try:
            return super().compose_node(parent, index)
        finally:
            self.depth -= 1


def card_files(cards_dir: Path) -> list[Path]:
    """The card files under `cards_dir`, in a stable order."""
    if not cards_dir.is_dir():
        raise UsageError(f"cards folder not found: {cards_dir}")
    found = [p for p in trees.walk(cards_dir) if p.suffix in (".yaml", ".yml") and p.is_file()]
    return sorted(found)


def load_project(cards_dir: Path) -> list[Deck]:
    """Load every card file under `cards_dir`; raise CardErrors listing every problem found."""
    decks, problems = load(cards_dir)
    if problems:
        raise CardErrors(in_source_order(problems))
    return decks


def load(
    cards_dir: Path,
    tolerance: Tolerance | None = None,
    value_answers: str = "choice",
    memo: stored.Memo | None = None,
) -> tuple[list[Deck], list[Problem]]:
    """Every card that loads, and every problem of those that do not (so one run reports them all).

    A card with a problem is left out of its deck; a deck whose own fields are wrong is left out whole.
    With a `memo`, a file that loaded whole before is read back from it rather than parsed.
    """
    confine.cards_folder(cards_dir)
    kept, problems = confine.card_files(card_files(cards_dir), cards_dir)
    if not kept and not problems:
        raise UsageError(f"no card files (*.yaml) in {cards_dir}")

    def parse(path: Path, answers: str, found: list[Problem]) -> continued.Part | None:
        settings = repr((tolerance, answers, kinds.names()))  # what else loading a file depends on
        read = partial(load_file, path, found, tolerance, answers)
        return read() if memo is None else stored.recalled(path, settings, found, memo, read, continued.Part)

    return course.arrange(continued.assemble(kept, value_answers, parse, problems), problems), problems


def in_source_order(problems: list[Problem]) -> list[Problem]:
    return sorted(problems, key=lambda p: (p.location.path, p.location.line, p.location.col))


def _position(before: str) -> tuple[int, int]:
    """The line and column just after `before`, the part of a file that comes before some point."""
    return before.count("\n") + 1, len(before) - (before.rfind("\n") + 1) + 1


def _decode(path: Path, problems: list[Problem]) -> str | None:
    """The file's text, or None after reporting why it cannot be read (too large, not UTF-8)."""
    name = str(path)
    try:
        data = files.read_bytes(path, MAX_CARD_FILE_BYTES, follow=True)  # (links: confine.py's to judge)
    except files.TooLarge as exc:
        line, col = _position(files.head(path, MAX_CARD_FILE_BYTES, follow=True).decode("utf-8", "replace"))
        message = f"the file is {exc.size:,} bytes, past the {MAX_CARD_FILE_BYTES:,} a card file may have"
        problems.append(Problem(Location(name, line, col), message))
        return None
    except OSError as exc:
        problems.append(Problem(Location(name), f"cannot read: {exc.strerror or exc}"))
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line, col = _position(data[: exc.start].decode("utf-8"))
        message = f"not UTF-8 ({exc.reason}: byte 0x{data[exc.start]:02x}); card files are UTF-8"
        problems.append(Problem(Location(name, line, col), message))
        return None


def _compose(path: Path, problems: list[Problem]) -> yaml.Node | None:
    """The file's YAML node tree, or None after reporting why there is none."""
    name = str(path)
    text = _decode(path, problems)
    if text is None:
        return None
    try:
        root = _single_node(text)
    except yaml.reader.ReaderError:  # a control character, at a position in bytes or in characters
        bad = yaml.reader.Reader.NON_PRINTABLE.search(text)
        line, col = _position(text[: bad.start() if bad else 0])
        character = f" U+{ord(bad.group()):04X}" if bad else ""
        problems.append(Problem(Location(name, line, col), f"invalid YAML: control character{character}"))
        return None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line, col = (mark.line + 1, mark.column + 1) if mark else (0, 0)
        prefix = "" if isinstance(exc, _TooBig) else "invalid YAML: "
        message = f"{prefix}{exc.problem or exc}{hints.yaml_hint(str(exc.problem or ''), text, line)}"
        quoted = None if isinstance(exc, _TooBig) else hints.quote_problem(str(exc.problem), text, line)
        if quoted is not None:  # told where it started, not where PyYAML gave up (lines later)
            line, col, message = quoted
        problems.append(Problem(Location(name, line, col), message))
        return None
    except yaml.YAMLError as exc:
        problems.append(Problem(Location(name), f"invalid YAML: {exc}"))
        return None
    if root is None:
        problems.append(Problem(Location(name, 1, 1), "empty card file"))
    elif (too_big := _expanded_too_far(name, root)) is not None:
        problems.append(too_big)
        return None
    return root


def _single_node(text: str) -> yaml.Node | None:
    loader = _Loader(text)
    try:
        node: yaml.Node | None = loader.get_single_node()
        return node
    finally:
        loader.dispose()


_Size = tuple[int, int, int]  # nodes, characters of text, depth: with every alias written out
_OVER: _Size = (MAX_YAML_NODES + 1, MAX_YAML_TEXT + 1, MAX_YAML_DEPTH + 1)


def _measure(node: yaml.Node, sizes: dict[int, _Size], open_: set[int]) -> _Size:
    """What `node` stands for with every alias written out, each count capped just past its limit.

    An alias names a node that began earlier in the file, so it is measured already or still open: then
    it contains itself, and is endless. The recursion is as deep as the file's own nesting."""
    key = id(node)
    if key in sizes:
        return sizes[key]
    if key in open_:
        return _OVER
    open_.add(key)
    if isinstance(node, yaml.ScalarNode):
        children, size = [], (1, min(len(node.value), _OVER[1]), 1)
    else:
        children, size = node.value, (1, 0, 1)
        if isinstance(node, yaml.MappingNode):
            children = [child for pair in node.value for child in pair]
    for child in children:
        n, t, d = _measure(child, sizes, open_)
        size = (min(size[0] + n, _OVER[0]), min(size[1] + t, _OVER[1]), max(size[2], min(d + 1, _OVER[2])))
    open_.discard(key)
    sizes[key] = size
    return size


def _expanded_too_far(path: str, root: yaml.Node) -> Problem | None:
    """An alias bomb, located at the card and field that hold it (or as near as one holds all of it)."""
    sizes: dict[int, _Size] = {}
    nodes, text, depth = _measure(root, sizes, set())
    if nodes < _OVER[0] and text < _OVER[1] and depth < _OVER[2]:
        return None

    def over(node: yaml.Node) -> bool:
        return any(n >= limit for n, limit in zip(sizes[id(node)], _OVER, strict=True))

    def pair_over(node: yaml.Node) -> tuple[yaml.Node, yaml.Node] | None:
        pairs = node.value if isinstance(node, yaml.MappingNode) else []
        return next(((k, v) for k, v in pairs if over(k) or over(v)), None)

    where, card, field = root, None, None
    if (pair := pair_over(root)) is not None:
        where, field = pair[0], pair[0].value if isinstance(pair[0], yaml.ScalarNode) else None
        items = pair[1].value if field == "cards" and isinstance(pair[1], yaml.SequenceNode) else []
        if (item := next((i for i in items if over(i)), None)) is not None:
            where, field, card = item, None, _card_id(item)
            if (pair := pair_over(item)) is not None:
                where, field = pair[0], pair[0].value if isinstance(pair[0], yaml.ScalarNode) else None
    if nodes > MAX_YAML_NODES:
        message = f"aliases expand to more than {MAX_YAML_NODES:,} YAML nodes ({_LIMIT})"
    elif text > MAX_YAML_TEXT:
        message = f"aliases expand to more than {MAX_YAML_TEXT:,} characters of text ({_LIMIT})"
    else:
        message = f"aliases nest lists and mappings more than {MAX_YAML_DEPTH} deep ({_LIMIT})"
    mark = where.start_mark
    return Problem(Location(path, mark.line + 1, mark.column + 1, card, field), message)


def _card_id(node: yaml.Node) -> str | None:
    pairs = node.value if isinstance(node, yaml.MappingNode) else []
    ids = [v.value for k, v in pairs if k.value == "id" and isinstance(v, yaml.ScalarNode)]
    return str(ids[0]) if ids else None


def load_file(
    path: Path, problems: list[Problem], tolerance: Tolerance | None = None, value_answers: str = "choice"
) -> continued.Part | None:
    """One card file as a deck or a deck's continuation; None (with the problems added) when it is wrong
    as a whole (a card that is wrong is left out of it)."""
    root = _compose(path, problems)
    if root is None:
        return None
    name = str(path)
    if not isinstance(root, yaml.MappingNode):
        mark = root.start_mark
        where = Location(name, mark.line + 1, mark.column + 1)
        problems.append(Problem(where, "a card file is a mapping with 'deck' and 'cards'"))
        return None
    before = len(problems)
    top = Reader(name, root, FILE_FIELDS, problems)
    part = continued.read_top(top, value_answers)  # a deck's own keys, or the deck it continues
    deck = part.deck
    if top.has("cards"):  # a missing `cards` is reported by the Reader
        cards_node = top.value_node("cards")
        if not isinstance(cards_node, yaml.SequenceNode):
            top.error(top.at("cards"), "'cards' must be a list of cards")
        elif (problem := foreign(cards_node)) is not None:
            top.error(top.at("cards"), problem)
        elif not cards_node.value:
            top.error(top.at("cards"), "the deck has no cards")
        else:
            deck_ok = len(problems) == before  # the cards are read (and reported) even when it is not
            cards = (
                _card(name, node, deck.name, problems, tolerance, part.answers) for node in cards_node.value
            )
            deck.cards = [card for card in cards if card is not None]
            return part if deck_ok else None
    return part if len(problems) == before else None


def _card(
    path: str, node: yaml.Node, deck: str, problems: list[Problem], tolerance: Tolerance | None, answers: str
) -> Card | None:
    """One card, read by its kind; None when anything in it is wrong."""
    mark = node.start_mark
    here = Location(path, mark.line + 1, mark.column + 1)
    if not isinstance(node, yaml.MappingNode):
        problems.append(Problem(here, "a card is a mapping with 'id' and 'kind'"))
        return None
    raw = {k.value: v for k, v in node.value if isinstance(k, yaml.ScalarNode)}
    card_id = raw["id"].value if isinstance(raw.get("id"), yaml.ScalarNode) else None
    before = len(problems)
    if "id" in raw and (card_id is None or not _ID.match(str(card_id))):
        where = _node_loc(path, raw["id"], card_id, "id")
        problems.append(Problem(where, "an id is a slug of lowercase letters, digits and single dashes"))
    kind_node = raw.get("kind")
    kind_name = kind_node.value if isinstance(kind_node, yaml.ScalarNode) else None
    if kind_name not in kinds.names():
        where = _node_loc(path, kind_node or node, card_id, "kind")
        if "id" not in raw:
            problems.append(Problem(here, "missing required field 'id'"))
        if kind_name is None:
            problems.append(Problem(where, f"card has no 'kind' (one of {', '.join(kinds.names())})"))
        else:
            hint = did_you_mean(str(kind_name), list(kinds.names()))
            problems.append(Problem(where, f"unknown kind '{kind_name}'{hint}"))
        return None
    fields = schema.card_fields(kind_name)
    if swallowed := hints.swallowed(path, raw, fields, card_id):
        problems += swallowed  # what the card then lacks, or the block's odd code, would be a cascade
        return None
    kind = kinds.get(kind_name)
    reader = Reader(path, node, fields, problems, card_id, tolerance, answers)
    for written in ("id", "kind"):  # read above as written: a tag on them is left to report
        reader.plain(written)
    common = Card(
        id=card_id or "",
        kind=kind_name,
        deck=deck,
        location=reader.loc(),
        tags=reader.tags(),
        explain=reader.text("explain"),
        fields=reader.locations(),
        cite=reader.cite(),
        timeout=_timeout(reader),
        torch=_torch_range(reader),
        varies_with_torch=reader.boolean("varies_with_torch"),
        judged_on=str(reader.text("judged_on") or ""),
    )
    card = kind.parse(reader, common)
    _check_placeholders(card, problems)
    return card if len(problems) == before else None


def _timeout(reader: Reader) -> float | None:
    """The card's own timeout in seconds, if it gives one (the user's ceiling is checked when it runs)."""
    node = reader.plain("timeout")
    value = reader.scalar(node, "timeout") if node is not None else None
    if node is None or (value is None and not isinstance(node, yaml.ScalarNode)):
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < math.inf:
        reader.error(reader.loc(node, "timeout"), f"timeout is a number of seconds > 0, not {node.value!r}")
        return None
    return float(value)


def _torch_range(reader: Reader) -> str:
    """The card's own range of torch versions ("" when it gives none)."""
    written = reader.text("torch")
    if written and (wrong := versions.range_problem(str(written))):
        reader.error(reader.at("torch"), wrong)
    return str(written or "")


def _check_placeholders(card: Card, problems: list[Problem]) -> None:
    """Every `{{name}}` in the card's text names something its execution computes."""
    kind = kinds.get(card.kind)
    allowed = kind.placeholders(card)
    for name in sorted(set(card.cite) & placeholders.BUILT_IN):
        problems.append(Problem(card.at("cite"), f"cite name '{name}' is taken: {{{{{name}}}}} is built in"))
    if card.cite and not kind.runs(card):
        problems.append(Problem(card.at("cite"), "cite needs code to run, and this card has none"))
    for field, text in schema.text_fields(card).items():
        for used in placeholders.names(text):
            if used not in allowed:
                can = ", ".join(f"{{{{{n}}}}}" for n in sorted(allowed)) or "nothing: it runs no code"
                message = f"unknown placeholder {{{{{used}}}}}: this card can cite {can}"
                problems.append(Problem(card.at(field), message))


def _node_loc(path: str, node: yaml.Node, card: str | None, field: str) -> Location:
    mark = node.start_mark
    return Location(path, mark.line + 1, mark.column + 1, card, field)


def iter_cards(decks: list[Deck]) -> Iterator[tuple[Deck, Card]]:
    for deck in decks:
        for card in deck.cards:
            yield deck, card
