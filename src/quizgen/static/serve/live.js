/* quizgen serve: put into every page `quizgen serve` sends (never into the built quiz). It asks the server
 * every second how the last build went, by loading /__quizgen/status.js as a script (the pages'
 * Content-Security-Policy allows their own scripts, and no fetch): a failed build is shown over the page
 * with its error as text; a new good build reloads the page. */
(function () {
  "use strict";

  var POLL_MS = 1000;
  var seen = null; // the build the page was loaded from (the first status it hears)
  var BOX = "quizgen-serve-failed";
  var WAITING = "quizgen-serve-waiting"; // serve's page before a good build (serve.py WAITING_ID)

  function show(error) {
    var box = document.getElementById(BOX);
    if (!box) {
      box = document.createElement("section");
      box.id = BOX;
      box.className = "serve-failed";
      box.setAttribute("role", "alert");
      box.setAttribute("aria-labelledby", BOX + "-heading");
      var heading = document.createElement("h2");
      heading.id = BOX + "-heading";
      heading.textContent = "The last build failed";
      var note = document.createElement("p");
      note.textContent = document.getElementById(WAITING)
        ? "No build of this session has succeeded yet. Fix the error and save: the quiz then loads."
        : "This page is from the last good build. Fix the error and save: the page reloads.";
      var pre = document.createElement("pre");
      pre.tabIndex = 0;
      box.appendChild(heading);
      box.appendChild(note);
      box.appendChild(pre);
      document.body.insertBefore(box, document.body.firstChild);
    }
    box.querySelector("pre").textContent = error; // text, never HTML
  }

  function hide() {
    var box = document.getElementById(BOX);
    if (box) box.parentNode.removeChild(box);
  }

  /* Called by status.js with {build, ok, error}: `build` counts the builds serve has finished. */
  function status(s) {
    if (seen === null) seen = s.ok ? s.build : s.good;
    if (!s.ok) return show(s.error);
    if (s.build !== seen) return window.location.reload();
    hide();
  }

  function poll() {
    var script = document.createElement("script");
    script.src = "/__quizgen/status.js?t=" + Date.now();
    function done() {
      script.parentNode.removeChild(script);
      setTimeout(poll, POLL_MS);
    }
    script.onload = done;
    script.onerror = done; // the server stopped: keep asking, it may come back
    document.head.appendChild(script);
  }

  window.QuizgenServe = { status: status };
  poll();
})();
