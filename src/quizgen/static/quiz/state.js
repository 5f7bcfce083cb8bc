/* quizgen quiz state: what a deck page is doing, as a plain value {mode, card, answered, correct}, and the
 * words a result is told in. Pure functions (every change returns a new state); node loads this file. */
(function (root) {
  "use strict";

  function update(state, changes) {
    var out = {}, key;
    for (key in state) if (Object.prototype.hasOwnProperty.call(state, key)) out[key] = state[key];
    for (key in changes) if (Object.prototype.hasOwnProperty.call(changes, key)) out[key] = changes[key];
    return out;
  }

  /* A page before its first card: no mode yet, nothing shown. */
  function create() { return { mode: null, card: null, answered: false, correct: null }; }

  /* The mode a page opens in, from its address's #fragment. */
  function initialMode(hash) { return hash === "#review" ? "review" : "quiz"; }

  /* The card a #fragment links to (`#card-ID`, or `#ID` that names no mode), else null; the page checks
   * that the deck has it. */
  function linkedCard(hash) {
    var m = /^#(?:card-)?([a-z0-9]+(?:-[a-z0-9]+)*)$/.exec(hash || "");
    if (!m || hash === "#quiz" || hash === "#review") return null;
    return m[1];
  }

  function setMode(state, mode) { return update(state, { mode: mode }); }

  /* `card` is shown, not answered yet. */
  function show(state, card) { return update(state, { card: card, answered: false, correct: null }); }

  /* No card is shown (a summary is). */
  function clear(state) { return update(state, { card: null, answered: false }); }

  /* The learner answered `card` (ok: true, false, or null for a card that is only revealed); null when
   * `card` is not the one shown or was answered already, so a second answer changes nothing. */
  function answer(state, card, ok) {
    if (state.card !== card || state.answered) return null;
    return update(state, { answered: true, correct: ok });
  }

  /* The heading of a result. */
  function outcome(ok) { return ok === null ? "Answer" : ok ? "Right" : "Not right"; }

  /* A reason ("you said true") as a sentence ("You said true."); "" for none. */
  var ENDED = /[.!?]["'`)\]]*$/; // a text that ends its sentence already (an exception's message)

  /* A reason as a sentence: capitalised, with a period unless it has one ("...`inference_mode()`." once). */
  function sentence(reason) {
    if (!reason) return "";
    var text = reason.charAt(0).toUpperCase() + reason.slice(1);
    return ENDED.test(text) ? text : text + ".";
  }

  /* What a screen reader hears after an answer: the verdict, the reason, then the answer itself. */
  function announcement(ok, reason, answerText) {
    var verdict = ok === null ? "" : ok ? "Right. " : "Not right. ";
    return verdict + (reason ? sentence(reason) + " " : "") + answerText;
  }

  var api = {
    create: create, initialMode: initialMode, linkedCard: linkedCard, setMode: setMode, show: show, clear: clear, answer: answer,
    outcome: outcome, sentence: sentence, announcement: announcement
  };
  if (typeof module !== "undefined" && module.exports) module.exports = api;
  root.QuizgenState = api;
})(typeof window !== "undefined" ? window : this);
