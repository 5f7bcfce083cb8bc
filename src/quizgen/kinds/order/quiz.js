/* quizgen order cards on a quiz page: "your block" and "unused lines", built by drag and drop, by the
 * Add/Remove buttons, or by keyboard (Enter adds or removes a line, Space picks it up, the arrows move it,
 * Space drops it, Escape puts it back). In a puzzle whose indentation counts, the left and right arrows
 * (or dropping a line further right) set a line's level in the block. The moves are order.js's; this file
 * applies them to the page and announces them, writing only textContent. Each time a puzzle is shown its
 * lines are shuffled and labelled anew. A wrong check says why and marks misplaced lines; the learner
 * tries again until the attempts run out. A puzzle whose article has the class "answered" is locked. */
(function (root) {
  "use strict";

  var D = root.QuizgenDom || require("../../static/quiz/dom.js");
  var O = root.QuizgenOrder || require("./layout.js");
  var $ = D.$, $$ = D.$$, announce = D.announce;
  // The line picked up by keyboard (and where it came from), and the line being dragged: one per page.
  var held = { picked: null, origin: null, moving: false, dragged: null, grabX: 0 };
  var LEVEL_REM = 2; // one level of indentation when quiz.css sets no --level-step on the block

  function puzzleOf(el) { return el.closest("article.kind-order"); }
  function locked(el) { return puzzleOf(el).classList.contains("answered"); }
  function lists(puzzle) { return { block: $(".block", puzzle), pool: $(".pool", puzzle) }; }
  function code(li) { return $(".line-code", li).textContent.trim(); }
  function item(li) { return Number(li.dataset.item); }
  function items(within) { return $$(".line", within).map(item); }
  function lineOf(puzzle, k) { return $('.line[data-item="' + k + '"]', puzzle); }
  function maxLevel(puzzle) { return Number($(".order", puzzle).getAttribute("data-max-level")) || 0; }
  function levelOf(li) { return Number(li.getAttribute("data-level")) || 0; }
  function inBlock(li) { return li.parentNode === lists(puzzleOf(li)).block; }

  function where(li) {
    var indented = maxLevel(puzzleOf(li)) > 0 && inBlock(li);
    return O.where(layoutOf(puzzleOf(li)), item(li), indented ? levelOf(li) : null);
  }

  /* The layout, with the shuffle's order (the labels' order) for lines going back among the unused. */
  function layoutOf(puzzle) {
    var l = lists(puzzle), rank = {};
    $$(".line", puzzle).forEach(function (li) { rank[item(li)] = $(".line-label", li).textContent; });
    return { block: items(l.block), pool: items(l.pool), rank: function (k) { return rank[k]; } };
  }

  /* A line's level of indentation: drawn (data-level) and said (its hidden text). */
  function setLevel(li, level) {
    li.setAttribute("data-level", String(level));
    var said = $(".level-text", li);
    if (said) said.textContent = maxLevel(puzzleOf(li)) > 0 && inBlock(li) ? ", " + O.levelText(level) : "";
  }

  /* The right arrow indents a line of the block one level more, the left one level less. */
  function shift(li, step) {
    var to = O.indent(levelOf(li), step, maxLevel(puzzleOf(li)));
    if (to === null) return announce(code(li) + (step > 0 ? " cannot be indented further." : " is not indented."));
    setLevel(li, to);
    mark(puzzleOf(li), []);
    announce(code(li) + " " + O.levelText(to) + ".");
  }

  /* The lines as the arrow keys walk them. */
  function sequence(puzzle) {
    return O.sequence(layoutOf(puzzle)).map(function (k) { return lineOf(puzzle, k); });
  }

  /* Move `li` to where `layout` has it; the other lines stay where they are. */
  function place(puzzle, li, layout) {
    var k = item(li), inBlock = layout.block.indexOf(k) >= 0, l = lists(puzzle);
    var list = inBlock ? layout.block : layout.pool, after = list[list.indexOf(k) + 1];
    (inBlock ? l.block : l.pool).insertBefore(li, after === undefined ? null : lineOf(puzzle, after));
  }

  /* Mark the lines at these items as out of place, or indented wrong (none: clear every mark). */
  function mark(puzzle, misplaced, indentation) {
    $$(".line", puzzle).forEach(function (li) {
      var out = misplaced.indexOf(item(li)) >= 0;
      li.classList.toggle("misplaced", out);
      $(".mark", li).hidden = !out;
      if (out) $(".mark", li).textContent = indentation ? "indented wrong" : "out of place";
    });
  }

  function update(puzzle) {
    var l = lists(puzzle);
    mark(puzzle, []); // the block changed: the last check's marks no longer apply
    [l.block, l.pool].forEach(function (list) {
      $(".count", list.closest(".order-part")).textContent = O.count(list.children.length);
    });
    $$(".line", puzzle).forEach(function (li) {
      $(".toggle-text", li).textContent = li.parentNode === l.block ? "Remove" : "Add";
      setLevel(li, li.parentNode === l.block ? levelOf(li) : 0);
    });
  }

  /* Change the DOM, then focus `focus`: a moved element loses focus, which must not drop a picked line. */
  function relocate(li, focus, change) {
    held.moving = true;
    try {
      change();
      update(puzzleOf(li));
      focus.focus();
    } finally {
      held.moving = false;
    }
  }

  /* Add a line to the end of the block, or take it out; focus stays in the list it left. */
  function toggle(li, onButton) {
    var puzzle = puzzleOf(li), fromBlock = li.parentNode === lists(puzzle).block;
    var target = li.nextElementSibling || li.previousElementSibling || li;
    if (held.picked === li) drop(li, true);
    var layout = O.toggle(layoutOf(puzzle), item(li));
    relocate(li, onButton ? $(".toggle", target) : target, function () { place(puzzle, li, layout); });
    announce((fromBlock ? "Removed " : "Added ") + code(li) + ", now " + where(li) + ".");
  }

  function pick(li) {
    if (held.picked && held.picked !== li) drop(held.picked, true);
    held.picked = li;
    held.origin = { list: li.parentNode, before: li.nextElementSibling };
    li.classList.add("picked");
    announce("Picked up " + code(li) + ", " + where(li) +
      ". The up and down arrows move it, Space drops it, Escape puts it back.");
  }

  function drop(li, quietly) {
    li.classList.remove("picked");
    held.picked = null;
    if (!quietly) announce("Dropped " + code(li) + " " + where(li) + ".");
  }

  function cancel(li) {
    var origin = held.origin;
    relocate(li, li, function () {
      origin.list.insertBefore(li, origin.before && origin.before.parentNode === origin.list ? origin.before : null);
    });
    drop(li);
  }

  /* Move a picked line one place through the block and on into the unused lines (or back). */
  function move(li, direction) {
    var puzzle = puzzleOf(li), layout = O.move(layoutOf(puzzle), item(li), direction);
    if (!layout) return announce(O.stuck(code(li), direction));
    relocate(li, li, function () { place(puzzle, li, layout); });
    announce(code(li) + " moved " + where(li) + ".");
  }

  /* A key pressed on a line; true when the key was used. */
  function lineKey(li, key) {
    var all = sequence(puzzleOf(li)), at = all.indexOf(li), picked = held.picked === li;
    var direction = key === "ArrowUp" ? -1 : 1;
    switch (key) {
      case " ":
      case "Spacebar":
        if (picked) drop(li); else pick(li);
        return true;
      case "Enter":
        if (picked) drop(li); else toggle(li, false);
        return true;
      case "ArrowUp":
      case "ArrowDown":
        if (picked) move(li, direction); else if (all[at + direction]) all[at + direction].focus();
        return true;
      case "Home":
      case "End":
        if (!picked) all[key === "Home" ? 0 : all.length - 1].focus();
        return true;
      case "Escape":
        if (picked) cancel(li);
        return picked;
      case "ArrowRight":
      case "ArrowLeft":
        if (!maxLevel(puzzleOf(li)) || !inBlock(li)) return false;
        shift(li, key === "ArrowRight" ? 1 : -1);
        return true;
      default:
        return false;
    }
  }

  function onKey(e) {
    var li = e.target.classList && e.target.classList.contains("line") ? e.target : null;
    if (!li || e.altKey || e.ctrlKey || e.metaKey || locked(li)) return;
    if (lineKey(li, e.key)) e.preventDefault();
  }

  function onToggleClick(e) {
    var button = e.target.closest(".line .toggle");
    if (button && !button.disabled && !locked(button)) toggle(button.closest(".line"), true);
  }

  function onFocusOut(e) {
    if (held.picked && e.target === held.picked && !held.moving) drop(held.picked, true);
  }

  /* ---- drag and drop ---- */

  /* The list under the pointer: anywhere in a list's part (its heading, an empty list) counts. */
  function listAt(target) {
    var part = target.closest && target.closest(".order-part");
    return part ? $(".lines", part) : null;
  }

  function accepts(list) { return held.dragged && list && puzzleOf(list) === puzzleOf(held.dragged); }

  function onDragStart(e) {
    var li = e.target.closest && e.target.closest(".line");
    if (!li || locked(li)) return;
    held.dragged = li;
    held.grabX = e.clientX - li.getBoundingClientRect().left;
    li.classList.add("dragging");
    e.dataTransfer.effectAllowed = "move";
    e.dataTransfer.setData("text/plain", li.dataset.item);
  }

  function onDragEnd(e) {
    if (held.dragged) held.dragged.classList.remove("dragging");
    held.dragged = null;
    $$(".drop-target", e.currentTarget).forEach(function (el) { el.classList.remove("drop-target"); });
  }

  function onDragOver(e) {
    var list = listAt(e.target);
    if (!accepts(list)) return;
    e.preventDefault();
    e.dataTransfer.dropEffect = "move";
    $$(".drop-target", e.currentTarget).forEach(function (el) { if (el !== list) el.classList.remove("drop-target"); });
    list.classList.add("drop-target");
  }

  function onDrop(e) {
    var list = listAt(e.target);
    if (!accepts(list)) return;
    e.preventDefault();
    var li = held.dragged;
    var others = $$(".line", list).filter(function (other) { return other !== li; });
    var middles = others.map(function (other) {
      var box = other.getBoundingClientRect();
      return box.top + box.height / 2;
    });
    list.insertBefore(li, others[O.dropIndex(middles, e.clientY)] || null);
    list.classList.remove("drop-target");
    var puzzle = puzzleOf(li), max = maxLevel(puzzle);
    if (max && list === lists(puzzle).block) {
      // The level the line's left edge lands on: how far right of the block's left edge it was let go.
      var unit = levelStep(list);
      var left = list.getBoundingClientRect().left + parseFloat(getComputedStyle(list).paddingLeft);
      setLevel(li, O.levelAt(e.clientX - held.grabX - left, unit, max));
    }
    update(puzzle);
    announce(code(li) + " dropped " + where(li) + ".");
  }

  /* One level of indentation in pixels, as quiz.css draws it in this list (its --level-step, in rem). */
  function levelStep(list) {
    var rem = parseFloat(getComputedStyle(document.documentElement).fontSize);
    var step = getComputedStyle(list).getPropertyValue("--level-step").trim();
    var n = parseFloat(step);
    if (!(n > 0)) return LEVEL_REM * rem;
    return /rem$/.test(step) ? n * rem : n;
  }

  /* ---- the kind's hooks, called by deck.js ---- */

  function attach(deck) {
    var stage = deck.stage;
    stage.addEventListener("click", onToggleClick);
    stage.addEventListener("keydown", onKey);
    stage.addEventListener("focusout", onFocusOut);
    stage.addEventListener("dragstart", onDragStart);
    stage.addEventListener("dragend", onDragEnd);
    stage.addEventListener("dragover", onDragOver);
    stage.addEventListener("drop", onDrop);
  }

  /* How many checks a puzzle allows: its page's data-attempts, else order.js's default. */
  function attempts(puzzle) {
    var n = Number($(".order", puzzle).getAttribute("data-attempts"));
    return n >= 1 ? Math.floor(n) : O.ATTEMPTS;
  }

  /* A new shuffle: each line's label follows its new place, and the judge learns the labels shown. */
  function shuffle(card) {
    var lines = $$(".line", card.el);
    card.shown = card.shown || card.judge; // the judge data as the page has it
    card.order = O.shuffle(lines.length, Math.random, card.order);
    var labels = O.labelsFor(card.order);
    card.judge = Object.assign({}, card.shown, { labels: labels });
    $(".order", card.el).setAttribute("data-max-level", String(O.maxLevel(card.judge)));
    lines.forEach(function (li) {
      $(".line-label", li).textContent = labels[item(li)];
      $(".toggle .visually-hidden", li).textContent = " line " + labels[item(li)];
    });
    return card.order;
  }

  /* Every line back among the unused lines, newly shuffled, and every attempt left. */
  function reset(card) {
    var puzzle = card.el, pool = $(".pool", puzzle);
    card.left = attempts(puzzle);
    $(".attempts", puzzle).textContent = O.attemptsText(card.left, true);
    O.reset(items(puzzle), shuffle(card)).pool.forEach(function (k) {
      var li = lineOf(puzzle, k);
      li.classList.remove("picked");
      li.draggable = true;
      pool.appendChild(li);
    });
    if (held.picked && puzzleOf(held.picked) === puzzle) held.picked = null;
    update(puzzle);
  }

  /* Once answered, nothing moves. */
  function lock(card) {
    D.disable(".toggle, .check-order", card.el);
    $$(".line", card.el).forEach(function (li) { li.draggable = false; li.classList.remove("picked"); });
    if (held.picked && puzzleOf(held.picked) === card.el) held.picked = null;
  }

  function click(card, button, deck) {
    if (!button.classList.contains("check-order")) return;
    var block = $$(".line", lists(card.el).block);
    var levels = maxLevel(card.el) ? block.map(levelOf) : null;
    var verdict = O.verdict(block.map(item), card.judge, levels);
    mark(card.el, verdict.misplaced, verdict.indentation);
    if (verdict.ok) return deck.finish(card, true, "");
    card.left -= 1;
    var left = O.attemptsText(card.left, false);
    $(".attempts", card.el).textContent = left;
    if (card.left > 0) deck.retry(card, verdict.reason, left + ".");
    else deck.finish(card, false, verdict.reason);
  }

  /* Keys pressed on a line are the puzzle's, not the page's. */
  function owns(target) { return !!target.closest(".line"); }

  var api = { attach: attach, reset: reset, lock: lock, click: click, owns: owns };
  if (typeof module !== "undefined" && module.exports) module.exports = api;
  (root.QuizgenKinds = root.QuizgenKinds || {}).order = api;
})(typeof window !== "undefined" ? window : this);
