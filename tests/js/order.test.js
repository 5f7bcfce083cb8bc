/* kinds/order/layout.js: the order puzzle's moves on a layout {block, pool} of item numbers. */
"use strict";

const test = require("node:test");
const assert = require("node:assert/strict");

const O = require("../../src/quizgen/kinds/order/layout.js");
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
  // [what, positions, ok, reason, misplaced]
  ["an accepted order", [1, 4, 0, 3], true, "", []],
  ["another accepted order", [4, 1, 0, 3], true, "", []],
  ["a wrong order of the right lines", [0, 1, 4, 3], false,
    "line A is out of place: move it and your block is an accepted order", [0]],
  ["two lines out of place", [3, 0, 1, 4], false,
    "lines D and E are out of place: move them and your block is an accepted order", [3, 4]],
  ["a line short", [1, 4, 0], false, "the block has 3 lines; it needs 4", []],
  ["one line", [1], false, "the block has 1 line; it needs 4", []],
  ["a line twice", [1, 4, 0, 3, 3], false, "the block has 5 lines; it needs 4", []],
  ["a distractor", [1, 4, 0, 2], false, "line C does not belong in the block", []],
  ["an empty block", [], false, "no order given", []]
];

for (const [what, positions, ok, reason, misplaced] of VERDICTS) {
  test(`verdict on ${what}`, () => assert.deepEqual(O.verdict(positions, CARD), { ok, reason, misplaced }));
}

// The build's messages: an order of lines ("1 0 2 3"), or any use of distractor k ("-1-k").
const FEEDBACK = Object.freeze({
  "0 2 1 3": "With `c` before `b`: `c` raises NameError",
  "-1": "With `x = x * 2` instead of `b`, the check fails"
});
const TOLD = { ...CARD, feedback: FEEDBACK };

const FEEDBACKS = [
  // [what, lines, message]
  ["an order with a message of its own", [0, 2, 1, 3], FEEDBACK["0 2 1 3"]],
  ["a distractor anywhere", [1, -1, 2, 3], FEEDBACK["-1"]],
  ["a distractor in a block too long", [0, 1, 2, 3, -1], FEEDBACK["-1"]],
  ["a distractor without a message", [0, -2, 2, 3], ""],
  ["an order without a message", [3, 2, 1, 0], ""],
  ["a key of the object's prototype is no message", [0], ""]
];

for (const [what, lines, message] of FEEDBACKS) {
  test(`feedback for ${what}`, () => assert.equal(O.feedbackFor(lines, FEEDBACK), message));
}

test("feedback: an order's own message comes before a distractor's", () => {
  assert.equal(O.feedbackFor([-1, 2], { "-1 2": "exact", "-1": "any" }), "exact");
});

test("feedback: none without messages", () => assert.equal(O.feedbackFor([1, 0], undefined), ""));

test("verdict: the build's message for a swapped pair, with nothing marked", () => {
  // items [2, 0, -1, 3, 1]: positions 1 0 4 3 are lines 0 2 1 3.
  assert.deepEqual(O.verdict([1, 0, 4, 3], TOLD), { ok: false, reason: FEEDBACK["0 2 1 3"], misplaced: [] });
});

test("verdict: the build's message for a distractor, before the block's length", () => {
  assert.deepEqual(O.verdict([1, 4, 0, 3, 2], TOLD), { ok: false, reason: FEEDBACK["-1"], misplaced: [] });
});

test("verdict: right lines without a message are marked against the nearest order", () => {
  assert.deepEqual(O.verdict([3, 0, 1, 4], TOLD).misplaced, [3, 4]);
});

const ORDERS = [[0, 1, 2, 3], [1, 0, 2, 3], [1, 2, 3, 0]];

const NEAREST = [
  // [what, lines, nearest order, places to move]
  ["one line a step away", [1, 2, 0, 3], [1, 0, 2, 3], [1]],
  ["the last line first: one move, though every place differs", [3, 0, 1, 2], [0, 1, 2, 3], [0]],
  ["the reverse", [3, 2, 1, 0], [1, 2, 3, 0], [0, 1]],
  ["fewest places differing among equally few moves", [2, 1, 3, 0], [1, 2, 3, 0], [0]]
];

for (const [what, lines, order, misplaced] of NEAREST) {
  test(`nearest accepted order: ${what}`, () => assert.deepEqual(O.nearest(lines, ORDERS), { order, misplaced }));
}

test("nearest accepted order: none of the same length", () => assert.equal(O.nearest([0, 1], ORDERS), null));

test("nearest accepted order: the fewest moves win over the fewest places differing", () => {
  // [3 0 1 2] differs from [1 0 3 2] in 2 places but needs 2 moves; from [0 1 2 3] in 4, with 1 move.
  assert.deepEqual(O.nearest([3, 0, 1, 2], [[1, 0, 3, 2], [0, 1, 2, 3]]), { order: [0, 1, 2, 3], misplaced: [0] });
});

test("a longest common subsequence keeps as many places as it can", () => {
  assert.deepEqual(O.kept([1, 2, 3, 0], [0, 1, 2, 3]), [true, true, true, false]);
  assert.deepEqual(O.kept([], [0]), []);
});

test("lines out of place, in words", () => {
  assert.equal(O.misplacedReason(["C"]), "line C is out of place: move it and your block is an accepted order");
  assert.equal(O.misplacedReason(["A", "B", "D"]),
    "lines A, B and D are out of place: move them and your block is an accepted order");
});

test("attempts, in words", () => {
  assert.equal(O.ATTEMPTS, 3);
  assert.deepEqual([O.attemptsText(3, true), O.attemptsText(1, true)], ["3 attempts", "1 attempt"]);
  assert.deepEqual([2, 1, 0].map((n) => O.attemptsText(n, false)),
    ["2 attempts left", "1 attempt left", "no attempts left"]);
});

test("indentation: the deepest level is one past the puzzle's, and a step stops at the edges", () => {
  assert.equal(O.maxLevel({ levels: [0, 2, 1] }), 3);
  assert.equal(O.maxLevel({}), 0); // indentation is not part of the answer
  assert.deepEqual([O.indent(0, 1, 2), O.indent(2, 1, 2), O.indent(0, -1, 2), O.indent(2, -1, 2)], [1, null, null, 1]);
});

test("indentation: a line dropped further right takes the level its left edge lands on", () => {
  assert.deepEqual([-40, 0, 15, 17, 40, 200].map((dx) => O.levelAt(dx, 32, 3)), [0, 0, 0, 1, 1, 3]);
});

test("indentation, in words, with where a line stands", () => {
  assert.deepEqual([0, 1, 2].map(O.levelText), ["not indented", "indented 1 level", "indented 2 levels"]);
  assert.equal(O.where(LAYOUT, 1, 2), "at position 2 of 2 in your block, indented 2 levels");
  assert.equal(O.where(LAYOUT, 1, null), "at position 2 of 2 in your block");
});

test("a shuffle: the unused lines in its order, and a line taken out goes back to its place in it", () => {
  assert.deepEqual(O.reset([0, 1, 2, 3], [2, 0, 3, 1]), { block: [], pool: [2, 0, 3, 1] });
  const rank = (k) => [2, 0, 3, 1].indexOf(k); // line 2 was shown first, then 0, 3, 1
  const out = O.toggle({ block: [3], pool: [2, 0, 1], rank }, 3);
  assert.deepEqual([out.block, out.pool], [[], [2, 0, 3, 1]]);
});
