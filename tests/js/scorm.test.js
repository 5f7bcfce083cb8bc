/* static/lms/scorm.js: the values a quiz run sets in an LMS through SCORM 1.2 and 2004. */
"use strict";

const test = require("node:test");
const assert = require("node:assert");
const S = require("../../src/quizgen/static/lms/scorm.js");

test("an answered card is an interaction of the build's type, right or not in the version's words", () => {
  const event = { id: "myth-a", ok: false, answered: 2, total: 3 };
  assert.deepStrictEqual(S.answered("1.2", 1, event, { "myth-a": "true-false" }), [
    ["cmi.interactions.1.id", "myth-a"], ["cmi.interactions.1.type", "true-false"], ["cmi.interactions.1.result", "wrong"]
  ]);
  assert.deepStrictEqual(S.answered("2004", 0, { ...event, ok: true }, {}), [
    ["cmi.interactions.0.id", "myth-a"], ["cmi.interactions.0.type", "other"], ["cmi.interactions.0.result", "correct"],
    ["cmi.progress_measure", "0.6667"]
  ]);
  assert.strictEqual(S.interactionType("1.2", ""), "performance"); // 1.2 has no "other"
});

test("a finished run is completed, scored, and passed at the pass mark", () => {
  assert.deepStrictEqual(S.finished("1.2", { right: 4, total: 5 }, 0.8), [
    ["cmi.core.score.min", "0"], ["cmi.core.score.max", "100"], ["cmi.core.score.raw", "80"],
    ["cmi.core.lesson_status", "passed"]
  ]);
  const last = S.finished("2004", { right: 3, total: 5 }, 0.8);
  assert.deepStrictEqual(last.filter((p) => /scaled|success|completion/.test(p[0])), [
    ["cmi.score.scaled", "0.6"], ["cmi.completion_status", "completed"], ["cmi.success_status", "failed"]
  ]);
  assert.deepStrictEqual(S.finished("2004", { right: 0, total: 0 }, 0.8)[3], ["cmi.score.scaled", "0"]);
});

test("a session's time in each version's format", () => {
  assert.strictEqual(S.sessionTime("1.2", 3723000), "0001:02:03");
  assert.strictEqual(S.sessionTime("2004", 3723000), "PT1H2M3S");
});
