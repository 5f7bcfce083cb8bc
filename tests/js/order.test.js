/* static/quiz/order.js: the order puzzle's moves on a layout {block, pool} of item numbers. */
"use strict";

const test = require("node:test");
const assert = require("node:assert/strict");

const O = require("../../src/quizgen/static/quiz/order.js");
const CARD = require("../cases/judge_cases.json").order_card;

const LAYOUT = Object.freeze({ block: Object.freeze([3, 1]), pool: Object.freeze([0, 2, 4]) });

const MOVES = [
  // [what, item, direction, block after, pool after] (null: it cannot move that way)
  ["up within the block", 1, -1, [1, 3], [0, 2, 4]],
  ["down within the block", 3, 1, [1, 3], [0, 2, 4]],
  ["up from the first unused line to the end of the block", 0, -1, [3, 1, 0], [2, 4]],
  ["down from the last line of the block to the first unused one", 1, 1, [3], [1, 0, 2, 4]],
  ["down within the unused lines", 2, 1, [3, 1], [0, 4, 2]],
  ["up from the first line of the block", 3, -1, null, null],
  ["down from the last unused line", 4, 1, null, null]
];

for (const [what, item, direction, block, pool] of MOVES) {
  test(`move ${item} ${what}`, () => {
    const after = O.move(LAYOUT, item, direction);
    assert.deepEqual(after, block === null ? null : { block, pool });
  });
}

const TOGGLES = [
  ["an unused line goes to the end of the block", 0, [3, 1, 0], [2, 4]],
  ["a line leaves the block for its place among the unused ones", 3, [1], [0, 2, 3, 4]],
  ["the last line of the block goes back between smaller and larger ones", 1, [3], [0, 1, 2, 4]]
];

for (const [what, item, block, pool] of TOGGLES) {
  test(`toggle ${item}: ${what}`, () => assert.deepEqual(O.toggle(LAYOUT, item), { block, pool }));
}

test("where a line stands, in words", () => {
  assert.equal(O.where(LAYOUT, 1), "at position 2 of 2 in your block");
  assert.equal(O.where(LAYOUT, 4), "in the unused lines");
});

test("a list's count", () => {
  assert.deepEqual([0, 1, 3].map(O.count), ["(empty)", "(1 line)", "(3 lines)"]);
});

test("reset puts every line among the unused ones, in the page's order", () => {
  assert.deepEqual(O.reset([3, 0, 2]), { block: [], pool: [0, 2, 3] });
});

test("the arrow keys walk the block, then the unused lines", () => {
  assert.deepEqual(O.sequence(LAYOUT), [3, 1, 0, 2, 4]);
});

test("a line that cannot move says why", () => {
  assert.equal(O.stuck("opt.step()", -1), "opt.step() is already first in your block.");
  assert.equal(O.stuck("opt.step()", 1), "opt.step() is already last in the unused lines.");
});

const DROPS = [[5, 0], [20, 1], [40, 2], [60, 3]];

for (const [y, index] of DROPS) {
  test(`a line dropped at y=${y} lands at ${index}`, () => assert.equal(O.dropIndex([10, 30, 50], y), index));
}

test("a line dropped on an empty list lands first", () => assert.equal(O.dropIndex([], 99), 0));

const VERDICTS = [
  // [what, positions, ok, reason]
  ["an accepted order", [1, 4, 0, 3], true, ""],
  ["another accepted order", [4, 1, 0, 3], true, ""],
  ["a wrong order of the right lines", [0, 1, 4, 3], false, ""],
  ["a line short", [1, 4, 0], false, "the block has 3 lines; it needs 4"],
  ["one line", [1], false, "the block has 1 line; it needs 4"],
  ["a line twice", [1, 4, 0, 3, 3], false, "the block has 5 lines; it needs 4"],
  ["a distractor", [1, 4, 0, 2], false, "line C does not belong in the block"],
  ["an empty block", [], false, "no order given"]
];

for (const [what, positions, ok, reason] of VERDICTS) {
  test(`verdict on ${what}`, () => assert.deepEqual(O.verdict(positions, CARD), { ok, reason }));
}
