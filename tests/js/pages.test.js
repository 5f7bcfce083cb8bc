/* The quiz's scripts as the pages load them: classic scripts, in the templates' order, sharing globals
 * (no `require`, no modules), and each loadable in node on its own. */
"use strict";

const test = require("node:test");
const assert = require("node:assert/strict");
const fs = require("node:fs");
const path = require("node:path");
const vm = require("node:vm");

const SRC = path.join(__dirname, "..", "..", "src", "quizgen");
const STATIC = path.join(SRC, "static");
// A kind's quiz script is kinds/<kind>/quiz.js, served as assets/kinds/<kind>.js (the order puzzle's moves,
// kinds/order/layout.js, as assets/order.js).
const KINDS = fs.readdirSync(path.join(SRC, "kinds"), { withFileTypes: true })
  .filter((d) => d.isDirectory() && fs.existsSync(path.join(SRC, "kinds", d.name, "quiz.js")))
  .map((d) => d.name + ".js").sort();

/* The asset names a page's <script>s load, in order; on a deck page, every kind's script. */
function pageScripts(page) {
  const base = fs.readFileSync(path.join(SRC, "templates", "quiz", "base.html"), "utf8");
  const deck = fs.readFileSync(path.join(SRC, "templates", "quiz", "deck.html"), "utf8");
  const block = /{% block page_scripts %}([\s\S]*?){% endblock %}/;
  const own = page === "deck" ? deck.match(block)[1] : "";
  const names = [];
  for (const m of base.replace(block, own).matchAll(/assets\['([^']+\.js)'\]|kind_scripts/g)) {
    if (m[1]) names.push(m[1]);
    else names.push(...KINDS.map((k) => "kinds/" + k));
  }
  return names;
}

function file(name) {
  if (name === "judge.js") return path.join(STATIC, name);
  if (name === "order.js") return path.join(SRC, "kinds", "order", "layout.js");
  const kind = /^kinds\/(\w+)\.js$/.exec(name);
  return kind ? path.join(SRC, "kinds", kind[1], "quiz.js") : path.join(STATIC, "quiz", name);
}

/* Run the scripts in one global, as a browser would (without a document, so nothing starts). */
function load(names) {
  const window = vm.createContext({});
  window.window = window;
  for (const name of names) vm.runInContext(fs.readFileSync(file(name), "utf8"), window, { filename: name });
  return window;
}

test("a deck page loads every script, in an order where each finds what it needs", () => {
  const names = pageScripts("deck");
  const everything = ["judge.js", "order.js", ...fs.readdirSync(path.join(STATIC, "quiz")).filter((f) => f.endsWith(".js")),
    ...KINDS.map((k) => "kinds/" + k)];
  assert.deepEqual([...names].sort(), everything.sort());
  assert.equal(names[names.length - 1], "quiz.js", "quiz.js starts the page, so it comes last");
  const window = load(names);
  for (const name of ["QuizgenJudge", "QuizgenDom", "QuizgenFSRS", "QuizgenProgress", "QuizgenState",
    "QuizgenQuizMode", "QuizgenReviewMode", "QuizgenOrder", "QuizgenDeck", "QuizgenStats"]) {
    assert.equal(typeof window[name], "object", name);
  }
  assert.deepEqual(Object.keys(window.QuizgenKinds).sort(), KINDS.map((k) => k.replace(/\.js$/, "")));
});

test("the index loads what it needs and no card's scripts", () => {
  const names = pageScripts("index");
  assert.deepEqual(names, ["judge.js", "dom.js", "fsrs.js", "progress.js", "review-mode.js", "stats.js", "quiz.js"]);
  load(names);
});

test("every script loads in node on its own", () => {
  for (const name of pageScripts("deck")) assert.doesNotThrow(() => require(file(name)), name);
});

test("every kind's hooks are functions deck.js knows", () => {
  const known = ["attach", "reset", "lock", "click", "submit", "key", "owns"];
  for (const k of KINDS) {
    const hooks = require(file("kinds/" + k));
    for (const [name, hook] of Object.entries(hooks)) {
      assert.ok(known.includes(name), `${k}: ${name}`);
      assert.equal(typeof hook, "function", `${k}: ${name}`);
    }
  }
});
