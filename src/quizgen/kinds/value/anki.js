/* quizgen value cards in Anki: answered by typing (judged with judge.js) or, with judge.mode "choice", by
 * choosing among the right answer and its variants' answers, each variant's feedback told when it is chosen. */
(function (root) {
  "use strict";

  var A = root.QuizgenAnki;

  var OPTIONS = "options:"; // where the order a review shows the options in is kept, beside the answer

  /* Show the options of a choice card, numbered as shown: on the front in a new order per review, each
   * picking its choice (click, Enter, Space or its number); on the back in the front's order, the chosen
   * and the right one marked. False when the card is not answered by choosing. */
  function mountOptions(card, id, back) {
    var judge = A.readJudge(card), J = root.QuizgenJudge, group = card.querySelector(".qg-options");
    if (!judge || judge.mode !== "choice" || !judge.choices || !J || !group) return false;
    var kept = A.load(OPTIONS + id), before = kept ? kept.split(",").map(Number) : null;
    var order = back && before ? before : J.shuffle(judge.choices.length, Math.random, before);
    if (!back) A.save(OPTIONS + id, order.join(","));
    var box = card.querySelector(".qg-typebox"), given = A.load(id);
    if (box) box.hidden = true;
    group.hidden = false;
    group.textContent = "";
    order.forEach(function (k, at) {
      var option = document.createElement("button"), key = document.createElement("span");
      var text = document.createElement("code");
      option.type = "button";
      option.className = "qg-option" + (back && k === 0 ? " qg-right-option" : "");
      option.setAttribute("role", "radio");
      option.setAttribute("aria-checked", String(back && given === "#" + k));
      option.tabIndex = at === 0 ? 0 : -1;
      key.className = "qg-option-key";
      key.setAttribute("aria-hidden", "true");
      key.textContent = String(at + 1);
      text.textContent = judge.choices[k].text;
      option.appendChild(key);
      option.appendChild(text);
      option.disabled = back;
      option.addEventListener("click", function () { pickOption(card, id, option, "#" + k); });
      group.appendChild(option);
    });
    if (!back && group.firstChild) group.firstChild.focus();
    if (!root.__quizgenOptionKeys) document.addEventListener("keydown", optionKey);
    root.__quizgenOptionKeys = true; // once per page: Anki desktop shows every card in the same page
    return true;
  }

  function pickOption(card, id, option, choice) {
    if (option.disabled) return;
    var options = card.querySelectorAll(".qg-option");
    for (var i = 0; i < options.length; i++) {
      options[i].setAttribute("aria-checked", String(options[i] === option));
    }
    A.save(id, choice);
    A.reveal();
  }

  var MOVES = { ArrowDown: 1, ArrowRight: 1, ArrowUp: -1, ArrowLeft: -1 };

  /* On a choice card's front: the keys 1 to n pick the option numbered so, the arrows move between them. */
  function optionKey(event) {
    var group = document.querySelector(".qg-card .qg-options");
    if (!group || group.hidden || document.querySelector(".qg-back-side")) return;
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    var options = Array.prototype.slice.call(group.querySelectorAll(".qg-option"));
    var at = options.indexOf(document.activeElement), step = MOVES[event.key];
    var target = /^[1-9]$/.test(event.key) ? options[Number(event.key) - 1] : null;
    if (target) target.click();
    else if (step && at >= 0) {
      target = options[(at + step + options.length) % options.length];
      options.forEach(function (o) { o.tabIndex = o === target ? 0 : -1; });
      target.focus();
    }
    if (target) event.preventDefault();
  }

  /* A value card's verdict: a chosen option ("#k"; right when k is 0, else its variant's feedback), or the
   * typed answer judged, a wrong one that a variant gives getting that variant's feedback. */
  function valueVerdict(given, judge) {
    var J = root.QuizgenJudge, choices = judge.choices || [], k = -1;
    if (judge.mode === "choice" && /^#\d+$/.test(given)) k = Number(given.slice(1));
    if (k >= 0 && k < choices.length) {
      return { ok: k === 0, reason: k ? choices[k].feedback : "", chose: choices[k].text };
    }
    var verdict = J.judgeValue(given, judge.answer, judge.tolerance);
    if (!verdict.ok) verdict.reason = J.variantFeedback(given, judge) || verdict.reason;
    return verdict;
  }

  A.kind("value", {
    front: function (card, id) { mountOptions(card, id, false); },
    back: function (card, id) { return mountOptions(card, id, true); },
    verdict: valueVerdict
  });
})(typeof window !== "undefined" ? window : this);
