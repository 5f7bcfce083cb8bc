"""No card can lie: each way a card could teach something false (issue 9) is refused, with its location.

The isolation guarantees (one card changing another's answer, processes outliving a job, the thread
pin, order independence) are in test_truth_isolation.py.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from quizgen import pipeline
from quizgen.errors import CardErrors
from quizgen.execution import cache

HEADER = "deck: T\nsetup: |\n  import torch\ncards:\n"

Project = Callable[..., Path]
Options = Callable[..., pipeline.Options]


def deck(cards: str, header: str = HEADER) -> dict[str, str]:
    body = "\n".join("  " + line for line in cards.strip("\n").splitlines()) + "\n"
    return {"t.yaml": header + body}


def problems(options: pipeline.Options) -> list[str]:
    with pytest.raises(CardErrors) as info:
        pipeline.check(options)
    return [str(p) for p in info.value.problems]


def by_id(report: pipeline.Report) -> dict[str, object]:
    return {vc.card.id: vc for d in report.decks for vc in d.cards}


# -- 1. an accidental exception is never the answer ------------------------------------------------


def test_a_typo_in_answer_expr_fails_at_its_line_with_the_traceback(
    project: Project, options: Options
) -> None:
    root = project(
        deck("""
- id: typo
  kind: value
  ask: What is the gradient?
  code: |
    w = torch.tensor(2.0, requires_grad=True)
    (w * w).backward()
  answer_expr: w.gard.item()
""")
    )
    [error] = problems(options(root))
    path = root / "cards" / "t.yaml"
    assert error.splitlines() == [
        f"{path}:11: card 'typo' -> answer_expr: the snippet raised an exception the card does not "
        "declare (if raising is the point, declare it: answer: {raises: Type}):",
        "Traceback (most recent call last):",
        f'  File "{path}", line 11, in <module>',
        "    w.gard.item()",
        "AttributeError: 'Tensor' object has no attribute 'gard'",
    ]


def test_a_missing_import_fails_at_the_code_line(project: Project, options: Options) -> None:
    root = project(
        deck(
            """
- id: no-import
  kind: value
  ask: q
  code: |
    x = 1
    w = torch.ones(2)
  answer_expr: w.sum().item()
""",
            header="deck: T\ncards:\n",
        )
    )
    [error] = problems(options(root))
    assert error.startswith(f"{root / 'cards' / 't.yaml'}:8: card 'no-import' -> code: the snippet raised")
    assert error.endswith("NameError: name 'torch' is not defined")


def test_a_declared_exception_is_an_answer_with_its_message(project: Project, options: Options) -> None:
    root = project(
        deck("""
- id: leaf-in-place
  kind: value
  ask: What happens?
  code: |
    w = torch.ones(2, requires_grad=True)
    w.add_(1)
  answer: {raises: RuntimeError, match: "leaf Variable that requires grad"}
""")
    )
    report = pipeline.check(options(root))
    [vc] = [vc for d in report.decks for vc in d.cards]
    assert vc.answer is not None and vc.answer["type"] == "exception"
    from quizgen.answers import compare

    assert compare.show(vc.answer) == (
        "raises RuntimeError: a leaf Variable that requires grad is being used in an in-place operation."
    )


# -- 5. a declared exception must be the one meant -------------------------------------------------


def test_raises_match_refuses_an_exception_from_elsewhere_in_the_snippet(
    project: Project, options: Options
) -> None:
    # Meant to raise at t.add_(1) (in-place change of a saved tensor); backward raises first.
    root = project(
        deck("""
- id: inplace-after-backward
  kind: value
  ask: q
  code: |
    w = torch.ones(2, requires_grad=True)
    t = w.exp()
    t.sum().backward()
    t.sum().backward()
    t.add_(1)
  answer: {raises: RuntimeError, match: "modified by an inplace operation"}
