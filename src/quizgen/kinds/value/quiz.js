/* quizgen value cards on a quiz page. Typed: the answer is judged by judge.js with the card's tolerance,
 * and a wrong answer that a variant (an executed misconception) gives gets that variant's feedback.
 * Choice: the right answer and the variants' answers are a radio group, shuffled each time the card is
 * shown; an option is picked by click, Enter or Space, or by the keys 1 to n (the number shown on it);
 * the arrow keys move between the options. */
(function (root) {
  "use strict";

  var D = root.QuizgenDom || require("../../static/quiz/dom.js");
  var J = root.QuizgenJudge || require("../../static/judge.js");
  var $ = D.$, $$ = D.$$;

  function choosing(card) { return !!$(".options", card.el); }

  /* The options as the learner sees them, first to last. */
  function options(card) { return $$(".option", card.el); }

  function reset(card) {
    if (!choosing(card)) {
      var input = $(".answer-input", card.el);
      input.value = "";
      input.readOnly = false;
      return;
    }
    var group = $(".options", card.el), shown = options(card);
    var before = shown.map(function (b) { return Number(b.getAttribute("data-choice")); });
    var order = J.shuffle(shown.length, Math.random, before); // a new order each time the card is shown
    order.forEach(function (k, at) {
      var option = $('.option[data-choice="' + k + '"]', group);
      group.appendChild(option);
      $(".option-key", option).textContent = String(at + 1);
      option.setAttribute("aria-checked", "false");
      option.tabIndex = at === 0 ? 0 : -1; // one tab stop for the group; the arrows move within it
      option.classList.remove("chosen", "right-option");
    });
  }

  function lock(card) {
    if (choosing(card)) {
      options(card).forEach(function (b) {
        b.disabled = true;
        if (b.getAttribute("data-choice") === "0") b.classList.add("right-option");
      });
      return;
    }
    D.disable(".answer-form button", card.el);
    $(".answer-input", card.el).readOnly = true;
  }

  /* The learner picked choice k (its index in card.judge.choices: 0 is the right answer). */
  function choose(card, option, deck) {
    var k = Number(option.getAttribute("data-choice"));
    options(card).forEach(function (b) { b.setAttribute("aria-checked", String(b === option)); });
    option.classList.add("chosen");
    var choice = card.judge.choices[k];
    deck.finish(card, k === 0, k === 0 ? "" : choice.feedback);
  }

  function submit(card, deck) {
    var given = $(".answer-input", card.el).value;
    var verdict = J.judgeValue(given, card.judge.answer, card.judge.tolerance);
    var because = verdict.ok ? "" : J.variantFeedback(given, card.judge);
    deck.finish(card, verdict.ok, because || verdict.reason);
  }

  function click(card, button, deck) {
    if (button.classList.contains("option")) choose(card, button, deck);
  }

  var MOVES = { ArrowDown: 1, ArrowRight: 1, ArrowUp: -1, ArrowLeft: -1 };

  /* Keys 1 to n pick an option; the arrows move the focus between options. True when the key was used. */
  function key(card, e, deck) {
    if (!choosing(card) || card.el.classList.contains("answered")) return false;
    var shown = options(card);
    if (/^[1-9]$/.test(e.key) && Number(e.key) <= shown.length) {
      choose(card, shown[Number(e.key) - 1], deck);
      return true;
    }
    var at = shown.indexOf(e.target);
    if (at < 0 || !(e.key in MOVES)) return false;
    var next = shown[(at + MOVES[e.key] + shown.length) % shown.length];
    shown.forEach(function (b) { b.tabIndex = b === next ? 0 : -1; });
    next.focus();
    return true;
  }

  var api = { reset: reset, lock: lock, submit: submit, click: click, key: key };
  if (typeof module !== "undefined" && module.exports) module.exports = api;
  (root.QuizgenKinds = root.QuizgenKinds || {}).value = api;
})(typeof window !== "undefined" ? window : this);
