"""A value card's `variants:`: misconceptions, each a change to the card's snippet. The build runs each
variant as a job of its own; its answer becomes a wrong choice, with the misconception's label as feedback.

```yaml
variants:
  - label: backward overwrites .grad        # completes "That is what you get if ..."
    code: |                                 # the whole snippet as the misconception has it
      ...
  - label: you forget zero_grad
    remove: opt.zero_grad()                 # a line (or a list of lines), by its text
  - label: zero_grad comes after backward
    replace: {"opt.zero_grad()": "opt.step()"}   # line text -> the line written instead
```
"""

from __future__ import annotations

import ast
import difflib
import io
import re
import tokenize
from dataclasses import dataclass
from typing import Any, cast

import yaml

from quizgen.answers import compare, display
from quizgen.cards import syntax
from quizgen.cards.fields import Field
from quizgen.cards.model import Snippet, Tolerance
from quizgen.cards.reader import Reader
from quizgen.errors import Location, Problem
from quizgen.execution.protocol import JSON, Answer, Job, Outcome, RunJob

_LINE = {"type": "string", "minLength": 1}
_CHANGE = [{"required": ["remove"]}, {"required": ["replace"]}]
SCHEMA: dict[str, Any] = {
    "type": "array",
    "minItems": 1,
    "items": {
        "type": "object",
        "properties": {
            "label": {**_LINE, "description": 'The misconception; completes "That is what you get if ...".'},
            "code": {"type": "string", "description": "The whole snippet as the misconception has it."},
            "remove": {
                "oneOf": [_LINE, {"type": "array", "items": _LINE, "minItems": 1}],
                "description": "Lines of the card's code left out, by their text.",
            },
            "replace": {
                "type": "object",
                "minProperties": 1,
                "additionalProperties": {"type": "string"},
                "description": "Lines of the card's code (by their text) and what is written instead.",
            },
        },
        "required": ["label"],
        "additionalProperties": False,
        "oneOf": [
            {"required": ["code"], "not": {"anyOf": _CHANGE}},
            {"anyOf": _CHANGE, "not": {"required": ["code"]}},
        ],
    },
}
FIELD = Field(
    "variants",
    False,
    "Misconceptions: each a label and a change to the code (code:, remove: or replace:); the answer of "
    "each becomes a wrong choice with its label as feedback.",
    SCHEMA,
)
_FIELDS = {
    "label": Field("text", True),
    "code": Field("code"),
    "remove": Field("lines"),
    "replace": Field("replace"),
}
SLIPS = ("NameError",)  # an exception a variant may not give: a slip in the variant, not a misconception


@dataclass(frozen=True)
class Variant:
    label: str
    code: Snippet  # the card's snippet as the misconception has it
    location: Location  # of the entry (`variants[i]`)


class _EntryReader(Reader):
    """A Reader of one entry of `variants`, whose fields are reported as `variants[i].field`."""

    def __init__(
        self, prefix: str, path: str, node: yaml.MappingNode, problems: list[Problem], card: str | None
    ):
        self.prefix = prefix
        super().__init__(path, node, _FIELDS, problems, card)

    def _field(self, field: str | None) -> str:
        return f"{self.prefix}.{field}" if field else self.prefix

    def loc(self, node: yaml.Node | None = None, field: str | None = None) -> Location:
        return super().loc(node, self._field(field))

    def compiles(self, snippet: Snippet, mode: str, field: str) -> bool:
        return super().compiles(snippet, mode, self._field(field))


def read(reader: Reader, code: Snippet | None) -> list[Variant]:
    """The card's variants; problems go to the reader, each at its entry."""
    node = reader.plain("variants")
    if node is None:
        return []
    if not isinstance(node, yaml.SequenceNode) or not node.value:
        reader.error(reader.at("variants"), "variants is a list of {label, and code, remove or replace}")
        return []
    found = []
    for i, item in enumerate(node.value):
        prefix = f"variants[{i}]"
        if not isinstance(item, yaml.MappingNode):
            reader.error(
                reader.loc(item, prefix), "a variant is a mapping: label, then code, remove or replace"
            )
            continue
        entry = _EntryReader(prefix, reader.path, item, reader.problems, reader.card)
        variant = _entry(entry, code)
        if variant is not None:
            found.append(variant)
    return found


