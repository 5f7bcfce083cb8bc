/* quizgen order puzzles in Anki: the lines are shuffled and labelled anew on every review (the front
 * keeps the order it showed beside the answer; the back shows the lines in it and judges the typed labels,
 * and a new review never repeats the last one's order). A wrong order typed on the front gets the build's
 * message and its lines marked, and may be retyped until the attempts run out (judge.attempts, else 3). */
(function (root) {
  "use strict";

  var A = root.QuizgenAnki;

  var ORDER = "order:"; // where the order a review shows is kept, beside the answer
  var TRIES = 3; // typed orders judged on the front, unless the card says otherwise

  function storedOrder(id) {
    var kept = A.load(ORDER + id);
    return kept ? kept.split(",").map(Number) : null;
  }

  /* Show the lines in `order` (item numbers, first shown first), labelled A, B, ... as shown; returns the
   * judge data with those labels. Idempotent: lines already in that order are left alone. */
  function arrange(card, judge, order) {
    var list = card.querySelector(".qg-lines");
    if (!list || !order || order.length !== judge.items.length) return judge;
    var labels = root.QuizgenJudge.labelsFor(order), byItem = {};
    var lines = Array.prototype.slice.call(list.children);
    lines.forEach(function (li) { byItem[li.getAttribute("data-item")] = li; });
    if (list.getAttribute("data-qg-order") !== order.join(",") && lines.length === order.length) {
      order.forEach(function (item) {
        var li = byItem[item], label = li && li.querySelector(".qg-line-label");
        if (!li) return;
        if (label) label.textContent = labels[item];
        list.appendChild(li);
      });
      list.setAttribute("data-qg-order", order.join(","));
    }
    var out = {};
    for (var key in judge) if (Object.prototype.hasOwnProperty.call(judge, key)) out[key] = judge[key];
    out.labels = labels;
    return out;
  }

  /* Mark the lines at these positions (none: clear every mark): out of place, or indented wrong. */
  function markLines(card, positions, indentation) {
    var lines = card.querySelectorAll(".qg-lines > li");
    for (var i = 0; i < lines.length; i++) {
      var li = lines[i], out = positions.indexOf(Number(li.getAttribute("data-item"))) >= 0;
      var old = li.querySelector(".qg-mark");
      if (old) old.parentNode.removeChild(old);
      li.classList.toggle("qg-misplaced", out);
      if (!out) continue;
      var mark = document.createElement("span");
      mark.className = "qg-mark";
      mark.textContent = indentation ? "indented wrong" : "out of place";
      li.appendChild(mark);
    }
  }

  /* A new shuffle for this review, and the hint for an indented puzzle. */
  function mountOrderFront(card, id, input) {
    var judge = A.readJudge(card);
    if (!judge || !judge.items || !root.QuizgenJudge) return;
    var order = root.QuizgenJudge.shuffle(judge.items.length, Math.random, storedOrder(id));
    A.save(ORDER + id, order.join(","));
    card.__quizgenJudge = arrange(card, judge, order);
    card.__quizgenTries = judge.attempts || TRIES;
    if (!input || !judge.levels) return;
    input.setAttribute("placeholder", "Type the labels in order, one > per level of indentation: A >B >>C D");
    var hint = document.createElement("p");
    hint.className = "qg-hint";
    hint.id = "qg-hint-" + id;
    hint.textContent = "Indentation counts: before a label, type one > for each level it is indented, e.g. A >B >>C D.";
    input.parentNode.appendChild(hint);
    input.setAttribute("aria-describedby", hint.id);
  }

  /* Enter on an order's front: true when the back may be shown (right, or no attempts left); a wrong
   * order with attempts left is said why here, its lines marked. */
  function orderTry(card, typed) {
    var judge = card.__quizgenJudge;
    if (!judge || !String(typed).trim()) return true;
    var verdict = root.QuizgenJudge.judgeOrder(typed, judge);
    card.__quizgenTries -= 1;
    if (verdict.ok || card.__quizgenTries <= 0) return true;
    markLines(card, verdict.misplaced, verdict.indentation);
    var said = card.querySelector(".qg-try");
    if (!said) {
      said = document.createElement("div");
      said.className = "qg-try";
      said.setAttribute("role", "status");
      card.querySelector(".qg-typebox").appendChild(said);
    }
    said.setAttribute("data-ok", "false");
    var left = card.__quizgenTries;
    A.write(said, "Not right" + (verdict.reason ? ": " + verdict.reason : "") + ". " + left +
      (left === 1 ? " attempt" : " attempts") + " left.");
    return false;
  }

  A.kind("order", {
    front: mountOrderFront,
    edited: function (card) { markLines(card, []); }, // the marks were for the order typed before
    tried: orderTry,
    shown: function (card, id, judge) { return judge.items ? arrange(card, judge, storedOrder(id)) : judge; },
    verdict: function (given, judge) { return root.QuizgenJudge.judgeOrder(given, judge); },
    wrong: function (card, verdict) { markLines(card, verdict.misplaced || [], verdict.indentation); }
  });
})(typeof window !== "undefined" ? window : this);
