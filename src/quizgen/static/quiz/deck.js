/* quizgen deck pages: shows one card at a time, hands the learner's answer to the card's kind
 * (kinds/<kind>.js registers itself in QuizgenKinds) and the result to the mode (quiz-mode.js or
 * review-mode.js). Every card's content is in the page already, escaped by the templates (each card's
 * HTML held as a JSON string until it is first shown): this script shows, hides and moves elements and
 * writes plain text with textContent; the only HTML it parses is the build's own, for a card's first
 * showing. */
(function (root) {
  "use strict";

  var D = root.QuizgenDom || require("./dom.js");
  var P = root.QuizgenProgress || require("./progress.js");
  var S = root.QuizgenState || require("./state.js");
  var $ = D.$, $$ = D.$$;
  var MODES = {
    quiz: (root.QuizgenQuizMode || require("./quiz-mode.js")).mode,
    review: (root.QuizgenReviewMode || require("./review-mode.js")).mode
  };
  var NOTHING = {}; // the hooks of a kind without a script of its own: none

  function kinds() { return root.QuizgenKinds || {}; }
  function kindOf(card) { return kinds()[card.kind] || NOTHING; }

  /* A deck page: its cards, its controls, the state (QuizgenState) and each mode's own (deck.quiz). */
  function Deck(data, store, scheduler) {
    this.data = data;
    this.store = store;
    this.scheduler = scheduler;
    this.stage = $("#stage");
    this.ui = {
      status: $("#status"), scheduled: $("#scheduled"), next: $("#next"), selfGrade: $("#self-grade"),
      rating: $("#rating"), summary: $("#summary"), caughtUp: $("#caught-up")
    };
    this.live = []; // the cards put on the stage so far
    this.cards = data.cards.map(function (c) { return lazyCard(c, this); }, this);
    this.byId = {};
    this.cards.forEach(function (card) { this.byId[card.id] = card; }, this);
    this.session = S.create();
    this.quiz = null;
  }

  /* A card whose element (`el`) is made from its HTML the first time anything asks for it. */
  function lazyCard(c, deck) {
    var card = { id: c.id, kind: c.kind, judge: c.judge }, el = null;
    Object.defineProperty(card, "el", {
      enumerable: true,
      get: function () {
        if (!el) {
          el = instantiate(c.id, deck.stage);
          deck.live.push(card);
        }
        return el;
      }
    });
    return card;
  }

  var held = null; // card id -> the card's HTML as the build wrote it into the page (read at the first card)

  function heldHtml(id) {
    if (held === null) {
      var data = document.getElementById("card-html");
      held = data ? JSON.parse(data.textContent) : {};
    }
    return Object.prototype.hasOwnProperty.call(held, id) ? held[id] : null;
  }

  /* The card's article into the stage: from the HTML the build wrote for it, else from its <template> (a
   * deck.html override of an older quizgen), else as it is in the page. */
  function instantiate(id, stage) {
    var html = heldHtml(id), template = document.getElementById("template-" + id);
    if (html !== null) {
      template = document.createElement("template");
      template.innerHTML = html; // the build's own escaped HTML, parsed as the page would have parsed it
    }
    if (!template) return document.getElementById("card-" + id);
    var article = template.content.querySelector("article.card");
    stage.appendChild(document.importNode(article || template.content, true)); // a card.html override may differ
    return document.getElementById("card-" + id);
  }

  Deck.prototype.cardOf = function (el) {
    var article = el.closest("article.card");
    return article ? this.byId[article.getAttribute("data-card")] : null;
  };

  Deck.prototype.hideAll = function () {
    var ui = this.ui;
    this.live.forEach(function (card) { card.el.hidden = true; }); // only these were ever shown
    [ui.next, ui.selfGrade, ui.rating, ui.summary, ui.caughtUp].forEach(function (el) { el.hidden = true; });
  };

  /* No card: a summary takes the stage. */
  Deck.prototype.clear = function () {
    this.hideAll();
    this.session = S.clear(this.session);
  };

  Deck.prototype.present = function (card, focus) {
    this.hideAll();
    reset(card);
    card.el.hidden = false;
    this.session = S.show(this.session, card);
    if (focus) $(".card-title", card.el).focus();
  };

  /* The learner answered (ok true or false) or revealed (ok null) `card`: show the result, then the mode
   * says what comes next. An answer to a card that is not shown, or a second answer, does nothing. */
  Deck.prototype.finish = function (card, ok, reason) {
    var answered = S.answer(this.session, card, ok);
    if (!answered) return;
    this.session = answered;
    card.el.classList.remove("retrying");
    card.el.classList.add("answered");
    (kindOf(card).lock || noop)(card, this);
    showResult(card, ok, reason);
    MODES[this.session.mode].answered(this, card, ok);
  };

  /* A wrong answer to `card` that the learner may try again (`left` says how many tries remain, in
   * words): show why, keep the answer, explanation and proof hidden, and let the mode offer a way on. */
  Deck.prototype.retry = function (card, reason, left) {
    if (this.session.card !== card || this.session.answered) return;
    card.el.classList.add("retrying");
    showResult(card, false, reason, left);
    (MODES[this.session.mode].retrying || noop)(this, card);
  };

  function noop() {}

  function reset(card) {
    var el = card.el;
    el.classList.remove("answered", "right", "wrong", "retrying");
    $(".result", el).hidden = true;
    $$("button", el).forEach(function (b) { b.disabled = false; b.removeAttribute("aria-pressed"); });
    (kindOf(card).reset || noop)(card);
  }

  /* The result, announced with the answer (or, while the learner may try again, with `left`). */
  function showResult(card, ok, reason, left) {
    var el = card.el, because = $(".reason", el), answer = D.text($(".answer", el) || $(".back", el));
    if (!left && S.sentence(reason) === answer) reason = ""; // "the answer is True": the answer says it below
    el.classList.remove("right", "wrong");
    if (ok !== null) el.classList.add(ok ? "right" : "wrong");
    $(".outcome", el).textContent = S.outcome(ok);
    D.inline(because, S.sentence(reason));
    because.hidden = !reason;
    $(".result", el).hidden = false;
    D.announce(S.announcement(ok, reason ? D.plain(reason) : "", left || answer)); // no backticks read out
  }

  /* ---- events: answers go to the card's kind, keys to the kind and then the mode ---- */

  function wireAnswers(deck) {
    deck.stage.addEventListener("submit", function (e) {
      e.preventDefault();
      var card = deck.cardOf(e.target);
      if (card) (kindOf(card).submit || noop)(card, deck);
    });
    deck.stage.addEventListener("click", function (e) {
      var button = e.target.closest("button");
      if (!button || button.disabled) return;
      var card = deck.cardOf(button);
      if (card && card === deck.session.card) (kindOf(card).click || noop)(card, button, deck);
    });
  }

  /* Whether a key press belongs to what has focus: a text field, or a kind's own widget. */
  function typing(target) {
    if (/^(INPUT|TEXTAREA|SELECT)$/.test(target.tagName) || target.isContentEditable) return true;
    var all = kinds();
    return Object.keys(all).some(function (name) { return all[name].owns && all[name].owns(target); });
  }

  function onKey(deck, e) {
    if (e.defaultPrevented || e.altKey || e.ctrlKey || e.metaKey || e.repeat || typing(e.target)) return;
    var card = deck.session.card, kind = card ? kindOf(card) : NOTHING, mode = MODES[deck.session.mode];
    if ((kind.key && kind.key(card, e, deck)) || (mode.key && mode.key(deck, e))) e.preventDefault();
  }

  /* Switch to `mode`; `id` (quiz mode) names a card to open at, from a link to it (#card-ID). */
  function setMode(deck, mode, focus, id) {
    deck.session = S.setMode(deck.session, mode);
    $$(".modes [data-mode]").forEach(function (b) {
      b.setAttribute("aria-pressed", String(b.getAttribute("data-mode") === mode));
    });
    var hash = id ? "#card-" + id : "#" + mode;
    if (window.history && window.history.replaceState) window.history.replaceState(null, "", hash);
    deck.ui.scheduled.hidden = true;
    MODES[mode].start(deck, focus, id);
  }

  /* The deck's card a #fragment links to, else null. */
  function linked(deck, hash) {
    var id = S.linkedCard(hash);
    return id && Object.prototype.hasOwnProperty.call(deck.byId, id) ? id : null;
  }

  /* A #fragment from the address: a card's link opens it in quiz mode; #review and #quiz pick the mode. */
  function route(deck, hash, focus) {
    var id = linked(deck, hash);
    setMode(deck, id ? "quiz" : S.initialMode(hash), focus, id);
  }

  /* Start a deck page; returns what the progress panel calls with an import's outcome, for its message. */
  function init(data, store, scheduler) {
    var deck = new Deck(data, store, scheduler), all = kinds();
    Object.keys(all).forEach(function (name) { if (all[name].attach) all[name].attach(deck); });
    wireAnswers(deck);
    MODES.quiz.wire(deck);
    MODES.review.wire(deck);
    document.addEventListener("keydown", function (e) { onKey(deck, e); });
    $$("[data-mode]").forEach(function (b) {
      b.addEventListener("click", function () { setMode(deck, b.getAttribute("data-mode"), true); });
    });
    route(deck, window.location.hash, false);
    window.addEventListener("hashchange", function () { route(deck, window.location.hash, true); });
    return function (outcome) {
      var mode = MODES[deck.session.mode];
      if (mode.imported) mode.imported(deck, outcome);
      return P.describe(outcome, outcome.ids.filter(function (id) { return deck.byId[id]; }).length);
    };
  }

  var api = { init: init, Deck: Deck };
  if (typeof module !== "undefined" && module.exports) module.exports = api;
  root.QuizgenDeck = api;
})(typeof window !== "undefined" ? window : this);