""")
    )
    [error] = problems(options(root))
    assert error.startswith(
        f"{root / 'cards' / 't.yaml'}:14:13: card 'inplace-after-backward' -> answer: declared answer "
        "raises RuntimeError matching 'modified by an inplace operation' but execution gives "
        "raises RuntimeError: Trying to backward through the graph a second time"
    )


def test_an_exception_raised_by_the_deck_setup_is_not_the_cards_answer(
    project: Project, options: Options
) -> None:
    header = (
        "deck: T\nsetup: |\n  import torch\n  def helper():\n      raise RuntimeError('from setup')\ncards:\n"
    )
    root = project(
        deck(
            """
- id: blames-setup
  kind: value
  ask: q
  code: |
    helper()
  answer: {raises: RuntimeError}
""",
            header=header,
        )
    )
    [error] = problems(options(root))
    assert error.startswith(
        f"{root / 'cards' / 't.yaml'}:12:13: card 'blames-setup' -> answer: declared raises RuntimeError, "
        "but the exception came from line 5, not from the card's code or answer_expr:"
    )


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        ("{raises: RuntimeError, match: '('}", "match is not a valid regular expression"),
        ("{raises: 'not a name'}", "raises names an exception type, like RuntimeError"),
        ("{raises: RuntimeError, extra: 1}", "a mapping answer is {shape: [ints]} or {raises: ErrorName"),
    ],
)
def test_malformed_raises_is_a_load_error(
    project: Project, options: Options, answer: str, message: str
) -> None:
    root = project(deck(f"- id: c\n  kind: value\n  ask: q\n  code: x = 1\n  answer: {answer}\n"))
    [error] = problems(options(root))
    assert message in error and "card 'c' -> answer" in error


# -- 2. checks must check --------------------------------------------------------------------------

SWAP = """
- id: swap
  kind: order
  setup: |
    a, b = 1, 2
  lines:
    - t = a
    - a = b
    - b = t
  check: {check}
"""


def test_an_order_check_without_assert_is_refused(project: Project, options: Options) -> None:
    root = project(deck(SWAP.format(check="print(a, b)")))
    assert problems(options(root)) == [
        f"{root / 'cards' / 't.yaml'}:13:12: card 'swap' -> check: the check needs an assert that can fail: "
        "without one every order that runs is accepted"
    ]


@pytest.mark.parametrize("check", ["assert True", "assert (a == 2, 'a is b')", "assert 1"])
def test_an_assert_that_cannot_fail_does_not_count(project: Project, options: Options, check: str) -> None:
    root = project(deck(SWAP.format(check=f'"{check}"')))
    [error] = problems(options(root))
    assert "the check needs an assert that can fail" in error


def test_the_swap_puzzle_with_a_real_check_accepts_only_the_swap(project: Project, options: Options) -> None:
    root = project(deck(SWAP.format(check='"assert (a, b) == (2, 1)"')))
    report = pipeline.check(options(root))
    outcome = by_id(report)["swap"].outcome  # type: ignore[attr-defined]
    assert outcome.orders == [[0, 1, 2]] and outcome.tried == 3
    assert report.warnings == []


def test_a_puzzle_whose_lines_pass_in_every_order_teaches_nothing(project: Project, options: Options) -> None:
    root = project(
        deck("""
- id: independent
  kind: order
  lines: [a = 1, b = 2, c = 3]
  check: assert a + b + c == 6
""")
    )
    assert problems(options(root)) == [
        f"{root / 'cards' / 't.yaml'}:8:12: card 'independent' -> check: no order is wrong: "
        "the puzzle teaches nothing (all 6 orders of the lines pass the check; "
        "assert what only the right order achieves)"
    ]


def test_a_puzzle_accepting_most_orders_is_warned_about(
    project: Project, options: Options, runner: object, in_dir: Callable[[Path], None]
) -> None:
    root = project(
        deck("""
- id: lax
  kind: order
  lines: [a = 1, b = a + 1, c = 3]
  check: assert b == 2
