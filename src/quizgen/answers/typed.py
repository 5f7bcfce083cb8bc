"""Answers as people write them: typed text (a learner's, or an author's quoted `answer:`) read into
numbers, booleans and nesting, and judged against an executed Answer.

The Python twin of static/judge.js's judgeValue, line for line: tests/cases/judge_cases.json holds
both to the same verdicts and reasons. The spellings, for learners and authors alike:
- `tensor(...)`, `torch.Size(...)`, `array(...)` and other calls around a value are ignored, and so are
  `requires_grad=`, `grad_fn=`, `dtype=`, `device=` and `layout=`;
- brackets and commas are optional: `1 2 3`, `1, 2, 3`, `[1, 2, 3]` and `(1, 2, 3)` are one list;
  nested brackets, when given, must have the answer's shape; parentheses around one value
  (`(2+4j)`, `tensor(8.)`) are not a level;
- numbers: `8`, `8.`, `-1e-3`, `1/3`, `nan`, `inf`; complex: `2+4j`, `(2+4j)`, `2.+4.j`, `4j`;
- booleans: `True`/`False` in any case; a boolean answer also takes `yes`/`no`/`y`/`n` (a word
  answers a yes-or-no question); a mask (a bool tensor or list, not a single bool) also takes `1`/`0`.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any, TypeAlias

from quizgen.answers import display
from quizgen.cards.model import Tolerance
from quizgen.execution.protocol import JSON, Answer

# ("num", x, 0), ("cplx", re, im), ("bool", b, 0) or ("none", None, 0)
Atom: TypeAlias = tuple[str, Any, float]
Tree: TypeAlias = Atom | list["Tree"]

_NUM = r"(?:\d+\.?\d*|\.\d+)(?:e[-+]?\d+)?|inf(?:inity)?|nan"
TOKEN = re.compile(
    rf"\s*(?:([\[(])|([\])])|([,;])|([-+]?\s*(?:{_NUM})(?:\s*/\s*(?:{_NUM}))?j?)|(true|false|none|null)\b)"
)
KEYWORD = re.compile(
    r",?\s*\b(?:requires_grad|grad_fn|dtype|device|layout)\s*=\s*(?:<[^>]*>|'[^']*'|\"[^\"]*\"|[\w.:]+)"
)
WRAPPER = re.compile(r"[a-z_][\w.]*\s*\(")
DTYPE_ALIASES = {
    "float": "float32", "double": "float64", "half": "float16", "long": "int64", "int": "int32",
    "short": "int16", "cfloat": "complex64", "cdouble": "complex128",
}  # fmt: skip
EXCEPTION = re.compile(r"([A-Za-z_][A-Za-z0-9_.]*(?:Error|Exception|Warning|Interrupt|Exit|Iteration))")


def to_number(text: str) -> float:
    """A number as Python or JavaScript prints it, NaN and infinities included."""
    s = re.sub(r"\s+", "", str(text)).lower()
    sign = -1.0 if s.startswith("-") else 1.0
    body = s.lstrip("+-")
    if body.startswith("inf"):
        return sign * math.inf
    if body == "nan":
        return math.nan
    return sign * float(body)


def _number(token: str) -> Atom | None:
    s = re.sub(r"\s+", "", token)
    imaginary = s.endswith("j")
    top, _, bottom = s.removesuffix("j").partition("/")
    x = to_number(top)
    if bottom:
        below = to_number(bottom)
        if below == 0:
            return None
        x = x / below
    return ("cplx", 0.0, x) if imaginary else ("num", x, 0.0)


@dataclass
class _Group:
    bracket: str  # "[", "(" or "" (the whole text)
    items: list[Tree] = field(default_factory=list)
    commas: bool = False

    def value(self) -> Tree:
        """Parentheses around one value are grouping, not a level: `(2+4j)`, `tensor(8.)`."""
        if self.bracket != "[" and not self.commas and len(self.items) == 1:
            return self.items[0]
        return self.items


def parse(text: str) -> Tree | None:
    """Typed text as nested lists of atoms, or None when it is not a value."""
    s = WRAPPER.sub("(", KEYWORD.sub("", text.strip().lower()))
    stack = [_Group("")]
    pos, real_before = 0, False
    while s[pos:].strip():
        m = TOKEN.match(s, pos)
        if m is None:
            return None
        pos, top = m.end(), stack[-1]
        opened, closed, comma, number, word = m.groups()
        real = False
        if opened:
            stack.append(_Group(opened))
        elif closed:
            if len(stack) == 1 or "([".index(top.bracket) != ")]".index(closed):
                return None
            stack.pop()
            stack[-1].items.append(top.value())
        elif comma:
            top.commas = True
        elif number:
            atom = _number(number)
            if atom is None:
                return None
            if real_before and atom[0] == "cplx" and number.lstrip()[0] in "+-":
                previous = top.items.pop()
                atom = ("cplx", previous[1], atom[2])
            real = atom[0] == "num"
            top.items.append(atom)
        else:
            none = word in ("none", "null")
            top.items.append(("none", None, 0.0) if none else ("bool", word == "true", 0.0))
        real_before = real
    if len(stack) != 1 or not stack[0].items:
        return None
    return stack[0].value()


def flatten(value: Any) -> list[Any]:
    if isinstance(value, list):
        return [leaf for v in value for leaf in flatten(v)]
    return [value]


def shape_of(value: Any) -> list[int] | None:
    """The shape of equally nested lists (atoms and JSON leaves have shape []), None when ragged."""
    if not isinstance(value, list):
        return []
    inner = [shape_of(v) for v in value]
    if any(s is None or s != inner[0] for s in inner):
        return None
    return [len(value), *(inner[0] or [])] if inner else [0]


def close(got: float, want: Any, tol: Tolerance, dtype: str | None = None) -> bool:
    """|got - want| <= atol + rtol * |want|; NaN equals only NaN, an infinity only itself. With a
    narrow float dtype, a number that casts to `want` is right too: what the answer shows (0.3 for
    bfloat16's 0.30078125) is never judged wrong; but not a number that only underflows to a zero
    answer (1e-8 in float16 is 0: that is the lesson, not a spelling of it)."""
    w = to_number(want) if isinstance(want, str) else float(want)
    if math.isnan(w) or math.isnan(got):
        return math.isnan(w) and math.isnan(got)
    if math.isinf(w) or math.isinf(got):
        return got == w
    if dtype in display.FORMATS and (w != 0 or got == 0) and display.round_to(got, dtype) == w:
        return True
    return abs(got - w) <= tol.atol + tol.rtol * abs(w)


def _kind(answer: Answer) -> str:
    dtype = str(answer.get("dtype") or "")
    if dtype == "bool":
        return "bool"
    return "complex" if answer["type"] == "complex" or dtype.startswith("complex") else "number"


def _same(atom: Atom, want: Any, kind: str, masked: bool, tol: Tolerance, dtype: str | None) -> bool:
    tag, x, im = atom
    if kind == "bool":
        if tag == "bool":
            return bool(x == want)
        return masked and tag == "num" and x in (0, 1) and (x == 1) == want
    if kind == "complex" and isinstance(want, dict):
        if tag == "num":
            x, im = x, 0.0
        part = display.real_part(dtype)
        return (
            tag in ("num", "cplx")
            and close(x, want.get("re"), tol, part)
            and close(im, want.get("im"), tol, part)
        )
    return tag == "num" and close(x, want, tol, dtype)


def agree(tree: Tree, answer: Answer, tol: Tolerance) -> tuple[bool, str]:
    """A read value against a number, complex, tensor or list answer: the same elements in order
    within the tolerance, and, when the value is nested, the answer's shape."""
    want = answer.get("value")
    wanted = flatten(want)
    shape = answer.get("shape", shape_of(want)) if answer["type"] in ("tensor", "list") else []
    kind = _kind(answer)
    if answer["type"] == "list" and not isinstance(tree, list):
        return False, "expected a list"
    got = flatten(tree)
    if len(got) != len(wanted):
        return False, expected(answer, "one")
    nesting = shape_of(tree)
    if (nesting is None or len(nesting) >= 2) and nesting != shape:
        return False, "the brackets do not match the answer's shape"
    masked, dtype = bool(shape), answer.get("dtype")
    return all(_same(a, w, kind, masked, tol, dtype) for a, w in zip(got, wanted, strict=True)), ""


def expected(answer: Answer, one: str) -> str:
    """What a number, complex, tensor or list answer wants, e.g. `expected 3 numbers`."""
    count = len(flatten(answer.get("value")))
    noun = {"bool": "values", "complex": "complex numbers"}.get(_kind(answer), "numbers")
    return f"expected {one} number" if count == 1 else f"expected {count} {noun}"


def _word(text: str) -> bool | None:
    s = re.sub(r"^tensor\(|\)$", "", text.strip().lower())
    if s in ("true", "yes", "y"):
        return True
    return False if s in ("false", "no", "n") else None


def dtype_name(text: str) -> str:
    s = str(text).strip().lower().removeprefix("torch.")
    return DTYPE_ALIASES.get(s, s)


def _shape(text: str, want: list[int]) -> bool:
    lower = text.lower()
    dims = [] if lower == "scalar" else [int(d) for d in re.findall(r"\d+", lower)]
    return dims == want


def judge(text: str, answer: Answer, tol: Tolerance) -> tuple[bool, str]:
    """Whether typed text gives the executed answer, and why not (judge.js's judgeValue)."""
    s = text.strip()
    if not s:
        return False, "no answer given"
    type_, want = answer["type"], answer.get("value")
    if type_ == "none":
        return s.lower() in ("none", "null", "nothing"), "the answer is None"
    if type_ == "bool":
        return _word(s) is want, "the answer is " + ("True" if want else "False")
    if type_ == "str":
        return re.sub(r"^(['\"])(.*)\1$", r"\2", s, flags=re.S) == want, ""
    if type_ == "dtype":
        return dtype_name(s) == dtype_name(str(want)), ""
    if type_ == "shape":
        return _shape(s, want if isinstance(want, list) else []), ""  # type: ignore[arg-type]
    if type_ == "exception":
        m = EXCEPTION.search(s)
        return m is not None and m.group(1).split(".")[-1].lower() == str(want).lower(), ""
    if type_ == "repr":
        return re.sub(r"\s+", "", s) == re.sub(r"\s+", "", str(want)), ""
    tree = parse(s)
    return agree(tree, answer, tol) if tree is not None else (False, expected(answer, "a"))


def from_declared(value: JSON) -> Tree | None:
    """An author's YAML answer (not a string) as parse would read it."""
    if isinstance(value, bool):
        return ("bool", value, 0.0)
    if isinstance(value, (int, float)):
        return ("num", float(value), 0.0)
    if value is None:
        return ("none", None, 0.0)
    if isinstance(value, str) and value.lower().lstrip("+-") in ("nan", "inf"):
        return ("num", to_number(value), 0.0)  # NaN and infinities inside a list, as JSON carries them
    if isinstance(value, list):
        items = [from_declared(v) for v in value]
        return None if any(i is None for i in items) else items  # type: ignore[return-value]
    return None
