"""YAML card files -> Decks, keeping the file line of every field and reporting every error at once."""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

from quizgen import schema
from quizgen.errors import CardErrors, Location, Problem, UsageError
from quizgen.model import (
    KINDS,
    BasicCard,
    Card,
    Deck,
    Declared,
    MythCard,
    OrderCard,
    Snippet,
    Tolerance,
    ValueCard,
)

_Loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_ID = re.compile(schema.ID_PATTERN)
_TAG = re.compile(r"^\S+$")
_BLOCK_STYLES = ("|", ">")


def card_files(cards_dir: Path) -> list[Path]:
    """The card files under `cards_dir`, in a stable order."""
    if not cards_dir.is_dir():
        raise UsageError(f"cards folder not found: {cards_dir}")
    files = [p for p in cards_dir.rglob("*") if p.suffix in (".yaml", ".yml") and p.is_file()]
    return sorted(files)


def load_project(cards_dir: Path) -> list[Deck]:
    """Load every card file under `cards_dir`; raise CardErrors listing every problem found."""
    files = card_files(cards_dir)
    if not files:
        raise UsageError(f"no card files (*.yaml) in {cards_dir}")
    problems: list[Problem] = []
    decks: list[Deck] = []
    for path in files:
        parser = _FileParser(path, problems)
        deck = parser.parse()
        if deck is not None:
            decks.append(deck)
    _check_unique(decks, problems)
    if problems:
        raise CardErrors(sorted(problems, key=lambda p: (p.location.path, p.location.line, p.location.col)))
    return decks


def _check_unique(decks: list[Deck], problems: list[Problem]) -> None:
    seen_ids: dict[str, Card] = {}
    seen_decks: dict[str, Deck] = {}
    for deck in decks:
        key = deck.name.lower()
        if key in seen_decks:
            problems.append(
                Problem(
                    Location(deck.path, field="deck"),
                    f"deck '{deck.name}' is also defined in {seen_decks[key].path}",
                )
            )
        else:
            seen_decks[key] = deck
        for card in deck.cards:
            if card.id in seen_ids:
                first = seen_ids[card.id]
                problems.append(
                    Problem(card.at("id"), f"duplicate id '{card.id}' (first defined at {first.at('id')})")
                )
            else:
                seen_ids[card.id] = card


def _did_you_mean(key: str, allowed: list[str]) -> str:
    close = difflib.get_close_matches(key, allowed, n=1)
    return f"; did you mean '{close[0]}'?" if close else f"; allowed: {', '.join(allowed)}"


