/* quizgen review mode: spaced repetition with fsrs.js. First pure functions (which cards are due, what a
 * rating does to a card, times in words), then the page side (`mode`, driven by deck.js), which touches the
 * page only when called, so node loads this file. Times are epoch milliseconds. */
(function (root) {
  "use strict";

  var F = root.QuizgenFSRS || require("./fsrs.js");
  var D = root.QuizgenDom || require("./dom.js");
  var $ = D.$, plural = D.plural;
  // Like Anki: a (re)learning step due within this long is shown now rather than after the session.
  var LEARN_AHEAD = 20 * F.MINUTE;
  var RATINGS = ["Again", "Hard", "Good", "Easy"];

  /* The cards to review at `t`, as ids: those due now (soonest first), new ones, and learning steps due
   * within LEARN_AHEAD (soonest first), which are shown early only when nothing else is left. */
  function queue(ids, progress, t) {
    var due = [], fresh = [], ahead = [];
    ids.forEach(function (id) {
      var s = progress.cards[id];
      if (!s) fresh.push(id);
      else if (s.due <= t) due.push({ id: id, due: s.due });
      else if (s.state !== F.REVIEW && s.due <= t + LEARN_AHEAD) ahead.push({ id: id, due: s.due });
    });
    function byDue(a, b) { return a.due - b.due; }
    function idOf(d) { return d.id; }
    return { due: due.sort(byDue).map(idOf), fresh: fresh, ahead: ahead.sort(byDue).map(idOf) };
  }

  /* The card a queue shows first: one due now, else a new one, else a learning step a little early. */
  function first(q) { return q.due[0] || q.fresh[0] || (q.ahead || [])[0] || null; }

  /* The status line over the card `first(q)` shows; `dueAt` is that card's due time when it is early. */
  function status(q, dueAt, t) {
    var head = "Review: " + q.due.length + " due, " + q.fresh.length + " new. ";
    if (q.due.length) return head + "This card is due.";
    if (q.fresh.length) return head + "This card is new.";
    return head + "This card is due " + longDuration(dueAt - t) + "; it is shown early because nothing else is due.";
  }

  /* When the first of `ids` that was ever reviewed is due next; null when none was. */
  function nextDue(ids, progress) {
    var next = null;
    ids.forEach(function (id) {
      var s = progress.cards[id];
      if (s && (next === null || s.due < next)) next = s.due;
    });
    return next;
  }

  function caughtUpText(next, t) {
    if (next === null) return "This deck has no cards.";
    return "The next card is due " + longDuration(next - t) + ", on " + when(next) + ".";
  }

  /* How many of a deck's cards are due at `t`, and how many were never reviewed (the index shows them). */
  function deckLine(ids, progress, quiz, t) {
    var due = 0, fresh = 0;
    ids.forEach(function (id) {
      var card = progress.cards[id];
      if (!card) fresh++;
      else if (card.due <= t) due++;
    });
    var line = due + " due, " + fresh + " new";
    if (quiz) line += "; last quiz " + quiz.right + " of " + quiz.total + " right";
    return line;
  }

  function shortDuration(ms) {
    var minutes = Math.round(ms / F.MINUTE);
    if (minutes < 1) return "<1 min";
    if (minutes < 60) return minutes + " min";
    var hours = Math.round(ms / (60 * F.MINUTE));
    if (hours < 24) return hours + " h";
    var days = Math.round(ms / F.DAY);
    if (days < 100) return days + " d";
    if (days < 365) return Math.round(days / 30) + " mo";
    return (days / 365).toFixed(1) + " y";
  }

  function longDuration(ms) {
    var minutes = Math.round(ms / F.MINUTE);
    if (minutes < 1) return "in less than a minute";
    if (minutes < 60) return "in " + plural(minutes, "minute");
    var hours = Math.round(ms / (60 * F.MINUTE));
    if (hours < 24) return "in " + plural(hours, "hour");
    return "in " + plural(Math.round(ms / F.DAY), "day");
  }

  function when(t) {
    return new Date(t).toLocaleString(undefined, {
      weekday: "short", year: "numeric", month: "short", day: "numeric", hour: "2-digit", minute: "2-digit"
    });
  }

  /* The interval each rating would give `stored` (a progress entry, or null for a new card) at `t`. */
  function intervals(scheduler, stored, t) {
    return scheduler.preview(stored || F.newCard(t), t).map(function (option) {
      return { rating: option.rating, interval: shortDuration(option.card.due - t) };
    });
  }

  /* The progress entry after rating `stored` (null for a new card) at `t`, with review and lapse counts. */
  function rated(scheduler, stored, rating, t) {
    var before = stored || F.newCard(t);
    var after = scheduler.review(before, rating, t);
    after.reps = (stored ? stored.reps : 0) + 1;
    after.lapses = (stored ? stored.lapses : 0) + (rating === F.AGAIN && before.state === F.REVIEW ? 1 : 0);
    return after;
  }

  function ratedMessage(rating, after, t) {
    return "Rated " + RATINGS[rating - 1] + ". This card is next due " + longDuration(after.due - t) +
      ", on " + when(after.due) + ".";
  }

  /* The rating that gets focus after an answer: Again when it was wrong, else Good. */
  function suggested(ok) { return ok === false ? F.AGAIN : F.GOOD; }

  /* ---- the page: `deck` is deck.js's Deck ---- */

  function ids(deck) { return deck.cards.map(function (card) { return card.id; }); }

  function next(deck, focus) {
    var t = Date.now(), progress = deck.store.load(), q = queue(ids(deck), progress, t);
    D.flushNotices(deck.store);
    var id = first(q);
    clearTimeout(deck.reviewTimer);
    if (!id) return caughtUp(deck, progress, t, focus);
    deck.ui.status.textContent = status(q, progress.cards[id] ? progress.cards[id].due : t, t);
    deck.present(deck.byId[id], focus);
  }

  function caughtUp(deck, progress, t, focus) {
    deck.clear();
    $("#next-due").textContent = caughtUpText(nextDue(ids(deck), progress), t);
    deck.ui.status.textContent = "Review: nothing is due.";
    deck.ui.caughtUp.hidden = false;
    if (focus) deck.ui.caughtUp.focus();
    // A card due later today (a learning step): look again when it is due, so the page does not sit idle.
    var soonest = nextDue(ids(deck), progress);
    if (soonest !== null && soonest - t < F.DAY) {
      deck.reviewTimer = setTimeout(function () {
        if (deck.session.mode === "review" && !deck.session.card) next(deck, false);
      }, Math.max(1000, soonest - t));
    }
  }

  function showRating(deck, card, ok) {
    var t = Date.now(), rating = deck.ui.rating;
    intervals(deck.scheduler, deck.store.load().cards[card.id], t).forEach(function (option) {
      $(".interval", $('[data-rating="' + option.rating + '"]', rating)).textContent = option.interval;
    });
    rating.hidden = false;
    $('[data-rating="' + suggested(ok) + '"]', rating).focus();
  }

  function rate(deck, rating) {
    var card = deck.session.card;
    if (!card || !deck.session.answered || deck.ui.rating.hidden) return;
    var t = Date.now();
    var before = deck.store.load().cards[card.id] || null;
    var after = rated(deck.scheduler, before, rating, t);
    deck.store.putReview(card.id, after, [t, card.id, rating, before ? before.state : 0]);
    if (root.QuizgenStats) root.QuizgenStats.changed(); // the statistics redraw
    var message = ratedMessage(rating, after, t);
    deck.ui.scheduled.textContent = message;
    deck.ui.scheduled.hidden = false;
    D.announce(message);
    next(deck, true);
  }

  function wire(deck) {
    deck.ui.rating.addEventListener("click", function (e) {
      var button = e.target.closest("[data-rating]");
      if (button) rate(deck, Number(button.getAttribute("data-rating")));
    });
  }

  /* Keys 1 to 4 rate, while the ratings are shown; true when the key was used. */
  function key(deck, e) {
    if (!/^[1-4]$/.test(e.key) || deck.ui.rating.hidden) return false;
    rate(deck, Number(e.key));
    return true;
  }

  /* Progress came in from a file: unless a card is being answered, work the queue out again. */
  function imported(deck, outcome) {
    if (outcome.ok && !deck.session.answered) next(deck, false);
  }

  var api = {
    LEARN_AHEAD: LEARN_AHEAD, queue: queue, first: first, status: status, nextDue: nextDue, caughtUpText: caughtUpText,
    deckLine: deckLine, shortDuration: shortDuration, longDuration: longDuration, when: when,
    intervals: intervals, rated: rated, ratedMessage: ratedMessage, suggested: suggested,
    mode: { start: next, answered: showRating, wire: wire, key: key, imported: imported }
  };
  if (typeof module !== "undefined" && module.exports) module.exports = api;
  root.QuizgenReviewMode = api;
})(typeof window !== "undefined" ? window : this);
