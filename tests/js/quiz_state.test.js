/* static/quiz/state.js and quiz-mode.js: a deck page's state and a quiz's score, as plain values. */
"use strict";

const test = require("node:test");
const assert = require("node:assert/strict");

const S = require("../../src/quizgen/static/quiz/state.js");
const Q = require("../../src/quizgen/static/quiz/quiz-mode.js");

test("a card shown, answered once, then cleared", () => {
  const shown = S.show(S.setMode(S.create(), "quiz"), "a");
  assert.deepEqual(shown, { mode: "quiz", card: "a", answered: false, correct: null });
  const answered = S.answer(shown, "a", false);
  assert.deepEqual(answered, { mode: "quiz", card: "a", answered: true, correct: false });
  assert.equal(S.answer(answered, "a", true), null, "a second answer changes nothing");
  assert.equal(S.answer(shown, "b", true), null, "nor does an answer to a card not shown");
  assert.deepEqual(S.clear(answered), { mode: "quiz", card: null, answered: false, correct: false });
  assert.deepEqual(shown, { mode: "quiz", card: "a", answered: false, correct: null }, "states are values");
});

const MODES = [["#review", "review"], ["#quiz", "quiz"], ["", "quiz"], ["#other", "quiz"]];

for (const [hash, mode] of MODES) {
  test(`a page opened at ${JSON.stringify(hash)} starts in ${mode} mode`, () => assert.equal(S.initialMode(hash), mode));
}

const RESULTS = [
  // [ok, reason, answer text, heading, announcement]
  [true, "", "The answer is 8.0.", "Right", "Right. The answer is 8.0."],
  [false, "you said true", "The claim is false.", "Not right", "Not right. You said true. The claim is false."],
  [false, "expected a number", "The answer is 8.0.", "Not right", "Not right. Expected a number. The answer is 8.0."],
  [null, "", "So that several passes add up.", "Answer", "So that several passes add up."]
];

for (const [ok, reason, answer, heading, said] of RESULTS) {
  test(`a result (${ok}, ${JSON.stringify(reason)}) is headed and announced`, () => {
    assert.equal(S.outcome(ok), heading);
    assert.equal(S.announcement(ok, reason, answer), said);
  });
}

test("a reason becomes a sentence", () => {
  assert.equal(S.sentence("the answer is None"), "The answer is None.");
  assert.equal(S.sentence(""), "");
});

test("a quiz of three cards, scored", () => {
  let quiz = Q.start();
  assert.equal(Q.status(quiz, 3), "Quiz: card 1 of 3, 0 right so far.");
  quiz = Q.record(quiz, "a", true);
  assert.equal(Q.nextLabel(quiz, 3), "Next card");
  quiz = Q.advance(quiz);
  assert.equal(Q.status(quiz, 3), "Quiz: card 2 of 3, 1 right so far.");
  quiz = Q.advance(Q.record(quiz, "b", false));
  quiz = Q.record(quiz, "c", true);
  assert.equal(Q.nextLabel(quiz, 3), "See your score");
  assert.equal(Q.done(quiz, 3), false);
  quiz = Q.advance(quiz);
  assert.equal(Q.done(quiz, 3), true);
  assert.equal(Q.score(quiz), "You got 2 of 3 right.");
  assert.deepEqual(Q.missed(quiz), ["b"]);
  assert.deepEqual(Q.summary(quiz, 1234), { right: 2, total: 3, at: 1234 });
});

test("a missed card is listed by its prompt, long ones cut to 120 characters", () => {
  assert.equal(Q.missedLine("What is w.grad?"), "Missed: What is w.grad?");
  const long = Q.missedLine("x".repeat(200));
  assert.equal(long, "Missed: " + "x".repeat(117) + "…");
  assert.equal(Q.missedLine("y".repeat(120)), "Missed: " + "y".repeat(120));
});

test("a run goes through the cards in the deck's order, or in a shuffle of them when the deck says so", () => {
  let quiz = Q.start(4, false);
  const seen = [];
  while (!Q.done(quiz, 4)) { seen.push(Q.position(quiz)); quiz = Q.advance(Q.record(quiz, "c", true)); }
  assert.deepEqual(seen, [0, 1, 2, 3]);
  const draws = [0.9, 0.1, 0.5];
  quiz = Q.start(4, true, () => draws.shift());
  const shuffled = [];
  while (!Q.done(quiz, 4)) { shuffled.push(Q.position(quiz)); quiz = Q.advance(Q.record(quiz, "c", false)); }
  // Fisher-Yates from the end: swap 3<->floor(0.9*4)=3, 2<->floor(0.1*3)=0, 1<->floor(0.5*2)=1.
  assert.deepEqual(shuffled, [2, 1, 0, 3]);
  assert.equal(quiz.results.length, 4);
});

for (const [hash, id] of [["#card-swap-order", "swap-order"], ["#swap-order", "swap-order"], ["#review", null],
  ["#quiz", null], ["", null], ["#card-Bad_Id", null], ["#card-a--b", null], ["#card-review", "review"]]) {
  test(`the address ${JSON.stringify(hash)} links to card ${id}`, () => assert.equal(S.linkedCard(hash), id));
}

test("a quiz opened at a card starts there: in order from it, or shuffled with it first", () => {
  assert.deepEqual(Q.startAt(Q.start(5, false), 3), { index: 3, results: [], order: null });
  const shuffled = Q.startAt(Q.start(5, true, () => 0.3), 3);
  assert.equal(Q.position(shuffled), 3);
  assert.deepEqual([...shuffled.order].sort(), [0, 1, 2, 3, 4]);
});

test("a reason that ends its sentence gets no second period", () => {
  assert.equal(S.sentence("you said true"), "You said true.");
  assert.equal(S.sentence("it raises RuntimeError: use `inference_mode()`."), "It raises RuntimeError: use `inference_mode()`.");
  assert.equal(S.sentence("that is what you get if x (it raises ValueError: bad.)"), "That is what you get if x (it raises ValueError: bad.)");
  assert.equal(S.sentence("see (the note)"), "See (the note).");
});
