"""The typed records that cross the process boundary (parent <-> worker, as JSON lines) and the language
boundary (an answer, embedded in pages and Anki notes, is read by static/judge.js)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, NotRequired, TypeAlias, TypedDict

JSON: TypeAlias = bool | int | float | str | list["JSON"] | dict[str, "JSON"] | None

# The answer types, written once: static/judge.js has a branch for each (tests/test_protocol.py holds it).
ANSWER_TYPES: dict[str, str] = {
    "none": "None",
    "bool": "a Python bool",
    "int": "a Python int",
    "float": "a Python float (NaN and infinities as the strings 'nan', 'inf', '-inf'), with the dtype of the "
    "tensor it was taken from when known (`t.item()`)",
    "complex": "a Python complex, as {re, im}",
    "str": "a Python str",
    "shape": "a torch.Size, as a list of ints",
    "dtype": "a torch.dtype, as its name ('torch.float32')",
    "tensor": "a strided tensor: nested lists of numbers, bools or {re, im}, with its dtype and shape",
    "list": "a list or tuple of equally nested numbers, or of bools (dtype 'bool')",
    "exception": "the snippet raised: value is the exception's type name, message its text",
    "repr": "anything else, compared by its repr",
}
AnswerType = Literal[
    "none", "bool", "int", "float", "complex", "str", "shape", "dtype", "tensor", "list", "exception", "repr"
]


class Answer(TypedDict):
    """An executed value: what a value card's learners must give."""

    type: AnswerType
    value: JSON
    display: str  # how learners read it: as Python shows it, floats at their dtype's precision
    dtype: NotRequired[str]  # tensors; floats and lists when known (floats show at its precision)
    shape: NotRequired[list[int]]  # tensors only
    message: NotRequired[str]  # exceptions only


class SnippetJob(TypedDict):
    """Source from a card file and the file line its first line stands on (for tracebacks)."""

    code: str
    path: str
    line: int


class RunJob(TypedDict):
    """Run setup, then code; with `answer`, evaluate expr (if any) and describe the value."""

    type: Literal["run"]
    setup: list[SnippetJob]
    code: SnippetJob
    answer: NotRequired[bool]
    expr: NotRequired[SnippetJob | None]
    cite: NotRequired[dict[str, SnippetJob]]  # named expressions evaluated after the snippet


class SearchJob(TypedDict):
    """Find every order of lines that passes check, and any usable distractor."""

    type: Literal["search"]
    setup: list[SnippetJob]
    lines: list[SnippetJob]
    distractors: list[SnippetJob]
    repeat: int
    check: SnippetJob
    cite: NotRequired[dict[str, SnippetJob]]  # evaluated after the given order and the check
    indent: NotRequired[int]  # spaces per level when the blocks' levels are part of the answer
    levels: NotRequired[list[int]]  # with indent: each block's level (lines, then distractors)
    # A search split across workers (the pool's doing, never a card's): part k of n finds only the
    # accepted orders among its share of the candidates (indented: its share of the lines' and the
    # distractors' spaces, and the first arrangement that passes in each distractor space); the last
    # job is given all they found.
    part: NotRequired[list[int]]  # [k, n]
    accepted: NotRequired[list[list[int]]]
    found: NotRequired[list[list[int] | None]]  # indented: each distractor space's first passing


Job: TypeAlias = RunJob | SearchJob


def last_line(snippet: SnippetJob) -> int:
    """The file line of a snippet's last line (a block scalar's trailing newline starts no line)."""
    return snippet["line"] + snippet["code"].rstrip("\n").count("\n")


def job_snippets(job: Job) -> list[SnippetJob]:
    """Every snippet of a job, in a fixed order (RaisedFrame.snippet indexes it)."""
    found = [*job["setup"], *job.get("cite", {}).values()]
    if job["type"] == "search":
        return [*found, job["check"], *job["lines"], *job["distractors"]]
    expr = job.get("expr")
    return [*found, job["code"], *([expr] if expr else [])]


def place(raised: Raised, job: Job) -> Placed:
    """Where (file, line) an exception was raised in this job's card files, with its traceback."""
    snippets = job_snippets(job)
    lines = ["Traceback (most recent call last):"] if raised["frames"] else []
    path, line = "", 0
    for frame in raised["frames"]:
        snippet = snippets[frame["snippet"]]
        path, line = snippet["path"], snippet["line"] + frame["offset"]
        lines.append(f'  File "{path}", line {line}, in {frame["name"]}')
        if frame["text"]:
            lines.append(f"    {frame['text']}")
    return Placed(path, line, "\n".join([*lines, raised["exception"]]))


class UsableDistractor(TypedDict):
    distractor: int  # index into the distractors
    order: list[int]  # a passing order using it (line indexes; distractor k is len(lines) + k)
    levels: NotRequired[list[int]]  # with indentation: each block's level in that order


class Feedback(TypedDict):
    """What running one wrong order did: shown to a learner who makes that mistake."""

    order: list[int]  # block indexes; distractor k is len(lines) + k
    distractor: NotRequired[int]  # the order tries this distractor (index into the distractors)
    level: NotRequired[int]  # with indentation: the level the distractor was tried at
    levels: NotRequired[list[int]]  # with indentation: each block's level in `order`, as it was run
    block: int  # the block (index as in `order`) whose line failed; -1 for the check
    text: str  # the source line that failed, stripped
    exception: str  # the exception's last line, as Python prints it
    values: dict[str, str]  # a failed assert of the check: each name in it and its value's repr