class _FileParser:
    def __init__(self, path: Path, problems: list[Problem]) -> None:
        self.path = path
        self.name = str(path)
        self.problems = problems

    def loc(self, node: yaml.Node, card: str | None = None, field: str | None = None) -> Location:
        mark = node.start_mark
        return Location(self.name, mark.line + 1, mark.column + 1, card, field)

    def error(self, location: Location, message: str) -> None:
        self.problems.append(Problem(location, message))

    def parse(self) -> Deck | None:
        try:
            text = self.path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            self.error(Location(self.name), f"cannot read: {exc}")
            return None
        try:
            root = yaml.compose(text, Loader=_Loader)
        except yaml.MarkedYAMLError as exc:
            mark = exc.problem_mark or exc.context_mark
            line, col = (mark.line + 1, mark.column + 1) if mark else (0, 0)
            self.error(Location(self.name, line, col), f"invalid YAML: {exc.problem or exc}")
            return None
        except yaml.YAMLError as exc:
            self.error(Location(self.name), f"invalid YAML: {exc}")
            return None
        if root is None:
            self.error(Location(self.name, 1, 1), "empty card file")
            return None
        if not isinstance(root, yaml.MappingNode):
            self.error(self.loc(root), "a card file is a mapping with 'deck' and 'cards'")
            return None
        entries = self.mapping(root, schema.DECK_FIELDS, None)
        before = len(self.problems)
        name = self.text(entries, "deck", None, required=True)
        deck = Deck(name=name or "", path=self.name)
        deck.description = self.text(entries, "description", None)
        deck.tags = self.tags(entries, None)
        deck.setup = self.code(entries, "setup", None)
        if name is not None and not name.strip(" :"):
            self.error(self.loc(entries["deck"][1], field="deck"), "deck name is empty")
        cards_node = entries.get("cards")
        if cards_node is None:
            self.error(self.loc(root), "missing required field 'cards'")
        elif not isinstance(cards_node[1], yaml.SequenceNode):
            self.error(self.loc(cards_node[1], field="cards"), "'cards' must be a list of cards")
        else:
            for node in cards_node[1].value:
                card = self.card(node, deck.name)
                if card is not None:
                    deck.cards.append(card)
            if not cards_node[1].value:
                self.error(self.loc(cards_node[1], field="cards"), "the deck has no cards")
        return deck if len(self.problems) == before else None

    # -- structure ---------------------------------------------------------------------------

    def mapping(
        self, node: yaml.MappingNode, allowed: dict[str, schema.Field], card: str | None
    ) -> dict[str, tuple[yaml.Node, yaml.Node]]:
        """Key -> (key node, value node); reports duplicate and unknown keys."""
        entries: dict[str, tuple[yaml.Node, yaml.Node]] = {}
        for key_node, value_node in node.value:
            key = key_node.value if isinstance(key_node, yaml.ScalarNode) else None
            if not isinstance(key, str):
                self.error(self.loc(key_node, card), "keys must be plain names")
                continue
            if key in entries:
                first = entries[key][0].start_mark.line + 1
                self.error(self.loc(key_node, card, key), f"duplicate key '{key}' (first on line {first})")
                continue
            if key not in allowed:
                hint = _did_you_mean(key, list(allowed))
                self.error(self.loc(key_node, card, key), f"unknown key '{key}'{hint}")
                continue
            entries[key] = (key_node, value_node)
        for key, f in allowed.items():
            if f.required and key not in entries:
                self.error(self.loc(node, card), f"missing required field '{key}'")
        return entries

    def scalar(self, node: yaml.Node, card: str | None, field: str) -> Any:
        if not isinstance(node, yaml.ScalarNode):
            self.error(self.loc(node, card, field), "expected a single value, not a list or mapping")
            return None
        return _construct(node)

    def text(
        self,
        entries: dict[str, tuple[yaml.Node, yaml.Node]],
        key: str,
        card: str | None,
        required: bool = False,
    ) -> Any:
        if key not in entries:
            return None if required else ""
        node = entries[key][1]
        value = self.scalar(node, card, key)
        if value is None:
            if isinstance(node, yaml.ScalarNode):
                self.error(self.loc(node, card, key), f"'{key}' is empty")
            return None if required else ""
        if not isinstance(value, str):
            # A bare number or bool where text is expected is almost always meant as text.
            value = node.value
        return value

    def code(
        self,
        entries: dict[str, tuple[yaml.Node, yaml.Node]],
        key: str,
        card: str | None,
        mode: str = "exec",
    ) -> Snippet | None:
        if key not in entries:
            return None
        node = entries[key][1]
        value = self.text(entries, key, card, required=True)
        if value is None:
            return None
        line = node.start_mark.line + 1
        if isinstance(node, yaml.ScalarNode) and node.style in _BLOCK_STYLES:
            line += 1  # block scalar content starts on the line after the indicator
        snippet = Snippet(code=value, path=self.name, line=line)
        self.compiles(snippet, mode, card, key)
        return snippet

    def compiles(self, snippet: Snippet, mode: str, card: str | None, field: str) -> bool:
        try:
            compile("\n" * (snippet.line - 1) + snippet.code, snippet.path, mode)
        except SyntaxError as exc:
            self.error(
                Location(self.name, exc.lineno or snippet.line, exc.offset or 0, card, field),
                f"Python syntax error: {exc.msg}",
            )
            return False
        return True

    def tags(self, entries: dict[str, tuple[yaml.Node, yaml.Node]], card: str | None) -> list[str]:
        if "tags" not in entries:
            return []
        node = entries["tags"][1]
        if not isinstance(node, yaml.SequenceNode):
            self.error(self.loc(node, card, "tags"), "'tags' must be a list of words")
            return []
        tags = []
        for item in node.value:
            value = self.scalar(item, card, "tags")
            if not isinstance(value, str) or not _TAG.match(value):
                self.error(self.loc(item, card, "tags"), f"a tag is one word without spaces, not {value!r}")
            else:
                tags.append(value)
        return tags

    # -- cards -------------------------------------------------------------------------------

    def card(self, node: yaml.Node, deck: str) -> Card | None:
        if not isinstance(node, yaml.MappingNode):
            self.error(self.loc(node), "a card is a mapping with 'id' and 'kind'")
            return None
        raw = {k.value: v for k, v in node.value if isinstance(k, yaml.ScalarNode)}
        card_id = raw["id"].value if isinstance(raw.get("id"), yaml.ScalarNode) else None
        before = len(self.problems)
        if card_id is not None and not _ID.match(str(card_id)):
            self.error(
                self.loc(raw["id"], str(card_id), "id"),
                "an id is a slug of lowercase letters, digits and single dashes",
            )
        kind_node = raw.get("kind")
        kind = kind_node.value if isinstance(kind_node, yaml.ScalarNode) else None
        if kind not in KINDS:
            where = self.loc(kind_node or node, card_id, "kind")
            if card_id is None:
                self.error(self.loc(node), "missing required field 'id'")
            if kind is None:
                self.error(where, f"card has no 'kind' (one of {', '.join(KINDS)})")
            else:
                self.error(where, f"unknown kind '{kind}'{_did_you_mean(str(kind), list(KINDS))}")
            return None
        entries = self.mapping(node, schema.card_fields(kind), card_id)
        fields = {key: self.loc(v, card_id, key) for key, (_, v) in entries.items()}
        common: dict[str, Any] = dict(
            id=card_id or "",
            kind=kind,
            deck=deck,
            location=self.loc(node, card_id),
            tags=self.tags(entries, card_id),
            explain=self.text(entries, "explain", card_id),
            fields=fields,
        )
        card = getattr(self, f"card_{kind}")(entries, card_id, common)
        return card if len(self.problems) == before else None

    def card_value(self, entries: Any, cid: str, common: dict[str, Any]) -> ValueCard:
        card = ValueCard(**common)
        card.ask = self.text(entries, "ask", cid)
        card.code = self.code(entries, "code", cid)
        card.answer_expr = self.code(entries, "answer_expr", cid, mode="eval")
        if "answer" in entries:
            node = entries["answer"][1]
            value = _construct(node)
            card.declared = Declared(value, self.loc(node, cid, "answer"))
            self.check_answer(value, card.declared.location, card.answer_expr is None)
        card.tolerance = self.tolerance(entries, cid)
        return card

    def check_answer(self, value: Any, where: Location, raises: bool) -> None:
        if isinstance(value, dict):
            if (
                set(value) == {"shape"}
                and isinstance(value["shape"], list)
                and all(isinstance(n, int) and not isinstance(n, bool) for n in value["shape"])
            ) or (set(value) == {"raises"} and isinstance(value["raises"], str)):
                ok = True
            else:
                ok = False
            if not ok:
                self.error(where, "a mapping answer is {shape: [ints]} or {raises: ErrorName}")
                return
        elif isinstance(value, list):
            if not _numeric_nested(value):
                self.error(where, "a list answer holds numbers (or lists of numbers) only")
                return
        elif value is not None and not isinstance(value, (int, float, bool, str)):
            self.error(where, f"unsupported answer {value!r}")
            return
        if raises and not (isinstance(value, dict) and "raises" in value):
            self.error(where, "without 'answer_expr' the snippet must raise: write {raises: ErrorName}")

    def tolerance(self, entries: Any, cid: str) -> Tolerance:
        if "tolerance" not in entries:
            return Tolerance()
        node = entries["tolerance"][1]
        value = _construct(node)
        where = self.loc(node, cid, "tolerance")
        if not isinstance(value, dict) or not set(value) <= {"rtol", "atol"}:
            self.error(where, "tolerance is a mapping with 'rtol' and/or 'atol'")
            return Tolerance()
        for key, number in value.items():
            if isinstance(number, bool) or not isinstance(number, (int, float)) or number < 0:
                self.error(where, f"tolerance {key} must be a number >= 0, not {number!r}")
                return Tolerance()
        return Tolerance(**{k: float(v) for k, v in value.items()})

    def card_myth(self, entries: Any, cid: str, common: dict[str, Any]) -> MythCard:
        card = MythCard(**common)
        card.claim = self.text(entries, "claim", cid)
        if "verdict" in entries:
            node = entries["verdict"][1]
            verdict = self.scalar(node, cid, "verdict")
            if not isinstance(verdict, bool):
                self.error(self.loc(node, cid, "verdict"), f"verdict is true or false, not {node.value!r}")
            else:
                card.verdict = verdict
        card.proof = self.code(entries, "proof", cid)
        if card.proof is not None and not _has_assert(card.proof.code):
            self.error(
                self.loc(entries["proof"][1], cid, "proof"),
                "a proof needs at least one assert: without one it proves nothing",
            )
        return card

    def card_order(self, entries: Any, cid: str, common: dict[str, Any]) -> OrderCard:
        card = OrderCard(**common)
        card.ask = self.text(entries, "ask", cid) or "Put the lines in an order that works."
        card.setup = self.code(entries, "setup", cid)
        card.lines = self.lines(entries, "lines", cid)
        card.distractors = self.lines(entries, "distractors", cid)
        card.check = self.code(entries, "check", cid)
        if "lines" in entries and len(card.lines) < 2:
            self.error(self.loc(entries["lines"][1], cid, "lines"), "an order puzzle needs at least 2 lines")
        texts = [s.code.strip() for s in card.lines + card.distractors]
        for snippet, text in zip(card.lines + card.distractors, texts, strict=True):
            if texts.count(text) > 1:
                where = Location(self.name, snippet.line, 0, cid, "lines")
                self.error(where, f"the line {text!r} appears twice; lines must be distinct")
                break
        if "repeat" in entries:
            node = entries["repeat"][1]
            repeat = self.scalar(node, cid, "repeat")
            if isinstance(repeat, bool) or not isinstance(repeat, int) or not 1 <= repeat <= 100:
                self.error(
                    self.loc(node, cid, "repeat"), f"repeat is a whole number 1..100, not {node.value!r}"
                )
            else:
                card.repeat = repeat
        return card

    def lines(self, entries: Any, key: str, cid: str) -> list[Snippet]:
        if key not in entries:
            return []
        node = entries[key][1]
        if not isinstance(node, yaml.SequenceNode):
            self.error(self.loc(node, cid, key), f"'{key}' must be a list of code lines")
            return []
        snippets = []
        for item in node.value:
            value = self.scalar(item, cid, key)
            if not isinstance(value, str) or not value.strip():
                self.error(self.loc(item, cid, key), "each line is a non-empty string of code")
                continue
            snippet = Snippet(value, self.name, item.start_mark.line + 1)
            if self.compiles(snippet, "exec", cid, key):
                snippets.append(snippet)
        return snippets

    def card_basic(self, entries: Any, cid: str, common: dict[str, Any]) -> BasicCard:
        card = BasicCard(**common)
        card.front = self.text(entries, "front", cid)
        card.back = self.text(entries, "back", cid)
        card.code = self.code(entries, "code", cid)
        return card


def _construct(node: yaml.Node) -> Any:
    return yaml.constructor.SafeConstructor().construct_object(node, deep=True)


def _numeric_nested(value: Any) -> bool:
    if isinstance(value, list):
        return all(_numeric_nested(v) for v in value)
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _has_assert(code: str) -> bool:
    import ast

    try:
        tree = ast.parse(code)
    except SyntaxError:
        return True  # reported as a syntax error already
    return any(isinstance(n, ast.Assert) for n in ast.walk(tree))


def iter_cards(decks: list[Deck]) -> Iterator[tuple[Deck, Card]]:
    for deck in decks:
        for card in deck.cards:
            yield deck, card
