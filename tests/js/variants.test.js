/* judge.js's variantFeedback: a value card's wrong typed answer that a variant (an executed misconception)
 * gives gets that variant's feedback, judged as answers are (spellings, the card's tolerance). */
"use strict";

const test = require("node:test");
const assert = require("node:assert/strict");
const path = require("node:path");

const J = require(path.join(__dirname, "..", "..", "src", "quizgen", "static", "judge.js"));

const CARD = {
  tolerance: { rtol: 1e-3, atol: 1e-6 },
  answer: { type: "float", value: 8.0 },
  choices: [
    { answer: { type: "float", value: 8.0 }, text: "8.0", feedback: "" },
    { answer: { type: "float", value: 5.0 }, text: "5.0", feedback: "that is what you get if backward overwrites .grad" },
    { answer: { type: "exception", value: "RuntimeError" }, text: "raises RuntimeError: x", feedback: "that is what you get if w lost requires_grad" },
  ],
};

test("a variant's answer, in any spelling the judge accepts, gets its feedback", () => {
  for (const typed of ["5", "5.0", "tensor(5.)", "5.004"]) {
    assert.equal(J.variantFeedback(typed, CARD), CARD.choices[1].feedback, typed);
  }
  assert.equal(J.variantFeedback("RuntimeError", CARD), CARD.choices[2].feedback);
});

test("the right answer and answers no variant gives get none", () => {
  for (const typed of ["8", "7", "", "ValueError"]) assert.equal(J.variantFeedback(typed, CARD), "", typed);
  assert.equal(J.variantFeedback("5", { tolerance: CARD.tolerance, answer: CARD.answer }), "");
});
