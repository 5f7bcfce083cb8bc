/* quizgen in an LMS: a deck page packaged as a SCORM SCO (render/scorm.py) reports its quiz runs to the
 * LMS's SCORM run-time: completion, the score and each card as an interaction. The page's data says the
 * version ({lms: {scorm: "1.2" | "2004", passing: 0.8, types: {card key: interaction type}}}); the quiz mode tells what happens as DOM events
 * (quiz-mode.js). The values are made by pure functions (node loads this file); the page side finds the
 * run-time's API object the way SCORM prescribes and calls it. */
(function (root) {
  "use strict";

  var NAMES = { "1.2": "API", "2004": "API_1484_11" };
  var CALLS = {
    "1.2": { start: "LMSInitialize", get: "LMSGetValue", set: "LMSSetValue", commit: "LMSCommit", end: "LMSFinish" },
    "2004": { start: "Initialize", get: "GetValue", set: "SetValue", commit: "Commit", end: "Terminate" }
  };

  /* The interaction type of a card: the build's (`type`, from what an LMS would make of the card:
   * render/question.py), else one that says nothing of it in the version's vocabulary. */
  function interactionType(version, type) {
    return type || (version === "2004" ? "other" : "performance");
  }

  /* [element, value] pairs for one answered card, interaction number `n`; `types` by card key. */
  function answered(version, n, event, types) {
    var at = "cmi.interactions." + n + ".";
    var own = Object.prototype.hasOwnProperty.call(types, event.id) ? types[event.id] : "";
    var pairs = [[at + "id", event.id], [at + "type", interactionType(version, own)]];
    if (version === "2004") {
      pairs.push([at + "result", event.ok ? "correct" : "incorrect"]);
      pairs.push(["cmi.progress_measure", ratio(event.answered, event.total)]);
    } else {
      pairs.push([at + "result", event.ok ? "correct" : "wrong"]);
    }
    return pairs;
  }

  function ratio(a, b) { return String(b ? Math.round((a / b) * 10000) / 10000 : 0); }

  /* [element, value] pairs for a finished run: its score, completed, and passed when at least `passing`
   * of the cards were right. */
  function finished(version, event, passing) {
    var scaled = event.total ? event.right / event.total : 0, passed = scaled >= passing;
    if (version === "2004") {
      return [
        ["cmi.score.min", "0"], ["cmi.score.max", String(event.total)], ["cmi.score.raw", String(event.right)],
        ["cmi.score.scaled", ratio(event.right, event.total)], ["cmi.progress_measure", "1"],
        ["cmi.completion_status", "completed"], ["cmi.success_status", passed ? "passed" : "failed"]
      ];
    }
    return [
      ["cmi.core.score.min", "0"], ["cmi.core.score.max", "100"],
      ["cmi.core.score.raw", String(Math.round(scaled * 100))],
      ["cmi.core.lesson_status", passed ? "passed" : "failed"]
    ];
  }

  /* The time a session took, as the version writes it (1.2: HHHH:MM:SS, 2004: PT#H#M#S). */
  function sessionTime(version, ms) {
    var s = Math.max(0, Math.round(ms / 1000)), h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60);
    s %= 60;
    if (version === "2004") return "PT" + h + "H" + m + "M" + s + "S";
    function two(x) { return (x < 10 ? "0" : "") + x; }
    return (h < 1000 ? ("000" + h).slice(-4) : String(h)) + ":" + two(m) + ":" + two(s);
  }

  /* The run-time's API object: in this window or one of its parents, else in the opener's (SCORM's
   * search, which gives up at a window of another origin). */
  function findApi(win, name) {
    for (var hops = 0; win && hops < 10; hops++) {
      try {
        if (win[name]) return win[name];
      } catch (e) {
        return null;
      }
      if (win.parent === win) break;
      win = win.parent;
    }
    return null;
  }

  /* ---- the page ---- */

  function connect(version, passing, types, api) {
    var calls = CALLS[version], started = Date.now(), ended = false;
    function set(pairs) { pairs.forEach(function (p) { api[calls.set](p[0], p[1]); }); }
    function commit() { api[calls.commit](""); }
    api[calls.start]("");
    var status = version === "2004" ? "cmi.completion_status" : "cmi.core.lesson_status";
    var was = String(api[calls.get](status));
    if (was === "not attempted" || was === "unknown" || was === "") set([[status, "incomplete"]]);
    var count = parseInt(api[calls.get]("cmi.interactions._count"), 10) || 0;
    // The pass mark the LMS holds (from the manifest, or as its course set it) wins over the page's.
    var held = parseFloat(api[calls.get](version === "2004" ? "cmi.scaled_passing_score" : "cmi.student_data.mastery_score"));
    if (!isNaN(held)) passing = version === "2004" ? held : held / 100;
    commit();
    document.addEventListener("quizgen:answered", function (e) {
      set(answered(version, count++, e.detail, types));
      commit();
    });
    document.addEventListener("quizgen:finished", function (e) {
      set(finished(version, e.detail, passing));
      commit();
    });
    function end() {
      if (ended) return;
      ended = true;
      set([[version === "2004" ? "cmi.session_time" : "cmi.core.session_time", sessionTime(version, Date.now() - started)]]);
      commit();
      api[calls.end]("");
    }
    window.addEventListener("pagehide", end);
    window.addEventListener("beforeunload", end);
  }

  function start() {
    var data = JSON.parse(document.getElementById("quiz-data").textContent).lms || {};
    var version = data.scorm, name = NAMES[version];
    if (!name) return;
    var api = findApi(window, name) || (window.opener && findApi(window.opener, name));
    if (!api) {
      var notices = document.getElementById("notices"), p = document.createElement("p");
      p.className = "notice";
      p.textContent = "No LMS is listening (no SCORM " + version + " API found): this run's score is kept in this browser only.";
      if (notices) notices.appendChild(p);
      return;
    }
    connect(version, typeof data.passing === "number" ? data.passing : 0.8, data.types || {}, api);
  }

  var exported = { interactionType: interactionType, answered: answered, finished: finished, sessionTime: sessionTime, findApi: findApi };
  if (typeof module !== "undefined" && module.exports) module.exports = exported;
  root.QuizgenScorm = exported;
  if (typeof document !== "undefined") start();
})(typeof window !== "undefined" ? window : this);
