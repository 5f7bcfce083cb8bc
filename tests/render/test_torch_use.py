"""Whether a card's code uses torch (render/present.py): the shortcut that finds `torch.` without parsing
answers exactly as the statement walk does."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from quizgen.cards import loader
from quizgen.execution.protocol import job_snippets
from quizgen.render import present, torch_use
from tests.support.paths import REPO


def _walked(job: Any) -> bool:
    """The walk as it was before the shortcut: every statement of every snippet, in order."""
    setup = job["setup"]
    torch: set[str] = set()
    for snippet in job_snippets(job):
        own = snippet not in setup
        for read, bound, imported in torch_use.statements(snippet["code"]):
            if imported or not read & torch:
                torch |= imported
            elif own:
                return True
            else:
                torch |= bound
    return False


def _job(setup: list[str], code: str, expr: str | None = None) -> Any:
    snippet = lambda text, line: {"code": text, "path": "deck.yaml", "line": line}  # noqa: E731
    job = {"type": "run", "setup": [snippet(s, 1) for s in setup], "code": snippet(code, 10)}
    return {**job, "expr": snippet(expr, 20)} if expr else job


def test_every_shipped_card_reads_as_the_walk_reads_it() -> None:
    decks = loader.load_project(REPO / "cards")
    jobs = [job for deck in decks for card in deck.cards if (job := present.card_job(deck, card))]
    assert len(jobs) > 75
    assert [torch_use._parsed_uses_torch(job) for job in jobs] == [_walked(job) for job in jobs]


def test_the_shortcut_finds_a_name_before_a_dot_and_nothing_else() -> None:
    torch = {"torch", "model"}
    assert torch_use._reads_attribute_of("w = torch.ones(1)", torch)
    assert torch_use._reads_attribute_of("opt = f(model .parameters())", torch)
    for code in [
        "import torch.nn",
        "x = 1; import torch.nn as nn",
        "print('torch.ones')",
        "# torch.ones\nx = 1",
        "y = x.torch.ones",
        "y = x.\\\n    torch.ones",
        's = """\ntorch.ones\n"""',
        "torch = 3",
        "étorch.x = 1",
    ]:
        assert not torch_use._reads_attribute_of(code, torch), code


_PIECES = [
    "torch.",
    "model.",
    "x.",
    "torch",
    "model",
    "x",
    ".",
    " ",
    "\n",
    "    ",
    "=",
    "(",
    ")",
    "import ",
    "from ",
    " as ",
    "'",
    '"',
    "#",
    "ones",
    "1",
    ",",
    ":",
    "for ",
    " in ",
    "del ",
    "\\\n",
    '"""',
    "lambda ",
    "f",
    "def ",
]


@settings(max_examples=1500, derandomize=True, deadline=None)
@given(
    st.lists(st.sampled_from(_PIECES), max_size=24),
    st.sampled_from(["import torch", "", "import torch\nmodel = torch.nn.Linear(1, 1)"]),
)
def test_generated_code_reads_as_the_walk_reads_it(pieces: list[str], setup: str) -> None:
    job = _job([setup] if setup else [], "".join(pieces), "x.item()")
    assert torch_use._parsed_uses_torch(job) is _walked(job)
