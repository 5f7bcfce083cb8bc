/* quizgen Anki glue: wires a quizgen note's answer box or True/False buttons on the front, and on the back
 * judges what the learner gave with QuizgenJudge (judge.js, shipped in the same media file).
 *
 * Every side ends with <script src> of this file, and the back includes {{FrontSide}}, so it runs several
 * times per card; every step is idempotent. The back side starts with a `.qg-back-side` marker, before
 * {{FrontSide}}, so even the front's copy of this script, run while the page is still being parsed
 * (AnkiDroid, AnkiMobile), knows which side it is on.
 *
 * Anki desktop swaps the card HTML inside one page, so a global keeps the answer; AnkiDroid and AnkiMobile
 * load a new page for the back, so it also goes to sessionStorage.
 *
 * An order puzzle's lines are shuffled and labelled anew on every review: the front keeps the order it
 * showed the same way as the answer, and the back shows the lines and judges the typed labels in it (a
 * new review never repeats the last one's order). A wrong order typed on the front gets the build's
 * message and its lines marked, and may be retyped until the attempts run out (judge.attempts, else 3). */
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

  /* ---- order puzzles ---- */

  var ORDER = "order:"; // where the order a review shows is kept, beside the answer
  var TRIES = 3; // typed orders judged on the front, unless the card says otherwise

  function storedOrder(id) {
    var kept = load(ORDER + id);
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
    var judge = readJudge(card);
    if (!judge || !judge.items || !root.QuizgenJudge) return;
    var order = root.QuizgenJudge.shuffle(judge.items.length, Math.random, storedOrder(id));
    save(ORDER + id, order.join(","));
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
    write(said, "Not right" + (verdict.reason ? ": " + verdict.reason : "") + ". " + left +
      (left === 1 ? " attempt" : " attempts") + " left.");
    return false;
  }

  /* ---- value cards answered by choosing (judge.mode "choice"): the right answer, then the variants' ---- */

  var OPTIONS = "options:"; // where the order a review shows the options in is kept, beside the answer

  /* Show the options of a choice card, numbered as shown: on the front in a new order per review, each
   * picking its choice (click, Enter, Space or its number); on the back in the front's order, the chosen
   * and the right one marked. False when the card is not answered by choosing. */
  function mountOptions(card, id, back) {
    var judge = readJudge(card), J = root.QuizgenJudge, group = card.querySelector(".qg-options");
    if (!judge || judge.mode !== "choice" || !judge.choices || !J || !group) return false;
    var kept = load(OPTIONS + id), before = kept ? kept.split(",").map(Number) : null;
    var order = back && before ? before : J.shuffle(judge.choices.length, Math.random, before);
    if (!back) save(OPTIONS + id, order.join(","));
    var box = card.querySelector(".qg-typebox"), given = load(id);
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
    save(id, choice);
    reveal();
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

  /* `message` into `el` as text, its inline Markdown (`code`, **strong**, *em*) as elements (feedback and
   * variant labels are Markdown); `append` keeps what `el` holds. Never parsed as HTML. */
  function write(el, message, append) {
    if (!append) el.textContent = "";
    root.QuizgenJudge.inlinePieces(message).forEach(function (piece) {
      var node = piece.tag ? document.createElement(piece.tag) : document.createTextNode(piece.text);
      if (piece.tag) node.textContent = piece.text;
      el.appendChild(node);
    });
  }

  function readJudge(card) {
    try { return JSON.parse(card.getAttribute("data-judge") || "{}"); } catch (e) { return null; }
  }

  function mountFront(card, id) {
    if (card.getAttribute("data-qg-mounted")) return;
    card.setAttribute("data-qg-mounted", "front");
    forget(id); // a new review starts blank, whatever was typed last time
    var input = card.querySelector(".qg-input"), order = card.getAttribute("data-kind") === "order";
    if (order) mountOrderFront(card, id, input);
    if (input) {
      input.addEventListener("input", function () {
        save(id, input.value);
        if (order) markLines(card, []); // the marks were for the order typed before
      });
      input.addEventListener("keydown", function (event) {
        if (event.key !== "Enter") return;
        event.preventDefault();
        save(id, input.value);
        if (!order || orderTry(card, input.value)) reveal();
      });
      input.focus();
    }
    mountOptions(card, id, false);
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
    return valueVerdict(given, judge);
  }

  function mountBack(card, id) {
    var given = load(id), picked = mountOptions(card, id, true);
    var box = card.querySelector(".qg-typebox");
    if (box) box.hidden = true;
    var choices = card.querySelectorAll(".qg-choice");
    for (var i = 0; i < choices.length; i++) {
      choices[i].disabled = true;
      choices[i].setAttribute("aria-pressed", String(choices[i].getAttribute("data-choice") === given));
    }
    var judge = readJudge(card), kind = card.getAttribute("data-kind");
    if (judge && kind === "order" && judge.items && root.QuizgenJudge) judge = arrange(card, judge, storedOrder(id));
    var result = document.querySelector(".qg-result");
    if (!result || result.getAttribute("data-ok")) return; // not parsed yet, or already judged
    if (given === null || String(given).trim() === "") {
      result.setAttribute("data-ok", "none");
      result.textContent = choices.length || picked ? "You did not choose." : "You did not type an answer.";
      return;
    }
    if (!judge || !root.QuizgenJudge) return;
    var verdict = verdictOf(card, given, judge);
    result.setAttribute("data-ok", String(verdict.ok));
    var chose = verdict.chose !== undefined;
    result.textContent = chose ? "You chose " : choices.length ? "You said " : "You typed ";
    var typed = document.createElement("span");
    typed.className = "qg-typed";
    typed.textContent = chose ? verdict.chose : choices.length ? (given === "true" ? "True" : "False") : given;
    result.appendChild(typed);
    var text = verdict.ok ? " \u2014 right." : " \u2014 not right.";
    if (!verdict.ok && verdict.reason) {
      text = " \u2014 not right: " + verdict.reason + (/[.!?]["'`)\]]*$/.test(verdict.reason) ? "" : ".");
    }
    write(result, text, true);
    if (kind === "order" && !verdict.ok) markLines(card, verdict.misplaced || [], verdict.indentation);
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
