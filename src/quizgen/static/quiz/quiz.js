/* quizgen quiz pages: quiz and review modes over the cards rendered into the page.
 * Every card's content is in the HTML already, escaped by the templates: this script shows, hides and
 * moves elements and writes plain text with textContent, never HTML. It asks the network for nothing. */
(function () {
  "use strict";

  var J = window.QuizgenJudge, F = window.QuizgenFSRS, P = window.QuizgenProgress;
  // Like Anki: a (re)learning step due within this long is shown now rather than after the session.
  var LEARN_AHEAD = 20 * F.MINUTE;
  var RATINGS = ["Again", "Hard", "Good", "Easy"];

  var data = JSON.parse(document.getElementById("quiz-data").textContent);
  var store = new P.Store(localStorageOrNull());
  var scheduler = new F.Scheduler();

  function localStorageOrNull() {
    try { return window.localStorage; } catch (e) { return null; } // file:// with storage disabled throws
  }
  function $(selector, within) { return (within || document).querySelector(selector); }
  function $$(selector, within) { return Array.prototype.slice.call((within || document).querySelectorAll(selector)); }
  function now() { return Date.now(); }
  function plural(n, one, many) { return n + " " + (n === 1 ? one : many || one + "s"); }
  function text(el) { return el ? el.textContent.replace(/\s+/g, " ").trim() : ""; }

  /* ---- page-wide: colour scheme, notices, announcements, progress import and export ---- */

  function followColorScheme() {
    // The page colours follow prefers-color-scheme in CSS; Pygments' dark palette hangs off `.dark`.
    var query = window.matchMedia ? window.matchMedia("(prefers-color-scheme: dark)") : null;
    function apply() { document.documentElement.classList.toggle("dark", !!(query && query.matches)); }
    apply();
    if (query && query.addEventListener) query.addEventListener("change", apply);
  }

  function notice(message) {
    var p = document.createElement("p");
    p.className = "notice";
    var words = document.createElement("span");
    words.textContent = message;
    var dismiss = document.createElement("button");
    dismiss.type = "button";
    dismiss.className = "dismiss";
    dismiss.textContent = "Dismiss";
    dismiss.addEventListener("click", function () { p.parentNode.removeChild(p); });
    p.appendChild(words);
    p.appendChild(dismiss);
    $("#notices").appendChild(p);
  }

  function flushNotices() { store.messages.splice(0).forEach(notice); }

  var announceTimer = null;
  function announce(message) {
    var region = $("#announcer");
    region.textContent = "";
    clearTimeout(announceTimer);
    // A fresh text node after a pause makes screen readers speak a repeated message again.
    announceTimer = setTimeout(function () { region.textContent = message; }, 60);
  }

  function initProgressPanel(onImport) {
    $("#export-progress").addEventListener("click", function () {
      var blob = new Blob([store.exportText()], { type: "application/json" });
      var link = document.createElement("a");
      link.href = URL.createObjectURL(blob);
      link.download = "quizgen-progress-" + new Date(now()).toISOString().slice(0, 10) + ".json";
      document.body.appendChild(link);
      link.click();
      document.body.removeChild(link);
      setTimeout(function () { URL.revokeObjectURL(link.href); }, 10000);
      flushNotices();
      announce("Progress exported to " + link.download + ".");
    });
    var input = $("#import-progress");
    input.addEventListener("change", function () {
      var file = input.files && input.files[0];
      if (!file) return;
      var reader = new FileReader();
      reader.onload = function () {
        var outcome = store.importText(String(reader.result));
        notice(onImport(outcome));
        flushNotices();
        input.value = "";
      };
      reader.onerror = function () { notice("Nothing was imported: the file could not be read."); };
      reader.readAsText(file);
    });
  }

  /* ---- times ---- */

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

  /* ---- the index: how much is due in each deck ---- */

  function initIndex() {
    function refresh() {
      var progress = store.load(), t = now();
      data.decks.forEach(function (deck) {
        var due = 0, fresh = 0;
        deck.ids.forEach(function (id) {
          var card = progress.cards[id];
          if (!card) fresh++;
          else if (card.due <= t) due++;
        });
        var line = due + " due, " + fresh + " new";
        var quiz = progress.quizzes[deck.slug];
        if (quiz) line += "; last quiz " + quiz.right + " of " + quiz.total + " right";
        $('[data-due-for="' + deck.slug + '"]').textContent = line;
      });
      flushNotices();
    }
    initProgressPanel(function (outcome) {
      refresh();
      return P.describe(outcome);
    });
    refresh();
  }

  /* ---- a deck page ---- */

  function initDeck() {
    var stage = $("#stage");
    var ui = {
      status: $("#status"), scheduled: $("#scheduled"), next: $("#next"), selfGrade: $("#self-grade"),
      rating: $("#rating"), summary: $("#summary"), caughtUp: $("#caught-up")
    };
    var cards = data.cards.map(function (c) {
      return { id: c.id, kind: c.kind, judge: c.judge, el: document.getElementById("card-" + c.id) };
    });
    var byId = {};
    cards.forEach(function (card) { byId[card.id] = card; });
    var session = { mode: null, card: null, answered: false, correct: null, quiz: null };
    var puzzles = window.QuizgenOrder.attach(stage, announce);

    function cardOf(el) {
      var article = el.closest("article.card");
      return article ? byId[article.getAttribute("data-card")] : null;
    }

    function hideEverything() {
      cards.forEach(function (card) { card.el.hidden = true; });
      [ui.next, ui.selfGrade, ui.rating, ui.summary, ui.caughtUp].forEach(function (el) { el.hidden = true; });
    }

    function present(card, focus) {
      hideEverything();
      resetCard(card);
      card.el.hidden = false;
      session.card = card;
      session.answered = false;
      session.correct = null;
      if (focus) $(".card-title", card.el).focus();
    }

    function resetCard(card) {
      var el = card.el;
      el.classList.remove("answered", "right", "wrong");
      $(".result", el).hidden = true;
      $$("button", el).forEach(function (b) { b.disabled = false; b.removeAttribute("aria-pressed"); });
      if (card.kind === "value") {
        var input = $(".answer-input", el);
        input.value = "";
        input.readOnly = false;
      } else if (card.kind === "basic") {
        $(".reveal", el).hidden = false;
      } else if (card.kind === "order") {
        puzzles.reset(el);
      }
    }

    function lock(card) {
      card.el.classList.add("answered");
      $$(".choices button, .answer-form button, .toggle, .check-order, .reveal", card.el)
        .forEach(function (b) { b.disabled = true; });
      var input = $(".answer-input", card.el);
      if (input) input.readOnly = true;
      if (card.kind === "order") puzzles.lock(card.el);
    }

    /* The learner answered (or revealed a basic card): show the result, then what comes next. */
    function finish(card, ok, reason) {
      if (session.card !== card || session.answered) return;
      session.answered = true;
      session.correct = ok;
      lock(card);
      var el = card.el;
      if (ok !== null) el.classList.add(ok ? "right" : "wrong");
      $(".outcome", el).textContent = ok === null ? "Answer" : ok ? "Right" : "Not right";
      var because = $(".reason", el);
      because.textContent = reason ? reason.charAt(0).toUpperCase() + reason.slice(1) + "." : "";
      because.hidden = !reason;
      $(".result", el).hidden = false;
      var verdict = ok === null ? "" : ok ? "Right. " : "Not right. ";
      announce(verdict + (reason ? because.textContent + " " : "") + text($(".answer", el) || $(".back", el)));
      if (session.mode === "review") return showRating(card, ok);
      if (ok === null) {
        ui.selfGrade.hidden = false;
        $("button", ui.selfGrade).focus();
        return;
      }
      recordQuiz(card, ok);
    }

    /* ---- quiz mode ---- */

    function startQuiz(focus) {
      session.quiz = { index: 0, results: [] };
      showQuizCard(focus);
    }

    function showQuizCard(focus) {
      var quiz = session.quiz;
      if (quiz.index >= cards.length) return finishQuiz();
      var right = quiz.results.filter(function (r) { return r.ok; }).length;
      ui.status.textContent = "Quiz: card " + (quiz.index + 1) + " of " + cards.length + ", " + right + " right so far.";
      present(cards[quiz.index], focus);
    }

    function recordQuiz(card, ok) {
      session.quiz.results.push({ card: card, ok: ok });
      ui.selfGrade.hidden = true;
      ui.next.textContent = session.quiz.index + 1 < cards.length ? "Next card" : "See your score";
      ui.next.hidden = false;
      ui.next.focus();
    }

    function finishQuiz() {
      hideEverything();
      session.card = null;
      var results = session.quiz.results;
      var right = results.filter(function (r) { return r.ok; }).length;
      var score = "You got " + right + " of " + results.length + " right.";
      $("#score").textContent = score;
      var missed = $("#missed");
      missed.textContent = "";
      results.forEach(function (r) {
        if (r.ok) return;
        var li = document.createElement("li");
        var prompt = text($(".prompt", r.card.el));
        li.textContent = "Missed: " + (prompt.length > 120 ? prompt.slice(0, 117) + "…" : prompt);
        missed.appendChild(li);
      });
      store.putQuiz(data.deck.slug, { right: right, total: results.length, at: now() });
      flushNotices();
      ui.status.textContent = "Quiz finished.";
      ui.summary.hidden = false;
      ui.summary.focus();
      announce("Quiz finished. " + score);
    }

    /* ---- review mode: FSRS scheduling ---- */

    function queue(t) {
      var progress = store.load(), due = [], fresh = [];
      cards.forEach(function (card) {
        var s = progress.cards[card.id];
        if (!s) fresh.push(card);
        else if (s.due <= t || (s.state !== F.REVIEW && s.due <= t + LEARN_AHEAD)) due.push({ card: card, due: s.due });
      });
      due.sort(function (a, b) { return a.due - b.due; });
      return { due: due.map(function (d) { return d.card; }), fresh: fresh, progress: progress };
    }

    function nextReview(focus) {
      var t = now(), q = queue(t);
      flushNotices();
      var card = q.due[0] || q.fresh[0];
      if (!card) return caughtUp(q.progress, t, focus);
      ui.status.textContent = "Review: " + q.due.length + " due, " + q.fresh.length + " new. This card is " +
        (q.due.length ? "due." : "new.");
      present(card, focus);
    }

    function caughtUp(progress, t, focus) {
      hideEverything();
      session.card = null;
      session.answered = false;
      var next = null;
      cards.forEach(function (card) {
        var s = progress.cards[card.id];
        if (s && (next === null || s.due < next)) next = s.due;
      });
      $("#next-due").textContent = next === null ? "This deck has no cards." :
        "The next card is due " + longDuration(next - t) + ", on " + when(next) + ".";
      ui.status.textContent = "Review: nothing is due.";
      ui.caughtUp.hidden = false;
      if (focus) ui.caughtUp.focus();
    }

    function showRating(card, ok) {
      var t = now();
      var current = store.load().cards[card.id] || F.newCard(t);
      scheduler.preview(current, t).forEach(function (option) {
        var button = $('[data-rating="' + option.rating + '"]', ui.rating);
        $(".interval", button).textContent = shortDuration(option.card.due - t);
      });
      ui.rating.hidden = false;
      $('[data-rating="' + (ok === false ? F.AGAIN : F.GOOD) + '"]', ui.rating).focus();
    }

    function rate(rating) {
      var card = session.card;
      if (!card || !session.answered || ui.rating.hidden) return;
      var t = now();
      var old = store.load().cards[card.id] || null;
      var before = old || F.newCard(t);
      var after = scheduler.review(before, rating, t);
      after.reps = (old ? old.reps : 0) + 1;
      after.lapses = (old ? old.lapses : 0) + (rating === F.AGAIN && before.state === F.REVIEW ? 1 : 0);
      store.putCard(card.id, after);
      var message = "Rated " + RATINGS[rating - 1] + ". This card is next due " + longDuration(after.due - t) +
        ", on " + when(after.due) + ".";
      ui.scheduled.textContent = message;
      ui.scheduled.hidden = false;
      announce(message);
      nextReview(true);
    }

    /* ---- answering each kind ---- */

    function reveal(card) {
      $(".reveal", card.el).hidden = true;
      finish(card, null, "");
    }

    function checkOrder(card) {
      var positions = puzzles.positions(card.el);
      var verdict = J.judgeOrderItems(positions, card.judge);
      var needed = card.judge.orders.length ? card.judge.orders[0].length : 0;
      var reason = verdict.reason;
      if (!verdict.ok && !reason && positions.length !== needed) {
        reason = "the block has " + plural(positions.length, "line") + "; it needs " + needed;
      }
      finish(card, verdict.ok, reason);
    }

    stage.addEventListener("submit", function (e) {
      e.preventDefault();
      var card = cardOf(e.target);
      var verdict = J.judgeValue($(".answer-input", card.el).value, card.judge.answer, card.judge.tolerance);
      finish(card, verdict.ok, verdict.reason);
    });

    stage.addEventListener("click", function (e) {
      var button = e.target.closest("button");
      if (!button || button.disabled) return;
      var card = cardOf(button);
      if (!card || card !== session.card) return;
      if (button.hasAttribute("data-verdict")) {
        button.setAttribute("aria-pressed", "true");
        var said = button.getAttribute("data-verdict") === "true";
        finish(card, said === card.judge.verdict, "you said " + (said ? "true" : "false"));
      } else if (button.classList.contains("reveal")) {
        reveal(card);
      } else if (button.classList.contains("check-order")) {
        checkOrder(card);
      }
    });

    /* ---- controls, keys, modes ---- */

    ui.next.addEventListener("click", function () {
      session.quiz.index++;
      showQuizCard(true);
    });

    ui.selfGrade.addEventListener("click", function (e) {
      var button = e.target.closest("button");
      if (button && session.answered) recordQuiz(session.card, button.getAttribute("data-knew") === "true");
    });

    ui.rating.addEventListener("click", function (e) {
      var button = e.target.closest("[data-rating]");
      if (button) rate(Number(button.getAttribute("data-rating")));
    });

    $("#restart").addEventListener("click", function () { startQuiz(true); });

    document.addEventListener("keydown", function (e) {
      if (e.defaultPrevented || e.altKey || e.ctrlKey || e.metaKey || e.repeat) return;
      var target = e.target, tag = target.tagName;
      if (/^(INPUT|TEXTAREA|SELECT)$/.test(tag) || target.isContentEditable || target.closest(".line")) return;
      var card = session.card;
      if (e.key === " " && tag !== "BUTTON" && tag !== "A" && card && !card.el.hidden &&
          card.kind === "basic" && !session.answered) {
        e.preventDefault();
        reveal(card);
      } else if (/^[1-4]$/.test(e.key) && !ui.rating.hidden) {
        e.preventDefault();
        rate(Number(e.key));
      }
    });

    function setMode(mode, focus) {
      session.mode = mode;
      $$(".modes [data-mode]").forEach(function (b) {
        b.setAttribute("aria-pressed", String(b.getAttribute("data-mode") === mode));
      });
      if (window.history && window.history.replaceState) window.history.replaceState(null, "", "#" + mode);
      ui.scheduled.hidden = true;
      if (mode === "review") nextReview(focus); else startQuiz(focus);
    }

    $$("[data-mode]").forEach(function (b) {
      b.addEventListener("click", function () { setMode(b.getAttribute("data-mode"), true); });
    });

    initProgressPanel(function (outcome) {
      // A review in progress keeps its card; otherwise the queue is worked out again from what came in.
      if (outcome.ok && session.mode === "review" && !session.answered) nextReview(false);
      return P.describe(outcome, outcome.ids.filter(function (id) { return byId[id]; }).length);
    });

    setMode(window.location.hash === "#review" ? "review" : "quiz", false);
  }

  followColorScheme();
  store.load(); // check what is stored now, so a corrupt value is reported whichever mode the page opens in
  if (data.page === "deck") initDeck(); else initIndex();
  flushNotices();
})();
