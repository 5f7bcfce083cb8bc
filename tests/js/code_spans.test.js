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

/* inlinePieces: code spans, then strong and em in the text between them (what both clients write). */
const INLINE = [
  ["**Never** call `step()` *before* backward", [
    { tag: "strong", text: "Never" }, { tag: "", text: " call " }, { tag: "code", text: "step()" },
    { tag: "", text: " " }, { tag: "em", text: "before" }, { tag: "", text: " backward" }
  ]],
  ["zero_grad and set_to_none stay words", [{ tag: "", text: "zero_grad and set_to_none stay words" }]],
  ["_twice_ as __much__", [
    { tag: "em", text: "twice" }, { tag: "", text: " as " }, { tag: "strong", text: "much" }
  ]],
  ["`**not bold**` and 2 * 3 * 4", [
    { tag: "code", text: "**not bold**" }, { tag: "", text: " and 2 * 3 * 4" }
  ]],
  ["<b>x</b> *<i>*", [{ tag: "", text: "<b>x</b> " }, { tag: "em", text: "<i>" }]],
  ["", []]
];

for (const [text, pieces] of INLINE) {
  test(`inline pieces of ${JSON.stringify(text)}`, () => assert.deepEqual(J.inlinePieces(text), pieces));
}
