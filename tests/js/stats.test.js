/* static/quiz/stats.js: reviews per day, retention and the due forecast from a review log and schedules. */
"use strict";

process.env.TZ = "UTC";
const test = require("node:test");
const assert = require("node:assert/strict");

const S = require("../../src/quizgen/static/quiz/stats.js");
const F = require("../../src/quizgen/static/quiz/fsrs.js");
const P = require("../../src/quizgen/static/quiz/progress.js");

const NOW = Date.UTC(2026, 2, 10, 15); // 15:00 on 10 March
const DAY = F.DAY;
const LOG = [
  [NOW - 2 * DAY, "a", 3, 0], [NOW - 2 * DAY + 60000, "a", 1, 1], [NOW - DAY, "b", 1, 2],
  [NOW - DAY + 1000, "a", 3, 2], [NOW - 1000, "b", 4, 2], [NOW - 1000, "other", 3, 2], [NOW - 40 * DAY, "a", 3, 2]
];

test("reviews per day count a deck's reviews by local day, today last", () => {
  const per = S.reviewsPerDay(LOG, ["a", "b"], NOW, 5);
  assert.deepEqual(per.map((d) => d.count), [0, 0, 2, 2, 1]);
  assert.equal(per[4].day, Date.UTC(2026, 2, 10));
  assert.equal(S.reviewsText(per), "5 reviews in the last 5 days, 1 today.");
});

test("retention counts only cards already learned, Hard or better as remembered", () => {
  assert.deepEqual(S.retention(LOG, ["a", "b"], NOW, 30), { passed: 2, total: 3 });
  assert.equal(S.retentionText({ passed: 2, total: 3 }, 30),
    "Remembered 67% of learned cards in the last 30 days (2 of 3 reviews).");
  assert.equal(S.retentionText({ passed: 0, total: 0 }, 30), "No learned card was reviewed in the last 30 days.");
  const weeks = S.retentionByWeek(LOG, ["a", "b"], NOW, 12);
  assert.equal(weeks.length, 12);
  assert.deepEqual(weeks[11], { day: Date.UTC(2026, 2, 4), passed: 2, total: 3 });
  assert.equal(weeks.slice(0, 11).reduce((n, w) => n + w.passed, 0), 1); // the one 40 days ago
});

test("the forecast puts overdue cards on today and counts each day", () => {
  const progress = { cards: {
    late: { due: NOW - 3 * DAY }, now: { due: NOW - 1000 }, soon: { due: NOW + 2 * DAY }, far: { due: NOW + 90 * DAY }
  } };
  const f = S.forecast(progress, ["late", "now", "soon", "far", "new"], NOW, 7);
  assert.deepEqual(f.days.map((d) => d.count), [2, 0, 1, 0, 0, 0, 0]);
  assert.equal(f.overdue, 1);
  assert.equal(S.forecastText(f), "2 due today (1 overdue), 3 in the next 7 days.");
});

test("the review log is read, merged without repeats, and kept oldest first", () => {
  const text = JSON.stringify({ format: "quizgen-progress", version: 2, cards: {}, quizzes: {},
    log: [[2, "a", 3, 0], ["x", "a", 3, 0], [1, "B!", 3, 0], [1, "a", 5, 0], [1, "a", 4, 2]] });
  assert.deepEqual(P.parse(text).progress.log, [[1, "a", 4, 2], [2, "a", 3, 0]]);
  const old = JSON.stringify({ format: "quizgen-progress", version: 1, cards: {}, quizzes: {} });
  assert.deepEqual(P.parse(old).progress.log, []); // a file from before the log
  assert.deepEqual(P.mergeLogs([[1, "a", 4, 2]], [[1, "a", 4, 2], [0, "b", 1, 0]]), [[0, "b", 1, 0], [1, "a", 4, 2]]);
});
