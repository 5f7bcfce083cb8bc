"""A Python value as an Answer: its type, a JSON value, its dtype and how learners read it. Runs in workers
(torch)."""

from __future__ import annotations

import ast
from types import CodeType

from quizgen.answers import display
from quizgen.constants import MAX_ANSWER_TEXT, MAX_ELEMENTS
from quizgen.execution.protocol import JSON, Answer, SnippetJob
from quizgen.execution.worker.snippets import SnippetFailed, compile_snippet, shift_lines

_NOTE = "__quizgen_dtype_of__"  # bound in the namespace only while an answer expression runs
_TO_PYTHON = ("item", "tolist")  # tensor methods whose Python floats forget the tensor's dtype


def evaluate(snippet: SnippetJob, ns: dict[str, object]) -> tuple[object, str | None]:
    """An answer expression's value, and the dtype of the tensor it was taken from when it is
    `t.item()`, `t.tolist()` or `float(t)` (a Python float of a float32 tensor shows as float32)."""
    code = _noting(snippet)
    if code is None:
        return eval(compile_snippet(snippet, "eval"), ns), None
    seen: list[str] = []

    def note(obj: object) -> object:
        dtype = getattr(obj, "dtype", None)
        if dtype is not None:
            seen.append(str(dtype).removeprefix("torch."))
        return obj

    ns[_NOTE] = note
    try:
        value = eval(code, ns)
    finally:
        ns.pop(_NOTE, None)
    return value, (seen[-1] if seen else None)


def _noting(snippet: SnippetJob) -> CodeType | None:
    """The expression with the tensor it converts passed through `_NOTE` first, or None when it converts
    nothing. Compiled with the card file's name and lines, so tracebacks still point there."""
    try:
        tree = ast.parse(snippet["code"], snippet["path"], "eval")
    except SyntaxError:
        return None  # compile_snippet reports it at its line in the card file
    call = tree.body
    if not isinstance(call, ast.Call) or call.keywords:
        return None
    if isinstance(call.func, ast.Attribute) and call.func.attr in _TO_PYTHON and not call.args:
        call.func.value = _wrapped(call.func.value)
    elif isinstance(call.func, ast.Name) and call.func.id == "float" and len(call.args) == 1:
        call.args[0] = _wrapped(call.args[0])
    else:
        return None
    code = compile(ast.fix_missing_locations(tree), snippet["path"], "eval", dont_inherit=True)
    return shift_lines(code, int(snippet["line"]) - 1)


def _wrapped(node: ast.expr) -> ast.expr:
    return ast.copy_location(ast.Call(ast.Name(_NOTE, ast.Load()), [node], []), node)


def describe(obj: object, dtype: str | None = None) -> Answer:
    """The Answer for a value an answer expression produced (`dtype`: of the tensor it came from)."""
    import torch

    if obj is None:
        return {"type": "none", "value": None, "display": "None"}
    if isinstance(obj, bool):
        return {"type": "bool", "value": obj, "display": repr(obj)}
    if isinstance(obj, int):
        return {"type": "int", "value": obj, "display": repr(obj)}
    if isinstance(obj, float):
        return _with_dtype({"type": "float", "value": json_number(obj), "display": ""}, dtype)
    if isinstance(obj, complex):
        value = json_number(obj)
        shown = display.number(value, dtype)
        shown = shown if obj.real == 0 else f"({shown})"  # as Python writes 4j and (2+4j)
        return _with_dtype({"type": "complex", "value": value, "display": shown}, dtype)
    if isinstance(obj, str):
        if len(obj) > MAX_ANSWER_TEXT // 2:  # it shows as its repr too: both count
            raise SnippetFailed(
                f"the answer is a string of {len(obj)} characters; at most {MAX_ANSWER_TEXT // 2}"
            )
        return {"type": "str", "value": obj, "display": repr(obj)}
    if isinstance(obj, torch.Size):
        return {"type": "shape", "value": list(obj), "display": repr(obj)}
    if isinstance(obj, torch.dtype):
        return {"type": "dtype", "value": str(obj), "display": str(obj)}
    if isinstance(obj, torch.Tensor):
        return _tensor(obj)
    if isinstance(obj, (list, tuple)) and _rectangular(obj):
        value = json_number(_plain(obj))
        kind = "bool" if all(isinstance(v, bool) for v in _leaves(obj)) else dtype
        # floats at their precision, float64 without decimal noise; ints and bools read as Python writes them
        floats = kind in display.FORMATS or any(isinstance(v, float) for v in _leaves(obj))
        shown = display.nested(value, kind, "()" if isinstance(obj, tuple) else "[]") if floats else repr(obj)
        return _with_dtype({"type": "list", "value": value, "display": shown}, kind)
    if hasattr(obj, "item") and hasattr(obj, "dtype") and getattr(obj, "shape", None) == ():
        return describe(obj.item(), str(obj.dtype))  # numpy scalars
    return {"type": "repr", "value": repr(obj)[:2000], "display": repr(obj)[:2000]}


def _with_dtype(answer: Answer, dtype: str | None) -> Answer:
    """The answer with the dtype its floats have (and show at), when known."""
    if dtype:
        answer["dtype"] = dtype
    if answer["type"] == "float":
        answer["display"] = display.number(answer["value"], dtype)
    return answer


def _leaves(obj: object) -> list[object]:
    if isinstance(obj, (list, tuple)):
        return [leaf for v in obj for leaf in _leaves(v)]
    return [obj]


def _plain(obj: object) -> object:
    return [_plain(v) for v in obj] if isinstance(obj, (list, tuple)) else obj


def _shape(obj: object) -> list[int] | None:
    """The shape of equally nested lists, or None when they are ragged."""
    if not isinstance(obj, (list, tuple)):
        return []
    inner = [_shape(v) for v in obj]
    if any(s is None or s != inner[0] for s in inner):
        return None
    return [len(obj), *(inner[0] or [])] if inner else [0]


def _rectangular(obj: list[object] | tuple[object, ...]) -> bool:
    """Equally nested numbers, or equally nested booleans (not both), as a list answer holds them."""
    leaves = _leaves(obj)
    bools = [isinstance(v, bool) for v in leaves]
    numbers = all(isinstance(v, (int, float)) for v in leaves)
    return numbers and (all(bools) or not any(bools)) and _shape(obj) is not None


def _tensor(obj: object) -> Answer:
    import torch

    assert isinstance(obj, torch.Tensor)
    t = obj.detach()
    if t.numel() > MAX_ELEMENTS:
        raise SnippetFailed(f"the answer is a tensor of {t.numel()} elements; at most {MAX_ELEMENTS}")
    if t.layout != torch.strided:
        return {"type": "repr", "value": repr(obj), "display": repr(obj)}
    dtype = str(t.dtype).removeprefix("torch.")
    value = json_number(t.cpu().tolist())
    compact = t.numel() <= display.MAX_SHOWN and display.short_enough(value, dtype)
    shown = display.tensor(value, dtype) if compact else repr(t)
    return {"type": "tensor", "value": value, "dtype": dtype, "shape": list(t.shape), "display": shown}


def json_number(value: object) -> JSON:
    """NaN and infinities as strings: JSON has no spelling for them; a complex number as {re, im}."""
    if isinstance(value, list):
        return [json_number(v) for v in value]
    if isinstance(value, complex):
        return {"re": json_number(value.real), "im": json_number(value.imag)}
    if isinstance(value, float) and (value != value or value in (float("inf"), float("-inf"))):
        return repr(value)
    return value  # type: ignore[return-value]  # ints, floats, bools from tolist()