def _entry(entry: _EntryReader, code: Snippet | None) -> Variant | None:
    before = len(entry.problems)
    label = entry.text("label", required=True)
    changes = [key for key in ("remove", "replace") if entry.has(key)]
    if entry.has("code") == bool(changes):
        entry.error(entry.loc(), "a variant has code: (the whole snippet) or remove:/replace: (some lines)")
        return None
    if entry.has("code"):
        snippet = entry.code("code")
    elif code is not None:
        snippet = _changed(entry, code, label or "")
    else:
        return None  # the card's missing code is reported already
    if snippet is None or label is None or len(entry.problems) > before:
        return None
    if code is not None and _same_program(snippet.code, code.code):
        entry.error(entry.loc(), f'variant "{label}" leaves the code as it is (comments and spacing aside)')
        return None
    return Variant(" ".join(label.split()), snippet, entry.loc())


def _same_program(a: str, b: str) -> bool:
    try:
        return ast.dump(syntax.parse(a)) == ast.dump(syntax.parse(b))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False  # reported as a syntax error already


def _lines(entry: _EntryReader, key: str) -> dict[str, tuple[str, Location]]:
    """remove: (a line or a list) or replace: (a mapping), as {line text: (new text or "", where)}."""
    node = entry.plain(key)
    if node is None:
        return {}
    if key == "remove":
        items = node.value if isinstance(node, yaml.SequenceNode) else [node]
        pairs = [(item, None) for item in items]
    elif isinstance(node, yaml.MappingNode):
        pairs = list(node.value)
    else:
        entry.error(entry.loc(node, key), "replace maps a line of the code to the line written instead")
        return {}
    found = {}
    for old, new in pairs:
        text = entry.scalar(old, key)
        value = "" if new is None else entry.scalar(new, key)
        if not isinstance(text, str) or not text.strip() or not isinstance(value, str):
            entry.error(entry.loc(old, key), "each line is a non-empty string of code")
            continue
        if new is not None and not value.strip():
            entry.error(entry.loc(new, key), "to leave a line out, list it under remove:")
            continue
        found[text.strip()] = (value, entry.loc(old, key))
    return found


def _code_part(line: str) -> str:
    """A line without its comment ("opt.step()  # update" -> "opt.step()")."""
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(line.strip() + "\n").readline))
    except (tokenize.TokenError, SyntaxError):
        return line.strip()
    comment = next((t for t in tokens if t.type == tokenize.COMMENT), None)
    return line.strip()[: comment.start[1]].rstrip() if comment else line.strip()


def _changed(entry: _EntryReader, code: Snippet, label: str) -> Snippet | None:
    """The card's code with the entry's lines removed or replaced; each line is matched by its text
    (indentation and a trailing comment aside), every line with that text."""
    changes = {**_lines(entry, "remove"), **_lines(entry, "replace")}
    lines = code.code.splitlines()
    keys = [(ln.strip(), _code_part(ln)) for ln in lines]
    out = list(lines)
    for text, (new, where) in changes.items():
        hits = [n for n, key in enumerate(keys) if text in key]
        if not hits:
            close = difflib.get_close_matches(text, [k for _, k in keys if k], n=1)
            hint = f" (did you mean `{close[0]}`?)" if close else ""
            entry.error(where, f'variant "{label}": no line of the code reads `{text}`{hint}')
            continue
        for n in hits:  # a removed line becomes `pass`: the lines keep their numbers and blocks stay blocks
            indent = lines[n][: len(lines[n]) - len(lines[n].lstrip())]
            out[n] = "\n".join(indent + part.strip() for part in (new or "pass").splitlines())
    changed = Snippet("\n".join(out) + "\n", code.path, code.line)
    try:
        syntax.check(changed.code, code.path, "exec")  # (quietly: a SyntaxWarning is the worker's to show)
    except SyntaxError as exc:
        entry.error(entry.loc(), f'variant "{label}": the changed code does not compile: {exc.msg}')
        return None
    return changed


def jobs(card_job: RunJob | None, variants: list[Variant]) -> dict[str, Job]:
    """One job per variant: the card's own (without its cites), with the variant's code."""
    if card_job is None:
        return {}
    return {_name(i): {**card_job, "code": v.code.to_job()} for i, v in enumerate(variants)}


def _name(i: int) -> str:
    return f"variants[{i}]"


def as_declared(answer: Answer) -> JSON:
    """An executed answer written as an author would declare it (answers.matches compares those)."""
    type_, value = answer["type"], answer.get("value")
    if type_ == "exception":
        return {"raises": str(value), "match": rf"\A{re.escape(str(answer.get('message', '')))}\Z"}
    if type_ == "shape":
        return {"shape": value}
    if type_ == "float" and isinstance(value, str):
        return float(value)  # nan, inf
    return value


def same(answer: Answer, right: Answer, tol: Tolerance) -> bool:
    """Whether `answer`, declared, would pass for `right`: a learner could not tell the two apart."""
    return compare.matches(as_declared(answer), right, tol)


