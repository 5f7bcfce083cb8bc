"""The browser's FSRS-6 scheduler (static/quiz/fsrs.js, run under node) against the `fsrs` package."""

from __future__ import annotations

import json
import random
import shutil
import subprocess
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from tests.support.paths import REPO
from tests.support.tools import missing, require

fsrs = require("fsrs")

FSRS_JS = REPO / "src" / "quizgen" / "static" / "quiz" / "fsrs.js"
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
MS = timedelta(milliseconds=1)
SEQUENCES = 1500

# Replays sequences of reviews: each step is a rating and a time, relative to the card's due date or to its
# last review, so both sides compute the review time from their own state the same way.
DRIVER = """
const F = require(process.argv[1]);
const input = JSON.parse(require("fs").readFileSync(0, "utf8"));
const scheduler = new F.Scheduler();
const out = input.sequences.map((seq) => {
  let card = F.newCard(seq.start);
  let last = seq.start;
  return seq.steps.map(([rating, base, offset]) => {
    const now = Math.max((base === "due" ? card.due : last) + offset, last);
    card = scheduler.review(card, rating, now);
    last = now;
    return card;
  });
});
process.stdout.write(JSON.stringify({defaults: {
  parameters: F.DEFAULT_PARAMETERS, learning: scheduler.learningSteps, relearning: scheduler.relearningSteps,
  retention: scheduler.desiredRetention, maximum: scheduler.maximumInterval}, results: out}));
"""


def _ms(when: datetime) -> int:
    return (when - EPOCH) // MS


def _random_gap(rng: random.Random) -> tuple[str, int]:
    """Mostly around the due date, sometimes minutes or months after the last review (early and late)."""
    roll = rng.random()
    if roll < 0.4:
        return "due", rng.choice([0, 0, rng.randint(-3 * 86_400_000, 3 * 86_400_000)])
    if roll < 0.7:
        return "last", rng.randint(0, 30 * 60_000)  # within the learning steps
    if roll < 0.85:
        return "last", rng.randint(0, 3 * 86_400_000)  # around the one-day boundary
    return "last", int(10 ** rng.uniform(5, 11))  # seconds to years


def _sequences(seed: int) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    out = []
    for _ in range(SEQUENCES):
        start = rng.randint(1_500_000_000_000, 1_900_000_000_000)
        steps = []
        for _ in range(rng.randint(1, 40)):
            rating = rng.choices([1, 2, 3, 4], weights=[2, 1, 5, 1])[0]
            steps.append([rating, *_random_gap(rng)])
        out.append({"start": start, "steps": steps})
    return out


def _python(sequences: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    scheduler = fsrs.Scheduler(enable_fuzzing=False)
    results = []
    for seq in sequences:
        start = EPOCH + seq["start"] * MS
        card = fsrs.Card(card_id=1, due=start)
        last = start
        states = []
        for rating, base, offset in seq["steps"]:
            now = max((card.due if base == "due" else last) + offset * MS, last)
            card, _ = scheduler.review_card(card, fsrs.Rating(rating), now)
            last = now
            states.append(
                {
                    "state": int(card.state),
                    "step": card.step,
                    "stability": card.stability,
                    "difficulty": card.difficulty,
                    "due": _ms(card.due),
                    "last_review": _ms(card.last_review),
                }
            )
        results.append(states)
    return results


@pytest.fixture(scope="module")
def node() -> str:
    path = shutil.which("node")
    if path is None:
        missing("node")
    assert path is not None
    return path


def _run_js(node: str, sequences: list[dict[str, Any]]) -> dict[str, Any]:
    done = subprocess.run(
        [node, "-e", DRIVER, str(FSRS_JS)],
        input=json.dumps({"sequences": sequences}),
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def test_defaults_are_the_packages(node: str) -> None:
    js = _run_js(node, [])["defaults"]
    reference = fsrs.Scheduler().to_dict()
    assert len(js["parameters"]) == 21
    assert tuple(js["parameters"]) == tuple(reference["parameters"])
    assert [ms // 1000 for ms in js["learning"]] == reference["learning_steps"]
    assert [ms // 1000 for ms in js["relearning"]] == reference["relearning_steps"]
    assert js["retention"] == reference["desired_retention"]
    assert js["maximum"] == reference["maximum_interval"]


@pytest.mark.parametrize("seed", [20260101])
def test_random_review_sequences_agree(node: str, seed: int) -> None:
    sequences = _sequences(seed)
    js = _run_js(node, sequences)["results"]
    py = _python(sequences)
    reviews = worst = 0.0
    for n, (js_seq, py_seq) in enumerate(zip(js, py, strict=True)):
        for k, (a, b) in enumerate(zip(js_seq, py_seq, strict=True)):
            where = f"sequence {n} review {k}: {sequences[n]['steps'][: k + 1]}"
            assert (a["state"], a["step"], a["due"], a["last_review"]) == (
                b["state"],
                b["step"],
                b["due"],
                b["last_review"],
            ), where
            for key in ("stability", "difficulty"):
                assert a[key] == pytest.approx(b[key], rel=1e-12, abs=0), f"{where}: {key}"
                worst = max(worst, abs(a[key] - b[key]) / abs(b[key]))
            reviews += 1
    assert reviews > 10_000
    print(f"{len(sequences)} sequences, {int(reviews)} reviews, worst relative difference {worst:.3g}")


def test_rounding_is_pythons(node: str) -> None:
    """Intervals are rounded like Python's round(): halves to the even neighbour, not up."""
    values = [0.5, 1.5, 2.5, 3.5, 2.4999999999999996, 2.5000000000000004, 7.0, 10.49, 123456.5, 0.0]
    script = (
        f"const F = require({json.dumps(str(FSRS_JS))});"
        f"process.stdout.write(JSON.stringify({json.dumps(values)}.map(F.pyRound)))"
    )
    done = subprocess.run([node, "-e", script], capture_output=True, text=True, check=True, timeout=30)
    assert json.loads(done.stdout) == [round(v) for v in values]
