/* quizgen myth cards on a quiz page: True or False, against the card's verdict. */
(function (root) {
  "use strict";

  var D = root.QuizgenDom || require("../../static/quiz/dom.js");

  function lock(card) { D.disable(".choices button", card.el); }

  function click(card, button, deck) {
    if (!button.hasAttribute("data-verdict")) return;
    button.setAttribute("aria-pressed", "true");
    var said = button.getAttribute("data-verdict") === "true";
    deck.finish(card, said === card.judge.verdict, "you said " + (said ? "true" : "false"));
  }

  var api = { lock: lock, click: click };
  if (typeof module !== "undefined" && module.exports) module.exports = api;
  (root.QuizgenKinds = root.QuizgenKinds || {}).myth = api;
})(typeof window !== "undefined" ? window : this);
