/* static/judge.js against tests/cases/judge_cases.json: every spelling the README promises, each a case. */
"use strict";

const test = require("node:test");
const assert = require("node:assert/strict");
const fs = require("node:fs");
const path = require("node:path");
const vm = require("node:vm");

const JUDGE = path.join(__dirname, "..", "..", "src", "quizgen", "static", "judge.js");
const CASES = require("../cases/judge_cases.json");
const J = require(JUDGE);

for (const c of CASES.values) {
  test(`${c.answer.type} ${JSON.stringify(c.typed)}: ${c.why}`, () => {
    const verdict = J.judgeValue(c.typed, c.answer, c.tolerance);
    assert.equal(verdict.ok, c.ok);
    if ("reason" in c) assert.equal(verdict.reason, c.reason);
  });
}

for (const c of CASES.orders) {
  test(`order ${JSON.stringify(c.typed)}: ${c.why}`, () => {
    const verdict = J.judgeOrder(c.typed, CASES.order_card);
    assert.equal(verdict.ok, c.ok);
    if ("reason" in c) assert.equal(verdict.reason, c.reason);
  });
}

test("an order given as positions (what the quiz's drag and drop holds)", () => {
  const card = CASES.order_card;
  assert.deepEqual(J.judgeOrderItems([1, 4, 0, 3], card), { ok: true, reason: "" });
  assert.deepEqual(J.judgeOrderItems([], card), { ok: false, reason: "no order given" });
  assert.deepEqual(J.judgeOrderItems([1, 9], card), { ok: false, reason: "there is no line 9" });
});

test("an accepted order's labels, as the back of an order card shows them", () => {
  const card = CASES.order_card;
  assert.deepEqual(card.orders.map((order) => J.orderLabels(order, card)), ["B E A D", "E B A D", "E A D B"]);
});

test("the tolerance defaults to rtol 1e-3 and atol 1e-6", () => {
  const answer = { type: "float", value: 1000 };
  assert.equal(J.judgeValue("1000.9", answer).ok, true);
  assert.equal(J.judgeValue("1001.1", answer).ok, false);
  assert.equal(J.judgeValue("0.0000009", { type: "float", value: 0 }).ok, true);
});

test("as a classic script (the quiz page, the Anki card), judge.js defines window.QuizgenJudge", () => {
  const window = {};
  vm.runInNewContext(fs.readFileSync(JUDGE, "utf8"), { window }, { filename: JUDGE });
  assert.equal(window.QuizgenJudge.judgeValue("yes", { type: "bool", value: true }).ok, true);
});
