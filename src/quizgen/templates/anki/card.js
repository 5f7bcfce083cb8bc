/* quizgen Anki glue: wires a quizgen note's answer box or True/False buttons on the front, and on the back
 * judges what the learner gave with QuizgenJudge (judge.js, shipped in the same media file).
 *
 * Every side ends with <script src> of this file, and the back includes {{FrontSide}}, so it runs several
 * times per card; every step is idempotent. The back side starts with a `.qg-back-side` marker, before
 * {{FrontSide}}, so even the front's copy of this script, run while the page is still being parsed
 * (AnkiDroid, AnkiMobile), knows which side it is on.
 *
 * Anki desktop swaps the card HTML inside one page, so a global keeps the answer; AnkiDroid and AnkiMobile
 * load a new page for the back, so it also goes to sessionStorage. */
(function (root) {
  "use strict";

  var KEY = "quizgen:answer:";
  var memory = (root.__quizgenAnswers = root.__quizgenAnswers || {});

  function save(id, value) {
    memory[id] = value;
    try { root.sessionStorage.setItem(KEY + id, value); } catch (e) { /* storage disabled: the global remains */ }
  }

  function load(id) {
    if (Object.prototype.hasOwnProperty.call(memory, id)) return memory[id];
    try { return root.sessionStorage.getItem(KEY + id); } catch (e) { return null; }
  }

  function forget(id) {
    delete memory[id];
    try { root.sessionStorage.removeItem(KEY + id); } catch (e) { /* nothing stored */ }
  }

  /* Show the back, where the client lets a card do that. */
  function reveal() {
    if (typeof root.pycmd === "function") root.pycmd("ans"); // Anki desktop
    else if (typeof root.showAnswer === "function") root.showAnswer(); // AnkiDroid
  }

  function readJudge(card) {
    try { return JSON.parse(card.getAttribute("data-judge") || "{}"); } catch (e) { return null; }
  }

  function mountFront(card, id) {
    if (card.getAttribute("data-qg-mounted")) return;
    card.setAttribute("data-qg-mounted", "front");
    forget(id); // a new review starts blank, whatever was typed last time
    var input = card.querySelector(".qg-input");
    if (input) {
      input.addEventListener("input", function () { save(id, input.value); });
      input.addEventListener("keydown", function (event) {
        if (event.key !== "Enter") return;
        event.preventDefault();
        save(id, input.value);
        reveal();
      });
      input.focus();
    }
    var choices = card.querySelectorAll(".qg-choice");
    for (var i = 0; i < choices.length; i++) {
      choices[i].addEventListener("click", function (event) {
        var button = event.currentTarget;
        save(id, button.getAttribute("data-choice"));
        for (var j = 0; j < choices.length; j++) choices[j].setAttribute("aria-pressed", String(choices[j] === button));
        reveal();
      });
    }
  }

  function verdictOf(card, given, judge) {
    var kind = card.getAttribute("data-kind");
    var J = root.QuizgenJudge;
    if (kind === "myth") return { ok: (given === "true") === judge.verdict, reason: "" };
    if (kind === "order") return J.judgeOrder(given, judge);
    return J.judgeValue(given, judge.answer, judge.tolerance);
  }

  function mountBack(card, id) {
    var given = load(id);
    var box = card.querySelector(".qg-typebox");
    if (box) box.hidden = true;
    var choices = card.querySelectorAll(".qg-choice");
    for (var i = 0; i < choices.length; i++) {
      choices[i].disabled = true;
      choices[i].setAttribute("aria-pressed", String(choices[i].getAttribute("data-choice") === given));
    }
    var result = document.querySelector(".qg-result");
    if (!result || result.getAttribute("data-ok")) return; // not parsed yet, or already judged
    var judge = readJudge(card);
    if (given === null || String(given).trim() === "") {
      result.setAttribute("data-ok", "none");
      result.textContent = choices.length ? "You did not choose." : "You did not type an answer.";
      return;
    }
    if (!judge || !root.QuizgenJudge) return;
    var verdict = verdictOf(card, given, judge);
    result.setAttribute("data-ok", String(verdict.ok));
    result.textContent = choices.length ? "You said " : "You typed ";
    var typed = document.createElement("span");
    typed.className = "qg-typed";
    typed.textContent = choices.length ? (given === "true" ? "True" : "False") : given;
    result.appendChild(typed);
    var text = verdict.ok ? " \u2014 right." : " \u2014 not right.";
    if (!verdict.ok && verdict.reason) text = " \u2014 not right: " + verdict.reason + ".";
    result.appendChild(document.createTextNode(text));
  }

  function mount() {
    var card = document.querySelector(".qg-card");
    if (!card) return;
    var id = card.getAttribute("data-id") || "";
    if (document.querySelector(".qg-back-side")) mountBack(card, id);
    else mountFront(card, id);
  }

  root.QuizgenAnki = { mount: mount, save: save, load: load };
  mount();
})(typeof window !== "undefined" ? window : this);
