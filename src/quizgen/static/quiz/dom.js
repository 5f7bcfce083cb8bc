/* quizgen quiz pages: the one place for the helpers every page script shares. Nothing here touches the
 * page until it is called, so node loads this file too. Text is written with textContent, never HTML. */
(function (root) {
  "use strict";

  function $(selector, within) { return (within || document).querySelector(selector); }
  function $$(selector, within) { return Array.prototype.slice.call((within || document).querySelectorAll(selector)); }
  function plural(n, one, many) { return n + " " + (n === 1 ? one : many || one + "s"); }
  function text(el) { return el ? el.textContent.replace(/\s+/g, " ").trim() : ""; }
  function disable(selector, within) { $$(selector, within).forEach(function (b) { b.disabled = true; }); }

  /* Write `message` into `el` as text, its inline Markdown (`code`, **strong**, *em*) as elements (never as HTML). */
  function inline(el, message) {
    var J = root.QuizgenJudge || require("../judge.js");
    el.textContent = "";
    J.inlinePieces(message).forEach(function (piece) {
      var node = piece.tag ? document.createElement(piece.tag) : document.createTextNode(piece.text);
      if (piece.tag) node.textContent = piece.text;
      el.appendChild(node);
    });
  }

  /* `message` as words, its code spans without their backticks (what a screen reader should say). */
  function plain(message) {
    var J = root.QuizgenJudge || require("../judge.js");
    return J.inlinePieces(message).map(function (piece) { return piece.text; }).join("");
  }

  var announceTimer = null;

  /* Say `message` through the page's live region (#announcer). */
  function announce(message) {
    var region = $("#announcer");
    region.textContent = "";
    clearTimeout(announceTimer);
    // A fresh text node after a pause makes screen readers speak a repeated message again.
    announceTimer = setTimeout(function () { region.textContent = message; }, 60);
  }

  /* A dismissible message at the top of the page (#notices). */
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

  /* Show what the progress store has to say (a QuizgenProgress.Store's messages), once each. */
  function flushNotices(store) { store.messages.splice(0).forEach(notice); }

  var api = {
    $: $, $$: $$, plural: plural, text: text, inline: inline, plain: plain, disable: disable, announce: announce,
    notice: notice,
    flushNotices: flushNotices
  };
  if (typeof module !== "undefined" && module.exports) module.exports = api;
  root.QuizgenDom = api;
})(typeof window !== "undefined" ? window : this);
