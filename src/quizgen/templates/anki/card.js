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
 * What a kind does beyond this lies in its own script (kinds/<kind>/anki.js), which registers its hooks
 * with QuizgenAnki.kind(name, hooks) before QuizgenAnki.mount() runs; the media file holds judge.js, this
 * file, each kind's script and that call. Hooks, each optional: front(card, id, input) when the front is
 * mounted; edited(card) when the typed answer changes; tried(card, typed) on Enter, true when the back
 * may be shown; back(card, id) on the back, true when the card is answered by choosing; shown(card, id,
 * judge) the judge data as the back shows it; verdict(given, judge) the verdict on what was given;
 * wrong(card, verdict) after a wrong answer. */
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

  var kinds = {}; // each kind's hooks, by its name (kinds/<kind>/anki.js)

  function hooks(card) {
    return kinds[card.getAttribute("data-kind")] || {};
  }

  function mountFront(card, id) {
    if (card.getAttribute("data-qg-mounted")) return;
    card.setAttribute("data-qg-mounted", "front");
    forget(id); // a new review starts blank, whatever was typed last time
    var input = card.querySelector(".qg-input"), kind = hooks(card);
    if (kind.front) kind.front(card, id, input);
    if (input) {
      input.addEventListener("input", function () {
        save(id, input.value);
        if (kind.edited) kind.edited(card);
      });
      input.addEventListener("keydown", function (event) {
        if (event.key !== "Enter") return;
        event.preventDefault();
        save(id, input.value);
        if (!kind.tried || kind.tried(card, input.value)) reveal();
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

  function mountBack(card, id) {
    var kind = hooks(card), given = load(id), picked = kind.back ? kind.back(card, id) : false;
    var box = card.querySelector(".qg-typebox");
    if (box) box.hidden = true;
    var choices = card.querySelectorAll(".qg-choice");
    for (var i = 0; i < choices.length; i++) {
      choices[i].disabled = true;
      choices[i].setAttribute("aria-pressed", String(choices[i].getAttribute("data-choice") === given));
    }
    var judge = readJudge(card);
    if (judge && kind.shown && root.QuizgenJudge) judge = kind.shown(card, id, judge);
    var result = document.querySelector(".qg-result");
    if (!result || result.getAttribute("data-ok")) return; // not parsed yet, or already judged
    if (given === null || String(given).trim() === "") {
      result.setAttribute("data-ok", "none");
      result.textContent = choices.length || picked ? "You did not choose." : "You did not type an answer.";
      return;
    }
    if (!judge || !root.QuizgenJudge || !kind.verdict) return;
    var verdict = kind.verdict(given, judge);
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
    if (!verdict.ok && kind.wrong) kind.wrong(card, verdict);
  }

  function mount() {
    var card = document.querySelector(".qg-card");
    if (!card) return;
    var id = card.getAttribute("data-id") || "";
    if (document.querySelector(".qg-back-side")) mountBack(card, id);
    else mountFront(card, id);
  }

  function kind(name, own) {
    kinds[name] = own;
  }

  root.QuizgenAnki = {
    mount: mount, kind: kind, save: save, load: load, write: write, readJudge: readJudge, reveal: reveal
  };
})(typeof window !== "undefined" ? window : this);