class RaisedFrame(TypedDict):
    """A frame of card code, by place in the job (not in the files: results are cached by content)."""

    snippet: int  # index into job_snippets(job)
    offset: int  # line within that snippet, from 0
    name: str  # the function, or <module>
    text: str  # the source line


class Raised(TypedDict):
    """How the exception that became an answer was raised: its frames in card code, innermost last."""

    frames: list[RaisedFrame]
    exception: str  # the exception's last line(s), as Python prints them


@dataclass(frozen=True)
class Placed:
    """A raised exception placed in the card files of the job at hand."""

    path: str
    line: int  # 0 when no frame of card code was involved
    traceback: str


class Result(TypedDict):
    """What a worker sends back for one job."""

    ok: bool
    output: str
    seconds: NotRequired[float]
    cpu: NotRequired[float]  # worker -> parent: CPU seconds of the job's processes, as the worker measured
    error: NotRequired[str]  # the card's fault: a failed snippet, timeout, crash
    internal: NotRequired[str]  # quizgen's fault: a traceback of quizgen's own code
    value: NotRequired[Answer]
    raised: NotRequired[Raised]  # with an exception answer
    orders: NotRequired[list[list[int]]]
    found: NotRequired[list[list[int] | None]]  # a part of a split indented search: SearchJob.found
    placements: NotRequired[list[list[list[int]]]]  # indented: accepted with a line at another level
    usable_distractors: NotRequired[list[UsableDistractor]]
    tried: NotRequired[int]  # orders run: those that respect the lines' data dependencies
    feedback: NotRequired[list[Feedback]]  # wrong orders near the one as written, and what they did
    cited: NotRequired[dict[str, Answer]]
    torch_version: NotRequired[str]
    retire: NotRequired[bool]  # worker -> zygote only: replace this worker
    nodes: NotRequired[int]  # worker -> parent: JSON values in the record, as the worker counted them


@dataclass
class Outcome:
    """What executing one card produced (from the worker or the cache)."""

    ok: bool
    output: str = ""
    value: Answer | None = None
    raised: Raised | None = None
    orders: list[list[int]] | None = None
    placements: list[list[list[int]]] | None = None  # [[line, level], ...]: some level not as written
    usable_distractors: list[UsableDistractor] | None = None
    tried: int | None = None
    feedback: list[Feedback] | None = None
    cited: dict[str, Answer] | None = None
    error: str | None = None
    internal: str | None = None
    torch_version: str = ""
    seconds: float = 0.0
    cpu: float = 0.0  # CPU seconds the job's processes took (not kept: 0 from the cache)
    cached: bool = False
    placed: Placed | None = None  # an exception answer placed in one card's files (set per card)
    parts: dict[str, Outcome] | None = None  # the card's further jobs' outcomes by name (set per card)

    @classmethod
    def from_result(cls, data: Result) -> Outcome:
        return cls(
            ok=bool(data["ok"]),
            output=str(data.get("output", "")),
            value=data.get("value"),
            raised=data.get("raised"),
            orders=data.get("orders"),
            placements=data.get("placements"),
            usable_distractors=data.get("usable_distractors"),
            tried=data.get("tried"),
            feedback=data.get("feedback"),
            cited=data.get("cited"),
            error=data.get("error"),
            internal=data.get("internal"),
            # The release alone (`2.13.0`, not `2.13.0+cpu`): which wheel this machine has is no part of
            # what a card's outputs say (the cache keys carry the whole version).
            torch_version=str(data.get("torch_version", "")).split("+")[0],
            seconds=float(data.get("seconds", 0.0)),
            cpu=float(data.get("cpu", 0.0)),
        )

    def to_json(self) -> dict[str, object]:
        """As stored in the cache and in cards.json."""
        return {
            "ok": self.ok,
            "output": self.output,
            "value": self.value,
            "raised": self.raised,
            "orders": self.orders,
            "usable_distractors": self.usable_distractors,
            "tried": self.tried,
            "feedback": self.feedback,
            "cited": self.cited,
            "error": self.error,
            "torch_version": self.torch_version,
            "seconds": self.seconds,
            "parts": {k: p.part_json() for k, p in self.parts.items()} if self.parts else None,
            **({"placements": self.placements} if self.placements else {}),
        }

    def part_json(self) -> dict[str, object]:
        """As a further job's outcome shows in its card's: without its time (same sources, same bytes)."""
        data = self.to_json()
        data.pop("seconds")
        return data


class Request(TypedDict, total=False):
    """Parent -> zygote: a job to run, a cancellation of everything queued and running, or torch's
    first uses to make before the jobs that share them (execution/warming.py)."""

    id: str
    job: Job
    timeout: float
    cancel: bool
    warm: list[str]
    apart: dict[str, int]  # of them, those made in a worker of their own, and the jobs needing each


class Reply(TypedDict, total=False):
    """Zygote -> parent: a job's result, its start or progress, readiness, or the end of a cancellation."""

    id: str
    result: Result
    started: bool  # the job was handed to a worker
    progress: list[int]  # how far the job is: [phase, done, total] (progress.py)
    ready: bool
    torch_version: str
    pid: int
    sandbox: str  # with ready: "" when snippets run sandboxed, else why not
    error: str  # with ready False: why the pool cannot start (a required sandbox is unavailable)
    cancelled: bool


class WorkerTask(TypedDict):
    """Zygote -> worker: one job and the seconds it may take."""

    job: Job
    timeout: float
