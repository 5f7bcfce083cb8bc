"""A Python value as an Answer: its type, a JSON value and how Python shows it. Runs in workers (torch)."""

from __future__ import annotations

from quizgen.constants import MAX_ELEMENTS
from quizgen.execution.protocol import JSON, Answer
from quizgen.execution.snippets import SnippetFailed


def describe(obj: object) -> Answer:
    """The Answer for a value an answer expression produced."""
    import torch

    if obj is None:
        return {"type": "none", "value": None, "display": "None"}
    if isinstance(obj, bool):
        return {"type": "bool", "value": obj, "display": repr(obj)}
    if isinstance(obj, int):
        return {"type": "int", "value": obj, "display": repr(obj)}
    if isinstance(obj, float):
        return {"type": "float", "value": json_number(obj), "display": repr(obj)}
    if isinstance(obj, str):
        return {"type": "str", "value": obj, "display": repr(obj)}
    if isinstance(obj, torch.Size):
        return {"type": "shape", "value": list(obj), "display": repr(obj)}
    if isinstance(obj, torch.dtype):
        return {"type": "dtype", "value": str(obj), "display": str(obj)}
    if isinstance(obj, torch.Tensor):
        return _tensor(obj)
    if isinstance(obj, (list, tuple)) and all(
        isinstance(v, (int, float)) and not isinstance(v, bool) for v in obj
    ):
        return {"type": "list", "value": json_number(list(obj)), "display": repr(obj)}
    if hasattr(obj, "item") and hasattr(obj, "dtype") and getattr(obj, "shape", None) == ():
        return describe(obj.item())  # numpy scalars
    return {"type": "repr", "value": repr(obj)[:2000], "display": repr(obj)[:2000]}


def _tensor(obj: object) -> Answer:
    import torch

    assert isinstance(obj, torch.Tensor)
    t = obj.detach()
    if t.numel() > MAX_ELEMENTS:
        raise SnippetFailed(f"the answer is a tensor of {t.numel()} elements; at most {MAX_ELEMENTS}")
    if t.is_complex() or t.layout != torch.strided:
        return {"type": "repr", "value": repr(obj), "display": repr(obj)}
    return {
        "type": "tensor",
        "value": json_number(t.cpu().tolist()),
        "dtype": str(t.dtype).removeprefix("torch."),
        "shape": list(t.shape),
        "display": repr(obj),
    }


def json_number(value: object) -> JSON:
    """NaN and infinities as strings: JSON has no spelling for them."""
    if isinstance(value, list):
        return [json_number(v) for v in value]
    if isinstance(value, float) and (value != value or value in (float("inf"), float("-inf"))):
        return repr(value)
    return value  # type: ignore[return-value]  # ints, floats, bools from tolist()
