/* quizgen quiz mode: go through a deck once, in order, and score it. First pure functions on the quiz's
 * progress {index, results: [{id, ok}]}, then the page side (`mode`, driven by deck.js), which touches the
 * page only when called, so node loads this file. */
(function (root) {
  "use strict";

  var D = root.QuizgenDom || require("./dom.js");
  var $ = D.$;

  /* A new run over `n` cards: in the deck's order, or (`shuffled`) in a new random one (`random`, for
   * tests, stands in for Math.random). `order` maps the run's step to the card's place on the page. */
  function start(n, shuffled, random) {
    var quiz = { index: 0, results: [], order: null };
    if (!shuffled) return quiz;
    var order = [], rnd = random || Math.random;
    for (var i = 0; i < n; i++) order.push(i);
    for (var j = n - 1; j > 0; j--) {
      var k = Math.floor(rnd() * (j + 1)), t = order[j];
      order[j] = order[k]; order[k] = t;
    }
    quiz.order = order;
    return quiz;
  }
  /* The run started at the card in page place `at` (a link to one card): in order, from there; shuffled,
   * with that card first. */
  function startAt(quiz, at) {
    if (!quiz.order) return { index: at, results: [], order: null };
    return { index: 0, results: [], order: [at].concat(quiz.order.filter(function (k) { return k !== at; })) };
  }
  function advance(quiz) { return { index: quiz.index + 1, results: quiz.results, order: quiz.order }; }
  function record(quiz, id, ok) {
    return { index: quiz.index, results: quiz.results.concat([{ id: id, ok: ok }]), order: quiz.order };
  }
  /* The page's place of the card the run is at. */
  function position(quiz) { return quiz.order ? quiz.order[quiz.index] : quiz.index; }
  function done(quiz, total) { return quiz.index >= total; }
  function right(quiz) { return quiz.results.filter(function (r) { return r.ok; }).length; }
  function missed(quiz) { return quiz.results.filter(function (r) { return !r.ok; }).map(function (r) { return r.id; }); }

  function status(quiz, total) {
    return "Quiz: card " + (quiz.index + 1) + " of " + total + ", " + right(quiz) + " right so far.";
  }

  /* The button after an answer: on to the next card, or to the score after the last. */
  function nextLabel(quiz, total) { return quiz.index + 1 < total ? "Next card" : "See your score"; }

  function score(quiz) { return "You got " + right(quiz) + " of " + quiz.results.length + " right."; }

  /* A missed card in the summary, by its prompt (long prompts cut short). */
  function missedLine(prompt) { return "Missed: " + (prompt.length > 120 ? prompt.slice(0, 117) + "…" : prompt); }

  /* What is kept of a finished quiz (the index page shows it). */
  function summary(quiz, at) { return { right: right(quiz), total: quiz.results.length, at: at }; }

  /* ---- the page: `deck` is deck.js's Deck ---- */

  /* What a run does, told as a DOM event ("quizgen:started", "quizgen:answered", "quizgen:finished") for
   * a page in an LMS package, whose script reports it (static/lms/scorm.js). */
  function tell(name, detail) {
    if (typeof document !== "undefined" && typeof CustomEvent === "function") {
      document.dispatchEvent(new CustomEvent("quizgen:" + name, { detail: detail }));
    }
  }

  /* The run counts `card` right or not. */
  function scored(deck, card, ok) {
    deck.quiz = record(deck.quiz, card.id, ok);
    var total = deck.cards.length;
    tell("answered", { id: card.id, kind: card.kind, ok: ok, right: right(deck.quiz), answered: deck.quiz.results.length, total: total });
  }

  function show(deck, focus) {
    if (done(deck.quiz, deck.cards.length)) return finish(deck);
    deck.ui.status.textContent = status(deck.quiz, deck.cards.length);
    deck.present(deck.cards[position(deck.quiz)], focus);
  }

  /* A revealed card (ok null) asks whether the learner knew it; anything else is scored at once. */
  function answered(deck, card, ok) {
    if (ok !== null) return keep(deck, card, ok);
    deck.ui.selfGrade.hidden = false;
    $("button", deck.ui.selfGrade).focus();
  }

  function keep(deck, card, ok) {
    var ui = deck.ui;
    scored(deck, card, ok);
    ui.selfGrade.hidden = true;
    ui.next.textContent = nextLabel(deck.quiz, deck.cards.length);
    ui.next.hidden = false;
    ui.next.focus();
  }

  /* A card the learner may try again: "Next card" moves on, and the card counts as missed. */
  function retrying(deck) {
    deck.ui.next.textContent = nextLabel(deck.quiz, deck.cards.length);
    deck.ui.next.hidden = false;
  }

  function finish(deck) {
    deck.clear();
    var quiz = deck.quiz, list = $("#missed");
    $("#score").textContent = score(quiz);
    list.textContent = "";
    missed(quiz).forEach(function (id) {
      var li = document.createElement("li");
      li.textContent = missedLine(D.text($(".prompt", deck.byId[id].el)));
      list.appendChild(li);
    });
    deck.store.putQuiz(deck.data.deck.slug, summary(quiz, Date.now()));
    tell("finished", { right: right(quiz), total: quiz.results.length, missed: missed(quiz) });
    D.flushNotices(deck.store);
    deck.ui.status.textContent = "Quiz finished.";
    deck.ui.summary.hidden = false;
    deck.ui.summary.focus();
    D.announce("Quiz finished. " + score(quiz));
  }

  /* A new run; `id` names the card it opens at (a link to that card), else it starts at the first. */
  function begin(deck, focus, id) {
    deck.quiz = start(deck.cards.length, Boolean(deck.data.deck.shuffle));
    if (id && deck.byId[id]) deck.quiz = startAt(deck.quiz, deck.cards.indexOf(deck.byId[id]));
    tell("started", { total: deck.cards.length });
    show(deck, focus);
  }

  function wire(deck) {
    deck.ui.next.addEventListener("click", function () {
      var card = deck.session.card;
      if (card && !deck.session.answered) scored(deck, card, false); // left while retrying
      deck.quiz = advance(deck.quiz);
      show(deck, true);
    });
    deck.ui.selfGrade.addEventListener("click", function (e) {
      var button = e.target.closest("button");
      if (button && deck.session.answered) keep(deck, deck.session.card, button.getAttribute("data-knew") === "true");
    });
    $("#restart").addEventListener("click", function () { begin(deck, true); });
  }

  var api = {
    start: start, startAt: startAt, advance: advance, record: record, position: position, done: done, right: right, missed: missed, status: status,
    nextLabel: nextLabel, score: score, missedLine: missedLine, summary: summary,
    mode: { start: begin, answered: answered, retrying: retrying, wire: wire }
  };
  if (typeof module !== "undefined" && module.exports) module.exports = api;
  root.QuizgenQuizMode = api;
})(typeof window !== "undefined" ? window : this);
