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
    const verdict = J.judgeOrder(c.typed, CASES[c.card || "order_card"]);
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

test("an order judged by its before-pairs accepts exactly the orders they allow", () => {
  const card = CASES.graph_card, listed = { ...card, orders: card.orders_of_graph, before: undefined };
  const all = [];
  const permute = (done, rest) => rest.length ? rest.forEach((x, i) => permute([...done, x], rest.filter((_, k) => k !== i))) : all.push(done);
  permute([], [0, 1, 2, 3]);
  for (const lines of all) {
    const want = card.orders_of_graph.some((o) => o.join() === lines.join());
    assert.equal(J.accepts(lines, card), want, lines.join());
    assert.equal(J.accepts(lines, listed), want, lines.join());
  }
  assert.equal(J.accepts([0, 1, 2], card), false);
  assert.equal(J.accepts([0, 0, 2, 3], card), false);
});

test("the fewest lines to move against before-pairs: a line that must come last, put first", () => {
  assert.deepEqual(J.misplacedByGraph([3, 0, 1, 2], [[0, 2], [1, 2], [2, 3]]), [0]);
  assert.deepEqual(J.misplacedByGraph([0, 1, 2, 3], [[0, 2], [1, 2], [2, 3]]), []);
  // 2 must follow 0 and 1; with 2 first, moving it alone is enough.
  assert.deepEqual(J.misplacedByGraph([2, 0, 1, 3], [[0, 2], [1, 2], [2, 3]]), [0]);
});

test("an indented order typed with one > per level", () => {
  assert.deepEqual(J.parseIndented("A >B >>c d", ["A", "B", "C", "D"]), { labels: ["A", "B", "C", "D"], levels: [0, 1, 2, 0] });
  assert.deepEqual(J.parseIndented("1>2", ["A", "B"]), { labels: ["A", "B"], levels: [0, 1] });
});

test("a new shuffle never repeats the last one, and its labels follow the places shown", () => {
  let k = 0;
  const fixed = () => [0.1, 0.9, 0.5][k++ % 3];
  const first = J.shuffle(4, fixed, null);
  // 0.99 draws the order as it was (Math.floor(0.99 * (i + 1)) = i): that one was shown last, so redrawn.
  const draws = [0.99, 0.99, 0.99, 0, 0, 0];
  const second = J.shuffle(4, () => draws.shift(), [0, 1, 2, 3]);
  assert.deepEqual(first.slice().sort(), [0, 1, 2, 3]);
  assert.deepEqual(second, [1, 2, 3, 0]);
  assert.deepEqual(J.labelsFor([2, 0, 1]), ["B", "C", "A"]);
  assert.deepEqual(J.shuffle(1, Math.random, [0]), [0]);
});
