/* static/judge.js codeSpans: the Markdown code spans of feedback and variant labels, for both clients. */
"use strict";

const test = require("node:test");
const assert = require("node:assert/strict");

const J = require("../../src/quizgen/static/judge.js");

const CASES = [
  ["plain words", [{ code: false, text: "plain words" }]],
  ["With `opt.step()` before `loss.backward()`: fails", [
    { code: false, text: "With " }, { code: true, text: "opt.step()" }, { code: false, text: " before " },
    { code: true, text: "loss.backward()" }, { code: false, text: ": fails" }
  ]],
  ["`<b>x</b>` & <i>", [{ code: true, text: "<b>x</b>" }, { code: false, text: " & <i>" }]],
  ["an `unclosed span", [{ code: false, text: "an `unclosed span" }]],
  ["`` a ` b ``", [{ code: true, text: "a ` b" }]],
  ["`x` and ``y``", [{ code: true, text: "x" }, { code: false, text: " and " }, { code: true, text: "y" }]],
  ["`  `", [{ code: true, text: "  " }]],
  ["", []]
];

for (const [text, pieces] of CASES) {
  test(`code spans of ${JSON.stringify(text)}`, () => assert.deepEqual(J.codeSpans(text), pieces));
}
