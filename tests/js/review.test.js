/* static/quiz/review-mode.js and progress.js: what is due, what a rating does, times and counts in words. */
"use strict";

const test = require("node:test");
const assert = require("node:assert/strict");

const R = require("../../src/quizgen/static/quiz/review-mode.js");
const F = require("../../src/quizgen/static/quiz/fsrs.js");
const P = require("../../src/quizgen/static/quiz/progress.js");
const D = require("../../src/quizgen/static/quiz/dom.js");

const T = Date.UTC(2026, 0, 1, 12);
const MIN = F.MINUTE;
const DAY = F.DAY;

const SHORT = [
  [0, "<1 min"], [29 * 1000, "<1 min"], [10 * MIN, "10 min"], [59 * MIN, "59 min"], [90 * MIN, "2 h"],
  [23 * 60 * MIN, "23 h"], [3 * DAY, "3 d"], [99 * DAY, "99 d"], [150 * DAY, "5 mo"], [400 * DAY, "1.1 y"]
];

for (const [ms, words] of SHORT) {
  test(`${ms} ms on a rating button is ${words}`, () => assert.equal(R.shortDuration(ms), words));
}

const LONG = [
  [20 * 1000, "in less than a minute"], [MIN, "in 1 minute"], [10 * MIN, "in 10 minutes"], [60 * MIN, "in 1 hour"],
  [5 * 60 * MIN, "in 5 hours"], [DAY, "in 1 day"], [3 * DAY, "in 3 days"]
];

for (const [ms, words] of LONG) {
  test(`${ms} ms in a sentence is ${words}`, () => assert.equal(R.longDuration(ms), words));
}

function scheduled(state, due) {
  return { state, step: state === F.REVIEW ? null : 0, stability: 3, difficulty: 5, due, last_review: T - DAY, reps: 1, lapses: 0 };
}

const PROGRESS = {
  cards: {
    late: scheduled(F.REVIEW, T - DAY),
    later: scheduled(F.REVIEW, T + 10 * MIN), // a review card is not taken early
    step: scheduled(F.LEARNING, T + 10 * MIN), // a learning step within 20 minutes is
    "far-step": scheduled(F.LEARNING, T + 30 * MIN),
    soon: scheduled(F.RELEARNING, T - MIN)
  },
  quizzes: {}
};
const IDS = ["fresh", "later", "step", "late", "far-step", "soon", "new"];

test("the review queue: due cards soonest first, then new ones, then learning steps a little early", () => {
  const q = R.queue(IDS, PROGRESS, T);
  assert.deepEqual(q, { due: ["late", "soon"], fresh: ["fresh", "new"], ahead: ["step"] });
  assert.equal(R.first(q), "late");
  assert.equal(R.status(q, T - DAY, T), "Review: 2 due, 2 new. This card is due.");
  assert.equal(R.status({ due: [], fresh: ["new"], ahead: ["step"] }, T, T), "Review: 0 due, 1 new. This card is new.");
  assert.equal(R.first({ due: [], fresh: ["new"], ahead: ["step"] }), "new");
});

test("a card rated Good when new is not called due: it waits for its step, shown early only when nothing else is left", () => {
  const scheduler = new F.Scheduler();
  const after = R.rated(scheduler, null, F.GOOD, T);
  assert.match(R.ratedMessage(F.GOOD, after, T), /next due in 10 minutes/);
  const progress = { cards: { a: after }, quizzes: {} };
  const withNew = R.queue(["a", "b"], progress, T);
  assert.equal(R.first(withNew), "b"); // the new card comes first, not the one just rated
  const alone = R.queue(["a"], progress, T);
  assert.equal(R.first(alone), "a");
  const line = R.status(alone, after.due, T);
  assert.equal(line, "Review: 0 due, 0 new. This card is due in 10 minutes; it is shown early because nothing else is due.");
  assert.doesNotMatch(line, /This card is due\./);
  assert.equal(R.first(R.queue(["a"], progress, T + 10 * MIN)), "a");
  assert.equal(R.status(R.queue(["a"], progress, T + 10 * MIN), after.due, T + 10 * MIN), "Review: 1 due, 0 new. This card is due.");
});

test("the next card due once nothing is", () => {
  assert.equal(R.nextDue(IDS, PROGRESS), T - DAY);
  assert.equal(R.nextDue(["fresh"], PROGRESS), null);
  assert.equal(R.caughtUpText(null, T), "This deck has no cards.");
  assert.match(R.caughtUpText(T + 3 * DAY, T), /^The next card is due in 3 days, on .+\.$/);
});

