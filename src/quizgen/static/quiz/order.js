/* quizgen order puzzles: "your block" and "unused lines", built by drag and drop, by the Add/Remove
 * buttons, or by keyboard (Enter adds or removes a line, Space picks it up, the arrows move it, Space
 * drops it, Escape puts it back). Moves are announced through `announce`; only textContent is written.
 * A puzzle whose article has the class "answered" is locked. */
(function (root) {
  "use strict";

  function $(selector, within) { return within.querySelector(selector); }
  function $$(selector, within) { return Array.prototype.slice.call(within.querySelectorAll(selector)); }
  function plural(n, word) { return n + " " + word + (n === 1 ? "" : "s"); }

  function attach(stage, announce) {
    var picked = null, origin = null, moving = false, dragged = null;

    function puzzleOf(el) { return el.closest("article.kind-order"); }
    function locked(el) { return puzzleOf(el).classList.contains("answered"); }
    function lists(puzzle) { return { block: $(".block", puzzle), pool: $(".pool", puzzle) }; }
    function code(li) { return $(".line-code", li).textContent.trim(); }
    /* The arrow keys walk the block, then the unused lines, as one sequence. */
    function sequence(puzzle) { return $$(".block .line, .pool .line", puzzle); }

    function where(li) {
      var l = lists(puzzleOf(li));
      if (li.parentNode === l.pool) return "in the unused lines";
      var n = l.block.children.length;
      return "at position " + (Array.prototype.indexOf.call(l.block.children, li) + 1) + " of " + n + " in your block";
    }

    function update(puzzle) {
      var l = lists(puzzle);
      [l.block, l.pool].forEach(function (list) {
        var n = list.children.length;
        $(".count", list.closest(".order-part")).textContent = n ? "(" + plural(n, "line") + ")" : "(empty)";
      });
      $$(".line", puzzle).forEach(function (li) {
        $(".toggle-text", li).textContent = li.parentNode === l.block ? "Remove" : "Add";
      });
    }

    /* Change the DOM, then focus `focus`: a moved element loses focus, which must not drop a picked line. */
    function relocate(li, focus, change) {
      moving = true;
      try {
        change();
        update(puzzleOf(li));
        focus.focus();
      } finally {
        moving = false;
      }
    }

    /* Back to its first place among the unused lines, so that list keeps its order. */
    function returnToPool(li, pool) {
      var k = Number(li.dataset.item), before = null;
      $$(".line", pool).some(function (other) {
        if (Number(other.dataset.item) > k) { before = other; return true; }
        return false;
      });
      pool.insertBefore(li, before);
    }

    /* Add a line to the end of the block, or take it out; focus stays in the list it left. */
    function toggle(li, onButton) {
      var l = lists(puzzleOf(li)), fromBlock = li.parentNode === l.block;
      var target = li.nextElementSibling || li.previousElementSibling || li;
      if (picked === li) drop(li, true);
      relocate(li, onButton ? $(".toggle", target) : target, function () {
        if (fromBlock) returnToPool(li, l.pool); else l.block.appendChild(li);
      });
      announce((fromBlock ? "Removed " : "Added ") + code(li) + ", now " + where(li) + ".");
    }

    function pick(li) {
      if (picked && picked !== li) drop(picked, true);
      picked = li;
      origin = { list: li.parentNode, before: li.nextElementSibling };
      li.classList.add("picked");
      announce("Picked up " + code(li) + ", " + where(li) +
        ". The up and down arrows move it, Space drops it, Escape puts it back.");
    }

    function drop(li, quietly) {
      li.classList.remove("picked");
      picked = null;
      if (!quietly) announce("Dropped " + code(li) + " " + where(li) + ".");
    }

    function cancel(li) {
      relocate(li, li, function () {
        origin.list.insertBefore(li, origin.before && origin.before.parentNode === origin.list ? origin.before : null);
      });
      drop(li);
    }

    /* Move a picked line one place through the block and on into the unused lines (or back). */
    function move(li, direction) {
      var l = lists(puzzleOf(li)), list = li.parentNode;
      var previous = li.previousElementSibling, next = li.nextElementSibling;
      if (direction < 0 && !previous && list === l.block) return announce(code(li) + " is already first in your block.");
      if (direction > 0 && !next && list === l.pool) return announce(code(li) + " is already last in the unused lines.");
      relocate(li, li, function () {
        if (direction < 0) {
          if (previous) list.insertBefore(li, previous); else l.block.appendChild(li);
        } else if (next) {
          list.insertBefore(li, next.nextElementSibling);
        } else {
          l.pool.insertBefore(li, l.pool.firstElementChild);
        }
      });
      announce(code(li) + " moved " + where(li) + ".");
    }

    stage.addEventListener("click", function (e) {
      var button = e.target.closest(".line .toggle");
      if (button && !button.disabled && !locked(button)) toggle(button.closest(".line"), true);
    });

    stage.addEventListener("keydown", function (e) {
      var li = e.target.classList && e.target.classList.contains("line") ? e.target : null;
      if (!li || e.altKey || e.ctrlKey || e.metaKey || locked(li)) return;
      var all = sequence(puzzleOf(li)), at = all.indexOf(li);
      switch (e.key) {
        case " ":
        case "Spacebar":
          if (picked === li) drop(li); else pick(li);
          break;
        case "Enter":
          if (picked === li) drop(li); else toggle(li, false);
          break;
        case "ArrowUp":
        case "ArrowDown":
          var direction = e.key === "ArrowUp" ? -1 : 1;
          if (picked === li) move(li, direction);
          else if (all[at + direction]) all[at + direction].focus();
          break;
        case "Home":
          if (picked !== li) all[0].focus();
          break;
        case "End":
          if (picked !== li) all[all.length - 1].focus();
          break;
        case "Escape":
          if (picked !== li) return;
          cancel(li);
          break;
        default:
          return;
      }
      e.preventDefault();
    });

    stage.addEventListener("focusout", function (e) {
      if (picked && e.target === picked && !moving) drop(picked, true);
    });

    /* The list under the pointer: anywhere in a list's part (its heading, an empty list) counts. */
    function listAt(target) {
      var part = target.closest && target.closest(".order-part");
      return part ? $(".lines", part) : null;
    }

    function accepts(list) { return dragged && list && puzzleOf(list) === puzzleOf(dragged); }

    stage.addEventListener("dragstart", function (e) {
      var li = e.target.closest && e.target.closest(".line");
      if (!li || locked(li)) return;
      dragged = li;
      li.classList.add("dragging");
      e.dataTransfer.effectAllowed = "move";
      e.dataTransfer.setData("text/plain", li.dataset.item);
    });

    stage.addEventListener("dragend", function () {
      if (dragged) dragged.classList.remove("dragging");
      dragged = null;
      $$(".drop-target", stage).forEach(function (el) { el.classList.remove("drop-target"); });
    });

    stage.addEventListener("dragover", function (e) {
      var list = listAt(e.target);
      if (!accepts(list)) return;
      e.preventDefault();
      e.dataTransfer.dropEffect = "move";
      $$(".drop-target", stage).forEach(function (el) { if (el !== list) el.classList.remove("drop-target"); });
      list.classList.add("drop-target");
    });

    stage.addEventListener("drop", function (e) {
      var list = listAt(e.target);
      if (!accepts(list)) return;
      e.preventDefault();
      var li = dragged, before = null;
      $$(".line", list).some(function (other) {
        if (other === li) return false;
        var box = other.getBoundingClientRect();
        if (e.clientY < box.top + box.height / 2) { before = other; return true; }
        return false;
      });
      list.insertBefore(li, before);
      list.classList.remove("drop-target");
      update(puzzleOf(li));
      announce(code(li) + " dropped " + where(li) + ".");
    });

    return {
      /* Every line back among the unused lines, in the page's order. */
      reset: function (puzzle) {
        var pool = $(".pool", puzzle);
        $$(".line", puzzle).sort(function (a, b) { return a.dataset.item - b.dataset.item; }).forEach(function (li) {
          li.classList.remove("picked");
          li.draggable = true;
          pool.appendChild(li);
        });
        if (picked && puzzleOf(picked) === puzzle) picked = null;
        update(puzzle);
      },
      /* Once answered, nothing moves. */
      lock: function (puzzle) {
        $$(".line", puzzle).forEach(function (li) { li.draggable = false; li.classList.remove("picked"); });
        if (picked && puzzleOf(picked) === puzzle) picked = null;
      },
      /* The block, first line first, as positions in the card's items (what judgeOrderItems takes). */
      positions: function (puzzle) {
        return $$(".block .line", puzzle).map(function (li) { return Number(li.dataset.item); });
      }
    };
  }

  root.QuizgenOrder = { attach: attach };
})(window);
