/* quizgen value cards on a quiz page: the typed answer is judged by judge.js with the card's tolerance. */
(function (root) {
  "use strict";

  var D = root.QuizgenDom || require("../dom.js");
  var J = root.QuizgenJudge || require("../../judge.js");
  var $ = D.$;

  function reset(card) {
    var input = $(".answer-input", card.el);
    input.value = "";
    input.readOnly = false;
  }

  function lock(card) {
    D.disable(".answer-form button", card.el);
    $(".answer-input", card.el).readOnly = true;
  }

  function submit(card, deck) {
    var verdict = J.judgeValue($(".answer-input", card.el).value, card.judge.answer, card.judge.tolerance);
    deck.finish(card, verdict.ok, verdict.reason);
  }

  var api = { reset: reset, lock: lock, submit: submit };
  if (typeof module !== "undefined" && module.exports) module.exports = api;
  (root.QuizgenKinds = root.QuizgenKinds || {}).value = api;
})(typeof window !== "undefined" ? window : this);
