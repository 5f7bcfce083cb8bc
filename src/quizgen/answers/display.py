"""Values as learners read them: each float as the shortest decimal that gives back the same value in its
dtype (float32 0.9 shows as 0.9, not 0.9000000357627869), tensors on one line. No torch: the worker
describes values with it, and the tests check it against numpy."""

from __future__ import annotations

import math
import re

from quizgen.execution.protocol import JSON

# Binary float formats narrower than Python's float: significand bits (with the implicit one), the
# math.frexp exponent of the smallest normal number, and the largest finite number.
FORMATS: dict[str, tuple[int, int, float]] = {
    "float16": (11, -13, 65504.0),
    "bfloat16": (8, -125, 3.3895313892515355e38),
    "float32": (24, -125, 3.4028234663852886e38),
}
DEFAULT_DTYPES = ("float32", "int64", "bool", "complex64")  # torch's repr leaves these out; so do we
MAX_SHOWN = 100  # elements shown one by one; a larger tensor shows as torch prints it (summarised)
DECIMAL_DIGITS = 12  # a float64 shows with at most this many significant digits when it is ...
NOISE_ULPS = 16  # ... within this many units in the last place of it (0.1 + 0.2 -> 0.3)
MAX_DIGITS = 6  # a tensor whose elements need more (measured noise: 1.5004883) shows as torch prints it


def round_to(x: float, dtype: str) -> float:
    """`x` rounded to the nearest value of a narrower float format (ties to even), as a cast would."""
    bits, emin, largest = FORMATS[dtype]
    if x == 0 or not math.isfinite(x):
        return x
    quantum = math.ldexp(1.0, max(math.frexp(x)[1], emin) - bits)
    rounded = round(x / quantum) * quantum  # x / quantum is exact; round() ties to even
    return math.copysign(math.inf, x) if abs(rounded) > largest else rounded


def decimal(x: float) -> str:
    """A float64 as people write it: the fewest significant digits (at most DECIMAL_DIGITS) whose value
    lies within NOISE_ULPS units in the last place of `x` (0.1 + 0.2 shows as 0.3: the noise of binary
    arithmetic on decimal inputs), else Python's repr (1/3 shows as 0.3333333333333333)."""
    if x == 0 or not math.isfinite(x):
        return repr(x)
    near = NOISE_ULPS * math.ulp(x)
    for digits in range(1, DECIMAL_DIGITS + 1):
        candidate = float(f"{x:.{digits - 1}e}")
        if abs(candidate - x) <= near:
            return repr(candidate)
    return repr(x)


def shortest(x: float, dtype: str | None = None) -> str:
    """The fewest significant digits whose value, cast to `dtype`, is `x` cast to `dtype`; written as
    Python writes floats. float64 (or no dtype) drops the noise of decimal arithmetic (`decimal`)."""
    if dtype not in FORMATS or x == 0 or not math.isfinite(x):
        return decimal(x)
    target = round_to(x, dtype)
    for digits in range(1, 18):
        mantissa, _, exponent = f"{x:.{digits - 1}e}".partition("e")
        nearest, scale = int(mantissa.replace(".", "")), int(exponent) - digits + 1
        # Below a power of two the values are twice as dense: the neighbour on the far side may be the
        # one that rounds back when the nearest does not.
        for candidate in (nearest, nearest + 1, nearest - 1):
            text = repr(float(f"{candidate}e{scale}"))
            if round_to(float(text), dtype) == target:
                return text
    return repr(x)


