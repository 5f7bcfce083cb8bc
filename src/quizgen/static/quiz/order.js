/* quizgen order puzzle: where the lines of an order card stand, as a plain layout {block: [...], pool: [...]}
 * of item numbers (an item is a line's position among the card's shuffled lines, its data-item), and every
 * move on it. Pure functions; kinds/order.js applies them to the page. Node loads this file. */
(function (root) {
  "use strict";

  var J = root.QuizgenJudge || require("../judge.js");
  var plural = (root.QuizgenDom || require("./dom.js")).plural;

  function copy(layout) { return { block: layout.block.slice(), pool: layout.pool.slice() }; }

  /* Every line among the unused ones, in the page's order. */
  function reset(items) {
    return { block: [], pool: items.slice().sort(function (a, b) { return a - b; }) };
  }

  /* The order the arrow keys walk: the block, then the unused lines. */
  function sequence(layout) { return layout.block.concat(layout.pool); }

  function where(layout, item) {
    var at = layout.block.indexOf(item);
    if (at < 0) return "in the unused lines";
    return "at position " + (at + 1) + " of " + layout.block.length + " in your block";
  }

  /* A list's heading count: "(3 lines)", or "(empty)". */
  function count(n) { return n ? "(" + plural(n, "line") + ")" : "(empty)"; }

  /* Where `item` goes back among the unused lines: before the first with a larger number. */
  function poolIndex(pool, item) {
    for (var i = 0; i < pool.length; i++) if (pool[i] > item) return i;
    return pool.length;
  }

  /* Add an unused line to the end of the block, or take a line out of the block back to its place. */
  function toggle(layout, item) {
    var out = copy(layout), at = out.block.indexOf(item);
    if (at < 0) {
      out.pool.splice(out.pool.indexOf(item), 1);
      out.block.push(item);
    } else {
      out.block.splice(at, 1);
      out.pool.splice(poolIndex(out.pool, item), 0, item);
    }
    return out;
  }

  /* One place up (direction -1) or down (+1) through the block and on into the unused lines; null when
   * the line is first in the block or last among the unused lines already. */
  function move(layout, item, direction) {
    var out = copy(layout), inBlock = out.block.indexOf(item) >= 0;
    var list = inBlock ? out.block : out.pool, at = list.indexOf(item), to = at + direction;
    if (to >= 0 && to < list.length) {
      list.splice(at, 1);
      list.splice(to, 0, item);
    } else if (direction < 0 && !inBlock) {
      out.pool.splice(at, 1);
      out.block.push(item);
    } else if (direction > 0 && inBlock) {
      out.block.splice(at, 1);
      out.pool.unshift(item);
    } else {
      return null;
    }
    return out;
  }

  /* Why a line cannot move that way: it is at an end already. */
  function stuck(code, direction) {
    return code + (direction < 0 ? " is already first in your block." : " is already last in the unused lines.");
  }

  /* Where a dragged line lands among the other lines of a list: before the first whose middle is below
   * the pointer (`middles` are their vertical middles, top to bottom). */
  function dropIndex(middles, y) {
    for (var i = 0; i < middles.length; i++) if (y < middles[i]) return i;
    return middles.length;
  }

  var ATTEMPTS = 3; // checks a learner gets before the answer is shown, unless the page says otherwise

  function has(object, key) { return !!object && Object.prototype.hasOwnProperty.call(object, key); }

  /* The build's message for a mistake (`lines` as line numbers, distractor k as -1 - k): the one for this
   * exact order, else the one for the first distractor used that has one; "" when there is none. */
  function feedbackFor(lines, feedback) {
    var key = lines.join(" ");
    if (has(feedback, key)) return feedback[key];
    for (var i = 0; i < lines.length; i++) {
      if (lines[i] < 0 && has(feedback, String(lines[i]))) return feedback[String(lines[i])];
    }
    return "";
  }

  /* Which places of `a` a longest common subsequence of `a` and `b` keeps: true for a kept place. */
  function kept(a, b) {
    var n = a.length, m = b.length, table = [], i, j;
    for (i = 0; i <= n; i++) table.push(new Array(m + 1).fill(0));
    for (i = n - 1; i >= 0; i--) {
      for (j = m - 1; j >= 0; j--) {
        table[i][j] = a[i] === b[j] ? table[i + 1][j + 1] + 1 : Math.max(table[i + 1][j], table[i][j + 1]);
      }
    }
    var keep = new Array(n).fill(false);
    for (i = 0, j = 0; i < n && j < m;) {
      if (a[i] === b[j]) { keep[i] = true; i++; j++; } else if (table[i + 1][j] >= table[i][j + 1]) i++; else j++;
    }
    return keep;
  }

  /* The accepted order nearest to `lines`: the fewest lines to move to get it (then the fewest places that
   * differ, then the first listed). {order, misplaced: places in `lines` to move}, or null when no
   * accepted order has as many lines. */
  function nearest(lines, orders) {
    var best = null;
    for (var k = 0; k < orders.length; k++) {
      var order = orders[k];
      if (order.length !== lines.length) continue;
      var differ = 0;
      for (var i = 0; i < lines.length; i++) if (lines[i] !== order[i]) differ++;
      var keep = kept(lines, order), misplaced = [];
      keep.forEach(function (yes, at) { if (!yes) misplaced.push(at); });
      if (!best || misplaced.length < best.misplaced.length ||
          (misplaced.length === best.misplaced.length && differ < best.differ)) {
        best = { order: order, misplaced: misplaced, differ: differ };
        if (misplaced.length === 1 && differ === 2) break; // one line a step away: none is nearer
      }
    }
    return best && { order: best.order, misplaced: best.misplaced };
  }

  /* "lines B and D are out of place: ..." for the labels of misplaced lines. */
  function misplacedReason(labels) {
    var names = labels.length > 1 ? labels.slice(0, -1).join(", ") + " and " + labels[labels.length - 1] : labels[0];
    return (labels.length > 1 ? "lines " + names + " are" : "line " + names + " is") + " out of place: move " +
      (labels.length > 1 ? "them" : "it") + " and your block is an accepted order";
  }

  /* What the attempts line says: "3 attempts", "2 attempts left", "no attempts left". */
  function attemptsText(left, fresh) {
    if (fresh) return plural(left, "attempt");
    return (left ? plural(left, "attempt") : "no attempts") + " left";
  }

  /* The verdict on a block (`positions`, first line first) for a card's judge data: {ok, reason,
   * misplaced}. A wrong block gets the build's message for that mistake when it has one (judge.feedback),
   * else why it is wrong: a line that does not belong, the wrong number of lines, or the lines out of
   * place against the nearest accepted order (`misplaced`, as positions, to be marked). */
  function verdict(positions, judge) {
    var result = J.judgeOrderItems(positions, judge);
    var out = { ok: result.ok, reason: result.reason, misplaced: [] };
    var valid = positions.every(function (at) { return at >= 0 && at < judge.items.length; });
    if (result.ok || !positions.length || !valid) return out;
    var lines = positions.map(function (at) { return judge.items[at]; });
    var said = feedbackFor(lines, judge.feedback);
    var needed = judge.orders.length ? judge.orders[0].length : 0;
    if (said) {
      out.reason = said;
    } else if (!out.reason && positions.length !== needed) {
      out.reason = "the block has " + plural(positions.length, "line") + "; it needs " + needed;
    } else if (!out.reason) {
      var near = nearest(lines, judge.orders);
      if (near) {
        out.misplaced = near.misplaced.map(function (at) { return positions[at]; });
        out.reason = misplacedReason(out.misplaced.map(function (at) { return judge.labels[at]; }));
      }
    }
    return out;
  }

  var api = {
    reset: reset, sequence: sequence, where: where, count: count, poolIndex: poolIndex, toggle: toggle,
    move: move, stuck: stuck, dropIndex: dropIndex, ATTEMPTS: ATTEMPTS, feedbackFor: feedbackFor, kept: kept,
    nearest: nearest, misplacedReason: misplacedReason, attemptsText: attemptsText, verdict: verdict
  };
  if (typeof module !== "undefined" && module.exports) module.exports = api;
  root.QuizgenOrder = api;
})(typeof window !== "undefined" ? window : this);
