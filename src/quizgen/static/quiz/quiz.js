/* quizgen quiz pages: the page-wide parts (colour scheme, progress export and import, the index's due
 * counts), then the page starts: deck.js on a deck page. The last script a page loads; it asks the network
 * for nothing. */
(function (root) {
  "use strict";

  var D = root.QuizgenDom || require("./dom.js");
  var F = root.QuizgenFSRS || require("./fsrs.js");
  var P = root.QuizgenProgress || require("./progress.js");
  var R = root.QuizgenReviewMode || require("./review-mode.js");
  var $ = D.$;

  function localStorageOrNull() {
    try { return window.localStorage; } catch (e) { return null; } // file:// with storage disabled throws
  }

  function followColorScheme() {
    // The page colours follow prefers-color-scheme in CSS; Pygments' dark palette hangs off `.dark`.
    var query = window.matchMedia ? window.matchMedia("(prefers-color-scheme: dark)") : null;
    function apply() { document.documentElement.classList.toggle("dark", !!(query && query.matches)); }
    apply();
    if (query && query.addEventListener) query.addEventListener("change", apply);
  }

  function exportProgress(store) {
    var blob = new Blob([store.exportText()], { type: "application/json" });
    var link = document.createElement("a");
    link.href = URL.createObjectURL(blob);
    link.download = "quizgen-progress-" + new Date(Date.now()).toISOString().slice(0, 10) + ".json";
    document.body.appendChild(link);
    link.click();
    document.body.removeChild(link);
    setTimeout(function () { URL.revokeObjectURL(link.href); }, 10000);
    D.flushNotices(store);
    D.announce("Progress exported to " + link.download + ".");
  }

  /* Export and Import; `onImport(outcome)` updates the page and returns the message to show. */
  function initProgressPanel(store, onImport) {
    $("#export-progress").addEventListener("click", function () { exportProgress(store); });
    var input = $("#import-progress");
    input.addEventListener("change", function () {
      var file = input.files && input.files[0];
      if (!file) return;
      var reader = new FileReader();
      reader.onload = function () {
        var outcome = store.importText(String(reader.result));
        D.notice(onImport(outcome));
        D.flushNotices(store);
        input.value = "";
      };
      reader.onerror = function () { D.notice("Nothing was imported: the file could not be read."); };
      reader.readAsText(file);
    });
  }

  /* The index: how much is due in each deck. Returns what an import does to the page. */
  function initIndex(data, store) {
    var places = {};  // found once: a selector per deck searched the whole page for each (quadratic)
    Array.prototype.forEach.call(document.querySelectorAll("[data-due-for]"), function (el) {
      places[el.getAttribute("data-due-for")] = el;
    });
    function refresh() {
      var progress = store.load(), t = Date.now();
      data.decks.forEach(function (deck) {
        var line = R.deckLine(deck.ids, progress, progress.quizzes[deck.slug], t);
        if (places[deck.slug]) places[deck.slug].textContent = line;
      });
      D.flushNotices(store);
    }
    refresh();
    return function (outcome) {
      refresh();
      return P.describe(outcome);
    };
  }

  function start() {
    var data = JSON.parse(document.getElementById("quiz-data").textContent);
    var store = new P.Store(localStorageOrNull());
    followColorScheme();
    store.load(); // check what is stored now, so a corrupt value is reported whichever mode the page opens in
    var deck = data.page === "deck";
    var onImport = deck ? root.QuizgenDeck.init(data, store, new F.Scheduler()) : initIndex(data, store);
    initProgressPanel(store, function (outcome) {
      var message = onImport(outcome);
      if (root.QuizgenStats) root.QuizgenStats.changed();
      return message;
    });
    var ids = deck ? data.cards.map(function (c) { return c.id; })
      : data.decks.reduce(function (all, d) { return all.concat(d.ids); }, []);
    if (root.QuizgenStats) root.QuizgenStats.mount(document.getElementById("stats"), store, ids);
    D.flushNotices(store);
  }

  if (typeof document !== "undefined") start();
})(typeof window !== "undefined" ? window : this);