""")
    )
    report = pipeline.check(options(root))
    assert [str(w) for w in report.warnings] == [
        f"{root / 'cards' / 't.yaml'}:8:12: card 'lax' -> check: 3 of the 3 orders that respect the lines' "
        "data dependencies pass the check: a learner can hardly get it wrong (is the check strict enough?)"
    ]
    from quizgen.cli import cli

    in_dir(root)
    result = runner.invoke(cli, ["check", "-j", "1"])  # type: ignore[attr-defined]
    assert result.exit_code == 0
    assert "warning: cards/t.yaml:8:12: card 'lax' -> check: 3 of the 3 orders" in result.output


# -- 3. verdicts are computed ----------------------------------------------------------------------

EVAL_MYTH = """
- id: eval-turns-off-grad
  kind: myth
  claim: "`model.eval()` turns off gradient computation."
{verdict}  proof: |
    model = torch.nn.Linear(2, 1)
    model.eval()
    model(torch.ones(2)).sum().backward()
    print(model.weight.grad)
  holds: model.weight.grad is None
  explain: "The claim is {{{{verdict}}}}: eval() changes layers like dropout, not autograd."
"""


def test_a_verdict_that_disagrees_with_execution_fails_naming_both(
    project: Project, options: Options
) -> None:
    root = project(deck(EVAL_MYTH.format(verdict="  verdict: true\n")))
    assert problems(options(root)) == [
        f"{root / 'cards' / 't.yaml'}:8:14: card 'eval-turns-off-grad' -> verdict: declared verdict true, "
        "but `model.weight.grad is None` is False after the proof"
    ]


def test_the_verdict_shown_is_the_computed_one(project: Project, options: Options) -> None:
    root = project(deck(EVAL_MYTH.format(verdict="")))
    report = pipeline.build(options(root))
    vc = by_id(report)["eval-turns-off-grad"]
    assert vc.card.explain.startswith("The claim is false:")  # type: ignore[attr-defined]
    data = json.loads((root / "build" / "cards.json").read_text())
    [card] = data["decks"][0]["cards"]
    assert card["outcome"]["value"]["value"] is False
    assert card["outcome"]["output"].startswith("tensor([[1., 1.]])")


def test_holds_must_be_a_truth_value(project: Project, options: Options) -> None:
    root = project(
        deck("""
- id: not-bool
  kind: myth
  claim: c
  proof: w = torch.ones(2)
  holds: w.sum()
""")
    )
    [error] = problems(options(root))
    assert error.endswith("card 'not-bool' -> holds: holds must be True or False, not tensor(2.)")


# -- 6. prose is bound to execution ----------------------------------------------------------------


def test_placeholders_quote_executed_values(project: Project, options: Options) -> None:
    root = project(
        deck("""
- id: two-steps
  kind: value
  ask: "What is `w.grad` after both calls?"
  code: |
    w = torch.tensor(2.0, requires_grad=True)
    (0.75 * w**2).backward()
    first = w.grad.item()
    (1.25 * w**2).backward()
    print("done")
  answer_expr: w.grad.item()
  cite:
    first: first
    second: w.grad.item() - first
    names: "', '.join(['SGD', 'Adam'])"
  explain: "{{first}} + {{second}} = {{answer}}; the snippet printed {{output}} ({{names}})."
- id: order-count
  kind: order
  setup: a = 1
  lines: [a = a + 1, a = a * 10, b = 3]
  check: assert a == 20 and b == 3
  explain: "{{orders}} orders work."
""")
    )
    report = pipeline.check(options(root))
    cards = by_id(report)
    assert cards["two-steps"].card.explain == "3.0 + 5.0 = 8.0; the snippet printed done (SGD, Adam)."  # type: ignore[attr-defined]
    assert cards["order-count"].card.explain == "3 orders work."  # type: ignore[attr-defined]
    assert report.warnings == []


def test_an_answer_written_by_hand_is_warned_about(project: Project, options: Options) -> None:
    root = project(
        deck("""
- id: by-hand
  kind: value
  ask: q
  code: w = torch.tensor(3.0)
  answer_expr: w.item() + 5
  explain: "Three and five make 8.0 (not 18.0 or 8.05)."
