/* quizgen myth cards in Anki: the True/False buttons' choice judged against the executed verdict. */
(function (root) {
  "use strict";

  root.QuizgenAnki.kind("myth", {
    verdict: function (given, judge) { return { ok: (given === "true") === judge.verdict, reason: "" }; }
  });
})(typeof window !== "undefined" ? window : this);