test("a deck's line on the index counts due cards without taking steps early", () => {
  assert.equal(R.deckLine(IDS, PROGRESS, undefined, T), "2 due, 2 new");
  assert.equal(R.deckLine([], PROGRESS, { right: 3, total: 7 }, T), "0 due, 0 new; last quiz 3 of 7 right");
});

test("rating a new card Good takes it to the second learning step", () => {
  const after = R.rated(new F.Scheduler(), null, F.GOOD, T);
  assert.equal(after.state, F.LEARNING);
  assert.equal(after.due, T + 10 * MIN);
  assert.deepEqual([after.reps, after.lapses], [1, 0]);
  assert.match(R.ratedMessage(F.GOOD, after, T), /^Rated Good\. This card is next due in 10 minutes, on .+\.$/);
});

test("forgetting a review card counts a lapse; forgetting a learning card does not", () => {
  const scheduler = new F.Scheduler();
  const lapsed = R.rated(scheduler, { ...PROGRESS.cards.late, reps: 3, lapses: 1 }, F.AGAIN, T);
  assert.deepEqual([lapsed.state, lapsed.reps, lapsed.lapses], [F.RELEARNING, 4, 2]);
  const relearned = R.rated(scheduler, PROGRESS.cards.step, F.AGAIN, T);
  assert.deepEqual([relearned.reps, relearned.lapses], [2, 0]);
});

test("a new card's rating buttons, and the one suggested", () => {
  const options = R.intervals(new F.Scheduler(), null, T);
  assert.deepEqual(options.map((o) => o.rating), [F.AGAIN, F.HARD, F.GOOD, F.EASY]);
  assert.deepEqual([options[0].interval, options[2].interval], ["1 min", "10 min"]);
  assert.deepEqual([false, true, null].map(R.suggested), [F.AGAIN, F.GOOD, F.GOOD]);
});

const PLURALS = [[[0, "card"], "0 cards"], [[1, "line"], "1 line"], [[2, "line"], "2 lines"], [[2, "entry", "entries"], "2 entries"]];

for (const [args, words] of PLURALS) {
  test(`plural ${JSON.stringify(args)} is ${words}`, () => assert.equal(D.plural(...args), words));
}

test("an import's outcome in words", () => {
  assert.equal(P.describe({ ok: true, ids: ["a", "b"], dropped: 1 }, 1),
    "Imported progress for 2 cards (1 in this deck). 1 entry in the file could not be read.");
  assert.equal(P.describe({ ok: false, ids: [], dropped: 0, problem: "it is not quizgen progress" }),
    "Nothing was imported: it is not quizgen progress.");
});

test("progress kept under card ids (version 1) moves to the cards' keys, as the build makes them", () => {
  // render/view.py's card_key: the first 12 hex digits of SHA-256 over "quizgen card\0" and the id
  assert.equal(P.cardKey("a"), "4d8d243cbc42");
  assert.equal(P.cardKey("zero-grad-first"), "2aa4c425ff52");
  assert.equal(P.cardKey("myth-zero-grad-zeros"), "a7f116574ec6");
  const card = { state: 2, step: null, stability: 3, difficulty: 5, due: 10, last_review: 1, reps: 1, lapses: 0 };
  const old = { format: "quizgen-progress", version: 1, cards: { "zero-grad-first": card }, quizzes: { deck: { right: 1, total: 2, at: 3 } },
    log: [[1, "zero-grad-first", 3, 0]] };
  const read = P.parse(JSON.stringify(old));
  assert.deepEqual(Object.keys(read.progress.cards), ["2aa4c425ff52"]);
  assert.deepEqual(read.progress.log, [[1, "2aa4c425ff52", 3, 0]]);
  assert.equal(read.progress.version, 2);
  assert.ok(read.migrated);
  assert.deepEqual(P.parse(JSON.stringify(read.progress)).progress, read.progress, "version 2 is kept as it is");
  const stored = { "quizgen.progress": JSON.stringify(old) };
  const storage = { getItem: (k) => stored[k] ?? null, setItem: (k, v) => { stored[k] = v; }, removeItem: (k) => { delete stored[k]; } };
  new P.Store(storage).load();
  assert.equal(JSON.parse(stored["quizgen.progress"]).version, 2, "written back under the keys");
});