@dataclass(frozen=True)
class Choice:
    answer: Answer
    feedback: str  # "" for the right answer


def problems(variants: list[Variant], outcome: Outcome, tol: Tolerance) -> list[Problem]:
    """Every variant that failed, slipped, or gives the right answer."""
    found = []
    right = outcome.value
    for i, v in enumerate(variants):
        part = (outcome.parts or {}).get(_name(i))
        if part is None:
            continue
        value = part.value
        if not part.ok or value is None:
            error = (part.error or "execution produced no answer").replace("\n", "\n    ")
            found.append(Problem(v.location, f'variant "{v.label}" fails: {error}'))
        elif value["type"] == "exception" and value["value"] in SLIPS:
            message = (
                f'variant "{v.label}" {compare.show(value)}: a slip in the variant (a name it no longer '
                "defines), not an answer a learner would give; change what it removes or give its code"
            )
            found.append(Problem(v.location, message))
        elif right is not None and same(value, right, tol):
            message = (
                f'variant "{v.label}" gives {compare.show(value)}, the same as the right answer: '
                "the misconception is not distinguishable"
            )
            found.append(Problem(v.location, message))
    return found


def noise_of(answer: Answer) -> str:
    """What is wrong with how an answer reads, when it shows float noise ("" when it does not): a float32
    value in a Python float (after `.item()`, or arithmetic on one) shows 17 digits, as the answer and
    as a choice."""
    found = display.noise(compare.show(answer)) if answer["type"] != "exception" else []
    if not found:
        return ""
    written, better = found[0]
    return (
        f"shows float noise: {written} (reads {better}), as learners would see it: answer with the tensor "
        "(drop `.item()`) or round it (`round(x, 4)`)"
    )


def noise_warnings(variants: list[Variant], outcome: Outcome) -> list[Problem]:
    """A warning at each variant whose answer, a choice learners see, shows float noise."""
    found = []
    for i, v in enumerate(variants):
        part = (outcome.parts or {}).get(_name(i))
        if part is not None and part.value is not None and (noisy := noise_of(part.value)):
            found.append(Problem(v.location, f'variant "{v.label}" {noisy}'))
    return found


def choices(variants: list[Variant], outcome: Outcome, tol: Tolerance) -> list[Choice]:
    """The right answer, then one choice per distinct variant answer; variants whose answers a learner
    could not tell apart share a choice, and its feedback names each misconception."""
    if outcome.value is None:
        return []
    found: list[tuple[Answer, list[str]]] = []
    for i, v in enumerate(variants):
        part = (outcome.parts or {}).get(_name(i))
        if part is None or part.value is None:
            continue
        twin = next((labels for a, labels in found if same(part.value, a, tol)), None)
        if twin is not None:
            twin.append(v.label)
        else:
            found.append((part.value, [v.label]))
    wrong = [Choice(a, "that is what you get if " + ", or if ".join(labels)) for a, labels in found]
    return [Choice(outcome.value, ""), *wrong]


def _option_text(answer: Answer, found: list[Choice]) -> str:
    """An option's text: an exception no other option raises shows its type alone, since its message
    often restates the question's set-up (its feedback, or the answer on the back, keeps it whole)."""
    if answer["type"] != "exception":
        return compare.show_short(answer)
    raised = [c.answer["value"] for c in found if c.answer["type"] == "exception"]
    return f"raises {answer['value']}" if raised.count(answer["value"]) == 1 else compare.show_short(answer)


def option_texts(found: list[Choice]) -> list[str]:
    """The choices' texts as the page shows them (_option_text), except that two a shortening would make
    look the same are both shown in full."""
    short = [_option_text(c.answer, found) for c in found]
    return [compare.show(c.answer) if short.count(t) > 1 else t for c, t in zip(found, short, strict=True)]


def judge(variants: list[Variant], outcome: Outcome, tol: Tolerance, mode: str) -> dict[str, JSON]:
    """What the learners' scripts need besides the answer: how the card is answered, and the choices
    (the right one first; each shows its text, and a wrong one its feedback)."""
    keys = ("type", "value", "dtype", "shape")
    found = choices(variants, outcome, tol)
    listed: list[JSON] = []
    for c, text in zip(found, option_texts(found), strict=True):
        whole = compare.show(c.answer)
        feedback = c.feedback
        if feedback and text != whole:  # the option shows the first clause; its feedback, all of it
            feedback += f" (it {whole})"
        listed.append(
            {"answer": {k: cast(JSON, c.answer.get(k)) for k in keys}, "text": text, "feedback": feedback}
        )
    return {"mode": mode, "choices": listed}