def number(value: JSON, dtype: str | None = None, torch_style: bool = False) -> str:
    """One element as Python writes it (`2.0`, `(2+4j)` without the parentheses), or as torch does
    inside a tensor (`2.`, `2.+4.j`): floats at their dtype's precision, NaN and infinities as the
    strings JSON carries them in, complex numbers as `{"re", "im"}`."""
    if isinstance(value, bool) or value is None:
        return repr(value)
    if isinstance(value, dict):
        re, im = (_part(value.get(k), real_part(dtype), torch_style) for k in ("re", "im"))
        if not torch_style and value.get("re") == 0 and not re.startswith("-"):
            return f"{im}j"  # Python writes 4j, not 0+4j
        return f"{re}{'' if im.startswith('-') else '+'}{im}j"
    if isinstance(value, str):
        return value  # 'nan', 'inf', '-inf'
    if not isinstance(value, float):
        return str(value)  # an int
    text = shortest(value, dtype)
    return text.removesuffix("0") if torch_style and text.endswith(".0") else text


def _part(value: JSON, dtype: str | None, torch_style: bool) -> str:
    """A complex number's real or imaginary part: Python writes 2+4j, torch 2.+4.j."""
    text = number(value if isinstance(value, str) else float(value or 0), dtype)  # type: ignore[arg-type]
    return text.removesuffix("0" if torch_style else ".0") if text.endswith(".0") else text


def real_part(dtype: str | None) -> str | None:
    """The dtype of a complex dtype's real and imaginary parts (a real dtype is its own)."""
    return {"complex64": "float32", "complex32": "float16", "complex128": "float64"}.get(dtype or "", dtype)


def nested(value: JSON, dtype: str | None = None, brackets: str = "[]", torch_style: bool = False) -> str:
    """Nested lists on one line: `[[1.0, 2.0], [3.0, 4.0]]`; `brackets="()"` for a Python tuple."""
    if not isinstance(value, list):
        return number(value, dtype, torch_style)
    inside = ", ".join(nested(v, dtype, brackets, torch_style) for v in value)
    if brackets == "()" and len(value) == 1:
        inside += ","
    return f"{brackets[0]}{inside}{brackets[1]}"


def tensor(value: JSON, dtype: str) -> str:
    """A tensor as torch prints it, but every element at its dtype's precision: `tensor([0.9, 2.])`
    where torch prints `tensor([0.9000, 2.0000])`."""
    suffix = "" if dtype in DEFAULT_DTYPES else f", dtype=torch.{dtype}"
    return f"tensor({nested(value, dtype, torch_style=True)}{suffix})"


def short_enough(value: JSON, dtype: str) -> bool:
    """Whether every element of a tensor reads in at most MAX_DIGITS significant digits at its dtype's
    precision (0.9, 1.0625): then it shows them exactly; else torch's own rounding reads better."""
    if isinstance(value, list):
        return all(short_enough(v, dtype) for v in value)
    if isinstance(value, dict):
        return all(short_enough(value.get(k), real_part(dtype) or "") for k in ("re", "im"))
    if not isinstance(value, float):
        return True
    digits = shortest(value, dtype).lstrip("-").split("e")[0].replace(".", "").strip("0")
    return len(digits) <= MAX_DIGITS


_PRINTED_FLOAT = re.compile(r"(?<![\w.])-?\d+\.\d+(?:[eE][-+]?\d+)?(?![\w.])")
NOISY_DIGITS = 15  # a printed float with this many significant digits or more may be noise


def noise(printed: str) -> list[tuple[str, str]]:
    """The floats a snippet printed with representation noise, each with how it reads without:
    `0.10000002384185791` (a float32 printed as float64) as `0.1`, `0.30000000000000004` as `0.3`."""
    found: list[tuple[str, str]] = []
    for m in _PRINTED_FLOAT.finditer(printed):
        written = m.group(0)
        digits = written.lstrip("-").lower().split("e")[0].replace(".", "").lstrip("0")
        if len(digits) < NOISY_DIGITS:
            continue
        x = float(written)
        better = decimal(x)
        if round_to(x, "float32") == x and len(shortest(x, "float32")) < len(better):
            better = shortest(x, "float32")
        if len(better) < len(written) - 3 and (written, better) not in found:
            found.append((written, better))
    return found
