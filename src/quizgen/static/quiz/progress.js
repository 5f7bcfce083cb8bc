/* quizgen progress: a learner's schedule per card key (a digest of the card's id, which the page never
 * shows), kept in localStorage under one versioned key.
 * Everything read (from storage or an imported file) is validated: a value that is corrupt or belongs
 * to something else is set aside with a message the page shows, never trusted. */
(function (root) {
  "use strict";

  var plural = (root.QuizgenDom || require("./dom.js")).plural;
  var KEY = "quizgen.progress";
  var UNREADABLE_KEY = "quizgen.progress.unreadable";
  var FORMAT = "quizgen-progress";
  var VERSION = 2; // 1 kept cards under their ids; 2 under their keys (read 1, written as 2)
  var ID = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;

  var MAX_LOG = 100000; // reviews kept for the statistics, the newest (about 3 MB at most)

  /* SHA-256 of a string's UTF-8 bytes, in hex: a card's key is its first 12 digits over "quizgen card\0"
   * and the id (render/view.py's card_key), made here only to move version 1's ids to their keys. */
  function sha256(text) {
    var primes = [], k = [], h = [], n = 2, i, j;
    while (primes.length < 64) {
      if (primes.every(function (p) { return n % p; })) primes.push(n);
      n++;
    }
    function frac(x) { return ((x - Math.floor(x)) * 4294967296) | 0; }
    function ror(x, r) { return (x >>> r) | (x << (32 - r)); }
    primes.forEach(function (p, at) { k[at] = frac(Math.cbrt(p)); if (at < 8) h[at] = frac(Math.sqrt(p)); });
    var data = new TextEncoder().encode(text), len = data.length;
    var words = new Array((((len + 8) >> 6) + 1) * 16).fill(0); // whole 64-byte blocks, padding included
    for (i = 0; i < len; i++) words[i >> 2] |= data[i] << (24 - (i % 4) * 8);
    words[len >> 2] |= 0x80 << (24 - (len % 4) * 8);
    words[words.length - 1] = len * 8;
    for (j = 0; j < words.length; j += 16) {
      var w = words.slice(j, j + 16), a = h.slice();
      for (i = 0; i < 64; i++) {
        if (i >= 16) {
          var x = w[i - 15], y = w[i - 2];
          w[i] = (w[i - 16] + (ror(x, 7) ^ ror(x, 18) ^ (x >>> 3)) + w[i - 7] + (ror(y, 17) ^ ror(y, 19) ^ (y >>> 10))) | 0;
        }
        var t1 = (a[7] + (ror(a[4], 6) ^ ror(a[4], 11) ^ ror(a[4], 25)) + ((a[4] & a[5]) ^ (~a[4] & a[6])) + k[i] + w[i]) | 0;
        var t2 = ((ror(a[0], 2) ^ ror(a[0], 13) ^ ror(a[0], 22)) + ((a[0] & a[1]) ^ (a[0] & a[2]) ^ (a[1] & a[2]))) | 0;
        a = [(t1 + t2) | 0, a[0], a[1], a[2], (a[3] + t1) | 0, a[4], a[5], a[6]];
      }
      for (i = 0; i < 8; i++) h[i] = (h[i] + a[i]) | 0;
    }
    return h.map(function (v) { return ("0000000" + (v >>> 0).toString(16)).slice(-8); }).join("");
  }

  function cardKey(id) { return sha256("quizgen card\u0000" + id).slice(0, 12); }

  /* `log` holds one [time, card key, rating, state before (0 new, else fsrs.js's)] per review rated. */
  function empty() { return { format: FORMAT, version: VERSION, cards: {}, quizzes: {}, log: [] }; }

  function readReview(r) {
    if (!Array.isArray(r) || r.length !== 4 || !isNumber(r[0]) || typeof r[1] !== "string" || !ID.test(r[1])) return null;
    if ([1, 2, 3, 4].indexOf(r[2]) < 0 || [0, 1, 2, 3].indexOf(r[3]) < 0) return null;
    return [r[0], r[1], r[2], r[3]];
  }

  /* Two logs as one, oldest first, each review once (by time and card), at most MAX_LOG of the newest. */
  function mergeLogs(a, b) {
    var seen = {}, out = [];
    a.concat(b).forEach(function (r) {
      var key = r[0] + " " + r[1];
      if (!seen[key]) { seen[key] = true; out.push(r); }
    });
    out.sort(function (x, y) { return x[0] - y[0]; });
    return out.length > MAX_LOG ? out.slice(out.length - MAX_LOG) : out;
  }

  function isNumber(x) { return typeof x === "number" && isFinite(x); }
  function isCount(x) { return isNumber(x) && x >= 0 && Math.floor(x) === x; }
  function orNull(x, test) { return x === null || test(x); }

  /* A scheduled card as fsrs.js makes it, plus review and lapse counts; null when it is not one. */
  function readCard(c) {
    if (!c || typeof c !== "object") return null;
    var learning = c.state === 1 || c.state === 3;
    if (!(learning || c.state === 2)) return null;
    if (learning ? !isCount(c.step) : c.step !== null) return null;
    if (!orNull(c.stability, function (s) { return isNumber(s) && s > 0; })) return null;
    if (!orNull(c.difficulty, isNumber) || !isNumber(c.due) || !orNull(c.last_review, isNumber)) return null;
    if (c.state !== 1 && (c.stability === null || c.difficulty === null)) return null;
    return {
      state: c.state, step: c.step, stability: c.stability, difficulty: c.difficulty,
      due: c.due, last_review: c.last_review,
      reps: isCount(c.reps) ? c.reps : 0, lapses: isCount(c.lapses) ? c.lapses : 0
    };
  }

  function readQuiz(q) {
    if (!q || typeof q !== "object" || !isCount(q.right) || !isCount(q.total) || !isNumber(q.at)) return null;
    return { right: q.right, total: q.total, at: q.at };
  }

  /* Parse stored or imported text: {progress, problem, dropped}; progress is null when it is unusable. */
  function parse(text) {
    var data;
    try { data = JSON.parse(text); } catch (e) { return { progress: null, problem: "it is not valid JSON" }; }
    if (!data || typeof data !== "object" || data.format !== FORMAT) {
      return { progress: null, problem: "it is not quizgen progress" };
    }
    if (data.version !== VERSION && data.version !== 1) {
      return { progress: null, problem: "it has schema version " + String(data.version) + ", and this quiz reads version " + VERSION };
    }
    if (!data.cards || typeof data.cards !== "object" || Array.isArray(data.cards)) {
      return { progress: null, problem: "it has no list of cards" };
    }
    var out = empty(), dropped = 0, id, migrated = data.version === 1;
    var key = migrated ? cardKey : function (same) { return same; }; // version 1 kept the ids
    for (id in data.cards) {
      if (!Object.prototype.hasOwnProperty.call(data.cards, id)) continue;
      var card = ID.test(id) ? readCard(data.cards[id]) : null;
      if (card) out.cards[key(id)] = card; else dropped++;
    }
    var quizzes = data.quizzes && typeof data.quizzes === "object" ? data.quizzes : {};
    for (id in quizzes) {
      if (!Object.prototype.hasOwnProperty.call(quizzes, id)) continue;
      var quiz = ID.test(id) ? readQuiz(quizzes[id]) : null;
      if (quiz) out.quizzes[id] = quiz;
    }
    // The review log came later than version 1: a file without one is as valid, and a bad entry is left out.
    var log = Array.isArray(data.log) ? data.log : [];
    var read = log.map(readReview).filter(function (r) { return r !== null; });
    out.log = mergeLogs([], read.map(function (r) { return [r[0], key(r[1]), r[2], r[3]]; }));
    return { progress: out, problem: null, dropped: dropped, migrated: migrated };
  }

  /* Progress in `storage` (localStorage, or anything with getItem/setItem). */
  function Store(storage) {
    this.storage = storage;
    this.messages = [];
  }

  /* The current progress, read afresh (another tab may have saved since); notes problems in `messages`. */
  Store.prototype.load = function () {
    var text;
    try {
      text = this.storage ? this.storage.getItem(KEY) : null;
    } catch (e) {
      this.storage = null;
    }
    if (!this.storage) {
      this.note("This browser does not let the quiz save progress here, so it lasts until you leave the page.");
      return this.memory || (this.memory = empty());
    }
    if (text === null) return empty();
    var read = parse(text);
    if (!read.progress) {
      this.reset(text, "Saved progress could not be read (" + read.problem + "), so it starts afresh. " +
        "The unreadable value is kept in this browser under " + UNREADABLE_KEY + ".");
      return empty();
    }
    if (read.dropped) {
      this.note("Saved progress for " + plural(read.dropped, "card") + " could not be read and was reset.");
    }
    if (read.dropped || read.migrated) this.write(read.progress);
    return read.progress;
  };

  Store.prototype.note = function (message) {
    if (this.messages.indexOf(message) < 0) this.messages.push(message);
  };

  Store.prototype.reset = function (text, message) {
    try {
      this.storage.setItem(UNREADABLE_KEY, text);
      this.storage.removeItem(KEY);
    } catch (e) { /* the message below is all we can do */ }
    this.note(message);
  };

  Store.prototype.write = function (progress) {
    if (!this.storage) { this.memory = progress; return true; }
    try {
      this.storage.setItem(KEY, JSON.stringify(progress));
      return true;
    } catch (e) {
      this.note("Progress could not be saved (" + (e && e.name ? e.name : "storage error") + ").");
      return false;
    }
  };

  /* Save one card's schedule, keeping whatever else is stored. */
  Store.prototype.putCard = function (id, card) {
    var progress = this.load();
    progress.cards[id] = card;
    return this.write(progress);
  };

  /* Save one card's schedule and the review that made it (for the statistics), in one write. */
  Store.prototype.putReview = function (id, card, review) {
    var progress = this.load();
    progress.cards[id] = card;
    progress.log = mergeLogs(progress.log, [review]);
    return this.write(progress);
  };

  Store.prototype.putQuiz = function (slug, result) {
    var progress = this.load();
    progress.quizzes[slug] = result;
    return this.write(progress);
  };

  /* The stored progress as the text of an export file. */
  Store.prototype.exportText = function () { return JSON.stringify(this.load(), null, 1) + "\n"; };

  /* Merge an exported file: its cards replace the stored ones with the same id.
   * Returns {ok, ids, dropped, problem}; `describe` words it for the learner. */
  Store.prototype.importText = function (text) {
    var read = parse(text);
    if (!read.progress) return { ok: false, ids: [], dropped: 0, problem: "the file could not be used because " + read.problem };
    var progress = this.load(), ids = Object.keys(read.progress.cards);
    ids.forEach(function (id) { progress.cards[id] = read.progress.cards[id]; });
    Object.keys(read.progress.quizzes).forEach(function (slug) { progress.quizzes[slug] = read.progress.quizzes[slug]; });
    progress.log = mergeLogs(progress.log, read.progress.log);
    if (!this.write(progress)) return { ok: false, ids: [], dropped: 0, problem: "progress could not be saved" };
    return { ok: true, ids: ids, dropped: read.dropped, problem: null };
  };

  /* An import's outcome in words; `here` counts the imported cards the page shows, when it has cards. */
  function describe(outcome, here) {
    if (!outcome.ok) return "Nothing was imported: " + outcome.problem + ".";
    var message = "Imported progress for " + plural(outcome.ids.length, "card");
    if (here !== undefined) message += " (" + here + " in this deck)";
    message += ".";
    if (outcome.dropped) message += " " + plural(outcome.dropped, "entry", "entries") + " in the file could not be read.";
    return message;
  }

  var api = {
    Store: Store, parse: parse, cardKey: cardKey, describe: describe, empty: empty, mergeLogs: mergeLogs, MAX_LOG: MAX_LOG, KEY: KEY, UNREADABLE_KEY: UNREADABLE_KEY, VERSION: VERSION
  };
  if (typeof module !== "undefined" && module.exports) module.exports = api;
  root.QuizgenProgress = api;
})(typeof window !== "undefined" ? window : this);
