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

  /* The verdict on a block (`positions`, first line first) for a card's judge data, with a reason when the
   * block is too short or too long. */
  function verdict(positions, judge) {
    var result = J.judgeOrderItems(positions, judge);
    var needed = judge.orders.length ? judge.orders[0].length : 0;
    var reason = result.reason;
    if (!result.ok && !reason && positions.length !== needed) {
      reason = "the block has " + plural(positions.length, "line") + "; it needs " + needed;
    }
    return { ok: result.ok, reason: reason };
  }

  var api = {
    reset: reset, sequence: sequence, where: where, count: count, poolIndex: poolIndex, toggle: toggle,
    move: move, stuck: stuck, dropIndex: dropIndex, verdict: verdict
  };
  if (typeof module !== "undefined" && module.exports) module.exports = api;
  root.QuizgenOrder = api;
})(typeof window !== "undefined" ? window : this);