""")
    )
    report = pipeline.check(options(root))
    assert [str(w) for w in report.warnings] == [
        f"{root / 'cards' / 't.yaml'}:10:14: card 'by-hand' -> explain: the explanation writes "
        "the answer 8.0 by hand: write {{answer}} to quote it"
    ]


@pytest.mark.parametrize(
    ("card", "message"),
    [
        (
            "- id: c\n  kind: value\n  ask: q\n  code: x = 1\n  answer_expr: x\n  explain: '{{orders}}'\n",
            "card 'c' -> explain: unknown placeholder {{orders}}: this card can cite {{answer}}, {{output}}",
        ),
        (
            "- id: c\n  kind: basic\n  front: '{{output}}'\n  back: b\n",
            "card 'c' -> front: unknown placeholder {{output}}: this card can cite nothing: it runs no code",
        ),
        (
            "- id: c\n  kind: basic\n  front: f\n  back: b\n  cite: {x: '1'}\n",
            "card 'c' -> cite: cite needs code to run, and this card has none",
        ),
        (
            "- id: c\n  kind: value\n  ask: q\n  code: x = 1\n  answer_expr: x\n  cite: {answer: x}\n",
            "card 'c' -> cite: cite name 'answer' is taken: {{answer}} is built in",
        ),
        (
            "- id: c\n  kind: value\n  ask: q\n  code: x = 1\n  answer_expr: x\n  cite: {x: 'x +'}\n",
            "card 'c' -> cite: Python syntax error",
        ),
        (
            "- id: c\n  kind: value\n  ask: q\n  code: x = 1\n  answer_expr: x\n  cite: [x]\n",
            "card 'c' -> cite: cite maps names to Python expressions",
        ),
    ],
)
def test_placeholder_mistakes_are_load_errors(
    project: Project, options: Options, card: str, message: str
) -> None:
    root = project(deck(card))
    [error] = problems(options(root))
    assert message in error, error


def test_a_cite_that_raises_fails_the_card(project: Project, options: Options) -> None:
    root = project(
        deck("- id: c\n  kind: value\n  ask: q\n  code: x = 1\n  answer_expr: x\n  cite: {y: x.nope}\n")
    )
    [error] = problems(options(root))
    assert "card 'c' -> code: cite 'y' raised:" in error
    assert error.endswith("AttributeError: 'int' object has no attribute 'nope'")


# -- 7. one round of errors ------------------------------------------------------------------------


def test_load_and_execution_errors_come_in_one_sorted_listing(project: Project, options: Options) -> None:
    root = project(
        deck("""
- id: runs-wrong
  kind: value
  ask: q
  code: x = 2
  answer_expr: x
  answer: 3
