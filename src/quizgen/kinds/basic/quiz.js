/* quizgen basic cards on a quiz page: "Show answer" (or Space) reveals the back; nothing is judged. */
(function (root) {
  "use strict";

  var D = root.QuizgenDom || require("../../static/quiz/dom.js");
  var $ = D.$;

  function reveal(card, deck) {
    $(".reveal", card.el).hidden = true;
    deck.finish(card, null, "");
  }

  function reset(card) { $(".reveal", card.el).hidden = false; }

  function lock(card) { D.disable(".reveal", card.el); }

  function click(card, button, deck) {
    if (button.classList.contains("reveal")) reveal(card, deck);
  }

  /* Space reveals the shown card, unless a button or link has focus (Space is theirs); true when used. */
  function key(card, e, deck) {
    var tag = e.target.tagName;
    if (e.key !== " " || tag === "BUTTON" || tag === "A" || card.el.hidden || deck.session.answered) return false;
    reveal(card, deck);
    return true;
  }

  var api = { reset: reset, lock: lock, click: click, key: key };
  if (typeof module !== "undefined" && module.exports) module.exports = api;
  (root.QuizgenKinds = root.QuizgenKinds || {}).basic = api;
})(typeof window !== "undefined" ? window : this);
