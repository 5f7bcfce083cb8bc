/* quizgen order puzzle: where the lines of an order card stand, as a plain layout {block: [...], pool: [...]}
 * of item numbers (an item is a line's position among the card's shuffled lines, its data-item), and every
 * move on it. Pure functions; kinds/order.js applies them to the page. Node loads this file. */
(function (root) {
  "use strict";

  var J = root.QuizgenJudge || require("../../static/judge.js");
  var plural = (root.QuizgenDom || require("../../static/quiz/dom.js")).plural;

  function copy(layout) {
    var out = { block: layout.block.slice(), pool: layout.pool.slice() };
    if (layout.rank) out.rank = layout.rank;
    return out;
  }

  /* Every line among the unused ones, in the page's order (or in `order`, a shuffle of them). */
  function reset(items, order) {
    return { block: [], pool: order ? order.slice() : items.slice().sort(function (a, b) { return a - b; }) };
  }

  /* The order the arrow keys walk: the block, then the unused lines. */
  function sequence(layout) { return layout.block.concat(layout.pool); }

  /* Where a line stands, in words; `level` (in an indented puzzle) is its level in the block. */
  function where(layout, item, level) {
    var at = layout.block.indexOf(item);
    if (at < 0) return "in the unused lines";
    var place = "at position " + (at + 1) + " of " + layout.block.length + " in your block";
    return level === undefined || level === null ? place : place + ", " + levelText(level);
  }

  /* A list's heading count: "(3 lines)", or "(empty)". */
  function count(n) { return n ? "(" + plural(n, "line") + ")" : "(empty)"; }

  /* Where `item` goes back among the unused lines: before the first that comes later in the shuffle
   * (`rank`: item -> its place in the shuffle; without it, the item numbers' order). */
  function poolIndex(pool, item, rank) {
    var r = rank || function (k) { return k; };
    for (var i = 0; i < pool.length; i++) if (r(pool[i]) > r(item)) return i;
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
      out.pool.splice(poolIndex(out.pool, item, layout.rank), 0, item);
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

  /* What the attempts line says: "3 attempts", "2 attempts left", "no attempts left". */
  function attemptsText(left, fresh) {
    if (fresh) return plural(left, "attempt");
    return (left ? plural(left, "attempt") : "no attempts") + " left";
  }

  /* The deepest level a learner may give a line: one past the deepest the puzzle uses. */
  function maxLevel(judge) { return judge.levels ? Math.max.apply(null, judge.levels.concat([0])) + 1 : 0; }

  /* A line's level one step in (+1) or out (-1); null when it is at the edge already. */
  function indent(level, step, max) {
    var to = level + step;
    return to < 0 || to > max ? null : to;
  }

  /* The level a line dropped `dx` pixels right of the block's left edge takes, `unit` pixels a level. */
  function levelAt(dx, unit, max) { return Math.max(0, Math.min(max, Math.round(dx / unit))); }

  function levelText(level) { return level ? "indented " + plural(level, "level") : "not indented"; }

  /* The verdict on a block (`positions`, first line first, with `levels` in an indented puzzle): judge.js's,
   * which the Anki cards use too. */
  function verdict(positions, judge, levels) { return J.verdict(positions, judge, levels); }

  var api = {
    reset: reset, sequence: sequence, where: where, count: count, poolIndex: poolIndex, toggle: toggle,
    move: move, stuck: stuck, dropIndex: dropIndex, ATTEMPTS: ATTEMPTS, feedbackFor: J.feedbackFor, kept: J.kept,
    nearest: J.nearest, misplacedReason: J.misplacedReason, attemptsText: attemptsText, verdict: verdict,
    shuffle: J.shuffle, labelsFor: J.labelsFor, maxLevel: maxLevel, indent: indent, levelAt: levelAt,
    levelText: levelText
  };
  if (typeof module !== "undefined" && module.exports) module.exports = api;
  root.QuizgenOrder = api;
})(typeof window !== "undefined" ? window : this);