- id: does-not-load
  kind: value
  ask: q
  code: x = (
- id: fine
  kind: value
  ask: q
  code: x = 1
  answer_expr: x
  answer: 1
- id: also-runs-wrong
  kind: myth
  claim: c
  verdict: true
  proof: x = 1
  holds: x == 2
""")
    )
    errors = problems(options(root))
    path = root / "cards" / "t.yaml"
    assert [e.split(": ", 2)[:2] for e in errors] == [
        [f"{path}:10:13", "card 'runs-wrong' -> answer"],
        [f"{path}:14:15", "card 'does-not-load' -> code"],
        [f"{path}:24:14", "card 'also-runs-wrong' -> verdict"],
    ]


def test_fail_fast_stops_before_executing_when_cards_do_not_load(project: Project, options: Options) -> None:
    root = project(
        deck(
            "- id: a\n  kind: value\n  ask: q\n  code: x = (\n- id: b\n  kind: value\n  ask: q\n"
            "  code: x = 2\n  answer_expr: x\n  answer: 3\n"
        )
    )
    errors = problems(options(root, fail_fast=True))
    assert len(errors) == 1 and "card 'a' -> code: Python syntax error" in errors[0]


# -- 8. the cache key holds the torch version ------------------------------------------------------


def test_a_torch_upgrade_reruns_every_card(
    project: Project, options: Options, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = project(deck("- id: c\n  kind: value\n  ask: q\n  code: x = 1\n  answer_expr: x\n"))
    assert pipeline.check(options(root)).executed == 1
    assert pipeline.check(options(root)).cached == 1
    monkeypatch.setattr(cache.installed, "version", lambda: "99.0.0")
    again = pipeline.check(options(root))
    assert again.executed == 1 and again.cached == 0


def test_job_key_changes_with_torch_python_quizgen_and_result_format(monkeypatch: pytest.MonkeyPatch) -> None:
    job: dict[str, object] = {"type": "run", "setup": [], "code": {"code": "x = 1", "path": "a", "line": 1}}
    base = cache.job_key(job)  # type: ignore[arg-type]
    for owner, name, value in [
        (cache.installed, "version", lambda: "0.0"),
        (cache, "__version__", "0.0.0-other"),
        (cache, "RESULT_FORMAT", -1),
    ]:
        with monkeypatch.context() as m:
            m.setattr(owner, name, value)
            assert cache.job_key(job) != base, name  # type: ignore[arg-type]
    with monkeypatch.context() as m:
        m.setattr(cache.sys, "version", "3.99")
        assert cache.job_key(job) != base  # type: ignore[arg-type]


def test_an_escaped_placeholder_is_shown_as_written(project: Project, options: Options) -> None:
    root = project(
        deck(r"""
- id: escaped
  kind: basic
  front: 'Anki writes `\{{Front}}` and Jinja `\{{ name }}`.'
  back: b
""")
    )
    report = pipeline.check(options(root))
    assert by_id(report)["escaped"].card.front == "Anki writes `{{Front}}` and Jinja `{{ name }}`."  # type: ignore[attr-defined]


def test_a_cached_exception_is_placed_where_the_card_is_now(project: Project, options: Options) -> None:
    card = """
- id: moved
  kind: value
  ask: q
  code: |
    w = torch.ones(1)
    w.nope()
"""
    root = project(deck(card))
    path = root / "cards" / "t.yaml"
    [first] = problems(options(root))
    assert first.startswith(f"{path}:10: card 'moved' -> code: the snippet raised")
    path.write_text("# three lines\n# moved the card\n# down\n" + path.read_text())
    with pytest.raises(CardErrors) as info:
        pipeline.check(options(root))
    [again] = [str(p) for p in info.value.problems]
    assert again.startswith(f"{path}:13: card 'moved' -> code: the snippet raised")
    assert f'File "{path}", line 13, in <module>\n    w.nope()' in again


# -- found by mutation testing ---------------------------------------------------------------------


def test_a_cite_named_like_a_place_is_part_of_the_cache_key() -> None:
    def job(cite: str, path: str, line: int) -> dict[str, object]:
        snippet = {"code": "w = 1", "path": path, "line": line}
        return {
            "type": "run",
            "setup": [],
            "code": snippet,
            "cite": {"line": {"code": cite, "path": path, "line": 3}},
        }

    assert cache.job_key(job("w + 1", "a", 1)) != cache.job_key(job("w * 100", "a", 1))  # type: ignore[arg-type]
    assert cache.job_key(job("w + 1", "a", 1)) == cache.job_key(job("w + 1", "b", 9))  # type: ignore[arg-type]


def test_a_loop_variable_is_no_dependency_on_a_line_binding_the_same_name() -> None:
    from quizgen.execution.worker.order_search.candidates import candidate_orders, dependencies

    lines = ["i = 10", "squares = [i * i for i in range(3)]", "for i in range(2): total = i"]
    assert list(candidate_orders(3, dependencies(lines, set()))) == [
        [0, 1, 2], [0, 2, 1], [1, 0, 2], [1, 2, 0], [2, 0, 1], [2, 1, 0]
    ]  # fmt: skip
    assert dependencies(["x = 1", "y = [x * k for k in range(3)]"], set()) == {0: set(), 1: {0}}
