"""Where a card's answer changed (torch_versions/changed.py): the bisection over the package index's releases
with a fake runner, pip's listing, and the lock's record the text's {{changed_in}} reads."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from quizgen import pipeline
from quizgen.project import lock
from quizgen.torch_versions import changed
from tests.support.torch_matrix import INSTALLED, OLD, deck, errors_of, make, record  # noqa: F401

RELEASES = ["1.13.1", "2.0.0", "2.0.1", "2.1.0", "2.1.2", "2.2.0", "2.3.0", "2.4.0", "2.5.0", "2.13.0"]


def fake(first: str, provisioned: set[str] | None = None) -> tuple[changed.Probe, list[str]]:
    """A runner whose answer changes at `first`, runnable on `provisioned` only (every release: None)."""
    ran: list[str] = []

    def older(release: str) -> bool | None:
        if provisioned is not None and release not in provisioned:
            return None
        ran.append(release)
        return changed.versions.key(release) < changed.versions.key(first)

    return older, ran


@pytest.mark.parametrize("first", RELEASES[1:])
def test_bisection_finds_the_first_release_with_the_newer_answer(first: str) -> None:
    older, ran = fake(first)
    found = changed.search(RELEASES, "1.13.1", "2.13.0", older, lambda r: False)
    assert (found.after, found.first, found.needed) == (RELEASES[RELEASES.index(first) - 1], first, "")
    assert len(ran) <= 4  # log2 of the 8 releases in between, rounded up


def test_provisioned_releases_are_run_first_and_an_absent_one_is_named_not_downloaded() -> None:
    older, ran = fake("2.0.0", provisioned={"2.0.0"})
    found = changed.search(RELEASES, "1.13.1", "2.13.0", older, lambda r: r == "2.0.0")
    assert (found.after, found.first, found.needed, ran) == ("1.13.1", "2.0.0", "", ["2.0.0"])
    older, ran = fake("2.2.0", provisioned={"2.0.0"})
    found = changed.search(RELEASES, "1.13.1", "2.13.0", older, lambda r: r == "2.0.0")
    assert (found.after, found.first, found.needed, ran) == ("2.0.0", "2.13.0", "2.2.0", ["2.0.0"])


def test_pips_listing_is_read_oldest_first_without_local_parts() -> None:
    output = (
        "torch (2.15.0)\nAvailable versions: 2.15.0, 2.13.0+cpu, 2.13.0, 2.0.1, 1.13.1, 2.0.0\n"
        "  INSTALLED: 1.13.1\n"
    )
    assert changed.parse_index(output) == ["1.13.1", "2.0.0", "2.0.1", "2.13.0", "2.15.0"]
    assert changed.parse_index("ERROR: No matching distribution found for torch\n") == []


def test_a_record_counts_only_for_its_job_and_within_the_matrixs_change() -> None:
    entry = {"after": "1.13.1", "in": "2.0.0", "job": "abc"}
    assert changed.check_record(entry, "abc", "1.13.1", "2.13.0") == ("1.13.1", "2.0.0")
    assert changed.check_record(entry, "edited", "1.13.1", "2.13.0") is None
    assert changed.check_record(entry, "abc", "2.0.1", "2.13.0") is None  # the matrix knows better now
    assert changed.name("2.0.0") == "2.0" and changed.name("2.1.2") == "2.1.2"


def bisected(root: Path, after: str, first: str, job: str = "") -> None:
    """Add what `quizgen torch bisect` records to the project's lock (by default for the card's job)."""
    path = root / "cards" / "quizgen.lock"
    data = json.loads(path.read_text(encoding="utf-8"))
    job = job or data["torch"][OLD]["zero-grad-default"]["job"]
    data["changed"] = {"zero-grad-default": {"after": after, "in": first, "job": job}}
    path.write_text(json.dumps(data), encoding="utf-8")


def test_the_text_names_the_release_bisection_found_and_the_build_keeps_it(
    tmp_path: Path, options: Callable[..., pipeline.Options]
) -> None:
    explain = "Zeros up to torch {{changed_after}}; `None` since torch {{changed_in}}."
    root = make(tmp_path, deck("varies_with_torch: true", explain), [OLD, INSTALLED])
    record(root, {OLD: "tensor([0., 0.])"})
    report = pipeline.build(options(root))  # not bisected: the matrix's next version, and a warning
    explained = report.decks[0].cards[0].card.explain  # type: ignore[attr-defined]
    assert explained == f"Zeros up to torch {OLD}; `None` since torch {INSTALLED}."
    assert [str(w).partition(" -> ")[2] for w in report.warnings] == [
        f"explain: {{{{changed_in}}}} names torch {INSTALLED}, the next version of the matrix, not the "
        "release that changed the answer: `quizgen torch bisect zero-grad-default` finds it"
    ]
    bisected(root, OLD, "2.0.0")
    report = pipeline.build(options(root))
    assert report.decks[0].cards[0].card.explain == "Zeros up to torch 1.13.1; `None` since torch 2.0."  # type: ignore[attr-defined]
    assert report.warnings == []
    kept = lock.read(root / "cards" / "quizgen.lock").changed
    assert kept["zero-grad-default"]["in"] == "2.0.0"
    # A record of what the card ran before it was edited no longer counts, and is dropped.
    bisected(root, OLD, "2.0.0", job="0123456789abcdef")
    report = pipeline.build(options(root))
    assert "quizgen.lock's is of what it ran before" in str(report.warnings[0])
    assert lock.read(root / "cards" / "quizgen.lock").changed == {}
