/* quizgen answer judge: decides whether a learner's typed answer matches a card's executed answer.
 * Shared by the Anki note types and the HTML quiz; no dependencies, no network.
 * An answer is what the build computed: {type, value, dtype?, shape?} with type one of
 * none, bool, int, float, complex, str, shape, dtype, tensor, list, exception, repr. */
(function (root) {
  "use strict";

  var DTYPE_ALIASES = {
    float: "float32", double: "float64", half: "float16", long: "int64", int: "int32",
    short: "int16", cfloat: "complex64", cdouble: "complex128"
  };

  /* Answers as people write them: the twin of quizgen/spellings.py, rule for rule (its docstring lists
   * the spellings; tests/cases/judge_cases.json holds both to the same verdicts and reasons). */
  var NUM = "(?:\\d+\\.?\\d*|\\.\\d+)(?:e[-+]?\\d+)?|inf(?:inity)?|nan";
  var TOKEN = new RegExp("\\s*(?:([\\[(])|([\\])])|([,;])|([-+]?\\s*(?:" + NUM + ")(?:\\s*/\\s*(?:" + NUM +
    "))?j?)|(true|false|none|null)\\b)", "y");
  var KEYWORD = /,?\s*\b(?:requires_grad|grad_fn|dtype|device|layout)\s*=\s*(?:<[^>]*>|'[^']*'|"[^"]*"|[\w.:]+)/g;
  var WRAPPER = /[a-z_][\w.]*\s*\(/g;

  function norm(s) { return String(s == null ? "" : s).trim(); }

  function toNumber(x) {
    if (typeof x === "number") return x;
    var s = String(x).replace(/\s+/g, "").toLowerCase();
    var sign = s.charAt(0) === "-" ? -1 : 1;
    var body = s.replace(/^[-+]+/, "");
    if (body.indexOf("inf") === 0) return sign * Infinity;
    if (body === "nan") return NaN;
    return sign * Number(body);
  }

  /* Float formats narrower than JavaScript's number: significand bits, the exponent (as C's frexp gives
   * it) of the smallest normal number, the largest finite number (quizgen/display.py's FORMATS). */
  var FORMATS = {
    float16: [11, -13, 65504], bfloat16: [8, -125, 3.3895313892515355e38], float32: [24, -125, 3.4028234663852886e38]
  };

  /* `x` rounded to the nearest value of a narrower float format (ties to even), as a cast would. */
  function roundTo(x, dtype) {
    var f = FORMATS[dtype];
    if (!f || x === 0 || !isFinite(x)) return x;
    var e = Math.floor(Math.log2(Math.abs(x))) + 1; // |x| in [2^(e-1), 2^e), log2 may be off by one
    if (Math.pow(2, e - 1) > Math.abs(x)) e--; else if (Math.pow(2, e) <= Math.abs(x)) e++;
    var quantum = Math.pow(2, Math.max(e, f[1]) - f[0]), q = x / quantum, r = Math.round(q);
    if (Math.abs(q % 1) === 0.5 && r % 2 !== 0) r -= 1; // Math.round rounds ties up; a cast, to even
    var rounded = r * quantum;
    return Math.abs(rounded) > f[2] ? (x < 0 ? -Infinity : Infinity) : rounded;
  }

  function realPart(dtype) {
    return { complex64: "float32", complex32: "float16", complex128: "float64" }[dtype || ""] || dtype;
  }

  /* |got - want| <= atol + rtol * |want|; with a narrow float dtype, a number that casts to `want` too,
   * unless it only underflows to a zero answer (1e-8 in float16 is 0: the lesson, not a spelling). */
  function close(got, want, tol, dtype) {
    got = toNumber(got); want = toNumber(want);
    if (isNaN(want) || isNaN(got)) return isNaN(want) && isNaN(got);
    if (!isFinite(want) || !isFinite(got)) return got === want;
    if (FORMATS[dtype] && (want !== 0 || got === 0) && roundTo(got, dtype) === want) return true;
    return Math.abs(got - want) <= tol.atol + tol.rtol * Math.abs(want);
  }

  function atomOf(token) {
    var s = token.replace(/\s+/g, "");
    var imaginary = s.charAt(s.length - 1) === "j";
    var parts = (imaginary ? s.slice(0, -1) : s).split("/");
    var x = toNumber(parts[0]);
    if (parts.length > 1) {
      var below = toNumber(parts[1]);
      if (below === 0) return null;
      x = x / below;
    }
    return imaginary ? { tag: "cplx", x: 0, im: x } : { tag: "num", x: x, im: 0 };
  }

  /* Parentheses around one value are grouping, not a level: (2+4j), tensor(8.). */
  function groupValue(g) {
    return g.bracket !== "[" && !g.commas && g.items.length === 1 ? g.items[0] : g.items;
  }

  /* Typed text as nested arrays of atoms, or null when it is not a value. */
  function parse(text) {
    var s = norm(text).toLowerCase().replace(KEYWORD, "").replace(WRAPPER, "(");
    var stack = [{ bracket: "", items: [], commas: false }];
    var pos = 0, realBefore = false;
    while (s.slice(pos).trim()) {
      TOKEN.lastIndex = pos;
      var m = TOKEN.exec(s);
      if (m === null) return null;
      pos = TOKEN.lastIndex;
      var top = stack[stack.length - 1], real = false;
      if (m[1]) {
        stack.push({ bracket: m[1], items: [], commas: false });
      } else if (m[2]) {
        if (stack.length === 1 || "([".indexOf(top.bracket) !== ")]".indexOf(m[2])) return null;
        stack.pop();
        stack[stack.length - 1].items.push(groupValue(top));
      } else if (m[3]) {
        top.commas = true;
      } else if (m[4]) {
        var atom = atomOf(m[4]);
        if (atom === null) return null;
        if (realBefore && atom.tag === "cplx" && "+-".indexOf(m[4].trim().charAt(0)) >= 0) {
          atom = { tag: "cplx", x: top.items.pop().x, im: atom.im };
        }
        real = atom.tag === "num";
        top.items.push(atom);
      } else {
        var none = m[5] === "none" || m[5] === "null";
        top.items.push(none ? { tag: "none", x: null, im: 0 } : { tag: "bool", x: m[5] === "true", im: 0 });
      }
      realBefore = real;
    }
    if (stack.length !== 1 || !stack[0].items.length) return null;
    return groupValue(stack[0]);
  }

  function flatten(v, out) {
    out = out || [];
    if (Array.isArray(v)) { for (var i = 0; i < v.length; i++) flatten(v[i], out); } else out.push(v);
    return out;
  }

  /* The shape of equally nested arrays (atoms and JSON leaves have shape []), null when ragged. */
  function shapeOf(v) {
    if (!Array.isArray(v)) return [];
    var inner = v.map(shapeOf);
    for (var i = 0; i < inner.length; i++) {
      if (inner[i] === null || String(inner[i]) !== String(inner[0])) return null;
    }
    return [v.length].concat(inner.length ? inner[0] : []);
  }

  function kindOf(answer) {
    var dtype = String(answer.dtype || "");
    if (dtype === "bool") return "bool";
    return answer.type === "complex" || dtype.indexOf("complex") === 0 ? "complex" : "number";
  }

  function same(atom, want, kind, masked, tol, dtype) {
    if (kind === "bool") {
      if (atom.tag === "bool") return atom.x === want;
      return masked && atom.tag === "num" && (atom.x === 0 || atom.x === 1) && (atom.x === 1) === want;
    }
    if (kind === "complex" && want !== null && typeof want === "object") {
      var part = realPart(dtype);
      return (atom.tag === "num" || atom.tag === "cplx") && close(atom.x, want.re, tol, part) &&
        close(atom.im, want.im, tol, part);
    }
    return atom.tag === "num" && close(atom.x, want, tol, dtype);
  }

  /* What a number, complex, tensor or list answer wants, e.g. "expected 3 numbers". */
  function expected(answer, one) {
    var count = flatten(answer.value).length;
    var noun = { bool: "values", complex: "complex numbers" }[kindOf(answer)] || "numbers";
    return count === 1 ? "expected " + one + " number" : "expected " + count + " " + noun;
  }

  /* A read value against a number, complex, tensor or list answer: the same elements in order within
   * the tolerance, and, when the value is nested, the answer's shape. */
  function agree(tree, answer, tol) {
    var wanted = flatten(answer.value);
    var listLike = answer.type === "tensor" || answer.type === "list";
    var shape = listLike ? (answer.shape || shapeOf(answer.value)) : [];
    if (answer.type === "list" && !Array.isArray(tree)) return result(false, "expected a list");
    var got = flatten(tree);
    if (got.length !== wanted.length) return result(false, expected(answer, "one"));
    var nesting = shapeOf(tree);
    if ((nesting === null || nesting.length >= 2) && String(nesting) !== String(shape)) {
      return result(false, "the brackets do not match the answer's shape");
    }
    var kind = kindOf(answer), masked = shape.length > 0;
    return result(got.every(function (a, i) { return same(a, wanted[i], kind, masked, tol, answer.dtype); }), "");
  }

  function word(text) {
    var s = norm(text).toLowerCase().replace(/^tensor\(|\)$/g, "");
    if (["true", "yes", "y"].indexOf(s) >= 0) return true;
    if (["false", "no", "n"].indexOf(s) >= 0) return false;
    return null;
  }

  function dtypeName(s) {
    s = norm(s).toLowerCase().replace(/^torch\./, "");
    return DTYPE_ALIASES[s] || s;
  }

  function shapeText(text, want) {
    var lower = text.toLowerCase();
    var dims = lower === "scalar" ? [] : (lower.match(/\d+/g) || []).map(Number);
    return String(dims) === String(want) && dims.length === want.length;
  }

  function exceptionName(text) {
    var m = /([A-Za-z_][A-Za-z0-9_.]*(?:Error|Exception|Warning|Interrupt|Exit|Iteration))/.exec(norm(text));
    return m ? m[1].split(".").pop() : null;
  }

  function result(ok, reason) { return { ok: ok, reason: reason || "" }; }

  function has(obj, key) { return obj != null && Object.prototype.hasOwnProperty.call(obj, key); }

  /* Judge a typed answer; `tol` is {rtol, atol}. Returns {ok, reason}. */
  function judgeValue(input, answer, tol) {
    tol = tol || { rtol: 1e-3, atol: 1e-6 };
    var s = norm(input);
    if (!s) return result(false, "no answer given");
    var want = answer.value;
    switch (answer.type) {
      case "none":
        return result(["none", "null", "nothing"].indexOf(s.toLowerCase()) >= 0, "the answer is None");
      case "bool":
        return result(word(s) === want, "the answer is " + (want ? "True" : "False"));
      case "str":
        return result(s.replace(/^(['"])([\s\S]*)\1$/, "$2") === want, "");
      case "dtype":
        return result(dtypeName(s) === dtypeName(want), "");
      case "shape":
        return result(shapeText(s, want || []), "");
      case "exception": {
        var name = exceptionName(s);
        return result(name !== null && name.toLowerCase() === String(want).toLowerCase(), "");
      }
      case "repr":
        return result(s.replace(/\s+/g, "") === norm(want).replace(/\s+/g, ""), "");
      default: {
        var tree = parse(s);
        return tree === null ? result(false, expected(answer, "a")) : agree(tree, answer, tol);
      }
    }
  }

  /* ---- order puzzles ----
   * `card` is the judge data an order card carries: {labels: ["A", ...], items: [line index, or -1 - k for
   * distractor k, per label], orders: [[line, ...], ...] or before: [[a, b], ...] (line a comes before
   * line b; the accepted orders are exactly those keeping every pair: no list is shipped then), levels:
   * [level per label] when indentation is part of the answer, placements: [[[line, level], ...], ...] the
   * accepted orders that put a line at another level than its own (indented puzzles, when there are),
   * feedback: {"1 0 2": "message", "-1": ..., "0@0 -1@2 2@1": one arrangement (indented)}, attempts}. */

  /* Labels typed as "B A C", "BAC", "b,a,c" or "2 1 3" -> the labels, upper-cased. */
  function parseOrder(input, labels) {
    var s = norm(input).toUpperCase();
    var tokens = s.split(/[\s,;>\-]+/).filter(Boolean);
    if (tokens.length === 1 && tokens[0].length > 1 && /^[A-Z]+$/.test(tokens[0])) tokens = tokens[0].split("");
    return tokens.map(function (t) { return byNumber(t, labels); });
  }

  function byNumber(t, labels) {
    if (/^\d+$/.test(t) && labels.indexOf(t) < 0) { var k = Number(t) - 1; return labels[k] || t; }
    return t;
  }

  /* An indented puzzle's typed order: one ">" per level before a label, "A B >C >>D E" (spaces, commas
   * optional: "AB>C>>DE") -> {labels, levels}. */
  function parseIndented(input, labels) {
    var s = norm(input).toUpperCase(), out = { labels: [], levels: [] }, level = 0, i = 0;
    while (i < s.length) {
      var c = s.charAt(i);
      if (c === ">") { level++; i++; continue; }
      if (/[\s,;\-]/.test(c)) { i++; continue; }
      var digits = /^\d+/.exec(s.slice(i)), token = digits ? digits[0] : c;
      out.labels.push(byNumber(token, labels));
      out.levels.push(level);
      level = 0;
      i += token.length;
    }
    return out;
  }

  /* How many lines an accepted order has (the items that are not distractors). */
  function lineCount(card) {
    return card.items.filter(function (line) { return line >= 0; }).length;
  }

  /* Whether these lines (first first) are an accepted order: by the "before" pairs, else by the list. */
  function accepts(lines, card) {
    if (card.before) {
      var n = lineCount(card), place = {};
      if (lines.length !== n) return false;
      for (var i = 0; i < n; i++) {
        if (!(lines[i] >= 0 && lines[i] < n) || has(place, lines[i])) return false;
        place[lines[i]] = i;
      }
      return card.before.every(function (pair) { return place[pair[0]] < place[pair[1]]; });
    }
    var key = lines.join(",");
    return card.orders.some(function (order) { return order.join(",") === key; });
  }

  /* Typed labels -> positions in `card.items`, or {reason} for a label no line has. */
  function positionsOf(typed, card) {
    var positions = [];
    for (var i = 0; i < typed.length; i++) {
      var at = card.labels.indexOf(typed[i]);
      if (at < 0) return { reason: "there is no line " + typed[i] };
      positions.push(at);
    }
    return { positions: positions };
  }

  /* The verdict on a typed order: {ok, reason, misplaced: positions to mark, positions, levels}. */
  function judgeOrder(input, card) {
    var typed = card.levels ? parseIndented(input, card.labels) : { labels: parseOrder(input, card.labels), levels: null };
    if (!typed.labels.length) return orderResult(false, "no order given");
    var found = positionsOf(typed.labels, card);
    if (found.reason) return orderResult(false, found.reason);
    var out = verdict(found.positions, card, typed.levels);
    out.positions = found.positions;
    out.levels = typed.levels;
    return out;
  }

  function orderResult(ok, reason, misplaced) { return { ok: ok, reason: reason || "", misplaced: misplaced || [] }; }

  /* An order given as positions in `card.items` (what a drag-and-drop list holds), first line first, with
   * each one's level in an indented puzzle: {ok, reason}, the reason only for a block that cannot be
   * right whatever its order (empty, a line that does not exist or does not belong). */
  function judgeOrderItems(positions, card, levels) {
    if (!positions.length) return result(false, "no order given");
    var lines = [];
    for (var i = 0; i < positions.length; i++) {
      var at = positions[i];
      if (!(at >= 0 && at < card.items.length)) return result(false, "there is no line " + at);
      if (card.items[at] < 0) return result(false, "line " + card.labels[at] + " does not belong in the block");
      lines.push(card.items[at]);
    }
    return result((accepts(lines, card) && misindented(positions, card, levels).length === 0) || placed(lines, levels, card), "");
  }

  /* Whether the lines at these levels are one of the accepted placements with a line at another level
   * than its own (card.placements). */
  function placed(lines, levels, card) {
    if (!card.placements || !levels) return false;
    var key = lines.map(function (line, i) { return line + "@" + (levels[i] || 0); }).join(" ");
    return card.placements.some(function (order) {
      return order.map(function (pair) { return pair[0] + "@" + pair[1]; }).join(" ") === key;
    });
  }

  /* The positions whose level is not the line's (none when indentation is not part of the answer). */
  function misindented(positions, card, levels) {
    if (!card.levels) return [];
    return positions.filter(function (at, i) { return !levels || (levels[i] || 0) !== card.levels[at]; });
  }

  /* The build's message for a mistake (`lines` as line numbers, distractor k as -1 - k, with `levels` in
   * an indented puzzle): the one for this exact order, else the one for the first distractor used that
   * has one; "" when there is none. In an indented puzzle only the message for this exact arrangement,
   * each line at its level ("0@0 -1@2 2@1"): what the build ran for one arrangement says nothing of
   * another (a distractor one level out may compile where the one it ran did not). */
  function feedbackFor(lines, feedback, levels) {
    if (levels) {
      var arranged = lines.map(function (line, i) { return line + "@" + (levels[i] || 0); }).join(" ");
      return has(feedback, arranged) ? feedback[arranged] : "";
    }
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

  /* For "before" pairs over lines 0..n-1: after[a] is the set (a bit mask) of lines that must follow a. */
  function closure(before, n) {
    var after = new Array(n).fill(0), changed = true;
    before.forEach(function (pair) { after[pair[0]] |= 1 << pair[1]; });
    while (changed) {
      changed = false;
      for (var a = 0; a < n; a++) {
        var grown = after[a];
        for (var b = 0; b < n; b++) if (after[a] >> b & 1) grown |= after[b];
        if (grown !== after[a]) { after[a] = grown; changed = true; }
      }
    }
    return after;
  }

  /* The places of `lines` (each line once) to move so that they keep the "before" pairs: the fewest, and
   * among as few the earliest (as the list's nearest order marks them). */
  function misplacedByGraph(lines, before) {
    var n = lines.length, after = closure(before, n), clash = new Array(n).fill(0), i, j;
    for (i = 0; i < n; i++) {
      for (j = i + 1; j < n; j++) if (after[lines[j]] >> lines[i] & 1) { clash[i] |= 1 << j; clash[j] |= 1 << i; }
    }
    var fits = new Uint8Array(1 << n), best = 0, bestSize = 0;
    fits[0] = 1;
    for (var mask = 1; mask < 1 << n; mask++) {
      var low = 31 - Math.clz32(mask & -mask), rest = mask & (mask - 1);
      fits[mask] = fits[rest] && !(clash[low] & rest) ? 1 : 0;
      if (!fits[mask]) continue;
      var size = 0;
      for (var m = mask; m; m &= m - 1) size++;
      if (size >= bestSize) { best = mask; bestSize = size; } // ties: the later mask keeps later places
    }
    var misplaced = [];
    for (i = 0; i < n; i++) if (!(best >> i & 1)) misplaced.push(i);
    return misplaced;
  }

  /* "lines B and D are out of place: ..." for the labels of misplaced lines (`what`: "out of place" or
   * "indented wrong"). */
  function misplacedReason(labels, what) {
    var names = labels.length > 1 ? labels.slice(0, -1).join(", ") + " and " + labels[labels.length - 1] : labels[0];
    var many = labels.length > 1, is = many ? "lines " + names + " are " : "line " + names + " is ";
    if (what === "indented wrong") return is + "indented wrong: the order is right, change " + (many ? "their levels" : "its level");
    return is + "out of place: move " + (many ? "them" : "it") + " and your block is an accepted order";
  }

  /* The verdict on a block (`positions`, first line first, with `levels` in an indented puzzle) for a
   * card's judge data: {ok, reason, misplaced}. A wrong block gets the build's message for that mistake
   * when it has one (card.feedback), else why it is wrong: a line that does not belong, the wrong number
   * of lines, the lines out of place against the nearest accepted order, or the lines indented wrong
   * (`misplaced`, as positions, to be marked). */
  function verdict(positions, card, levels) {
    var basic = judgeOrderItems(positions, card, levels);
    var out = orderResult(basic.ok, basic.reason);
    var valid = positions.every(function (at) { return at >= 0 && at < card.items.length; });
    if (out.ok || !positions.length || !valid) return out;
    var lines = positions.map(function (at) { return card.items[at]; });
    var needed = lineCount(card), said = feedbackFor(lines, card.feedback, card.levels ? levels || [] : null);
    var what = "out of place";
    if (said) {
      out.reason = said;
    } else if (!out.reason && positions.length !== needed) {
      out.reason = "the block has " + positions.length + " line" + (positions.length === 1 ? "" : "s") + "; it needs " + needed;
    } else if (!out.reason && new Set(positions).size !== positions.length) {
      var twice = positions.filter(function (at, i) { return positions.indexOf(at) !== i; })[0];
      out.reason = "line " + card.labels[twice] + " is given twice";
    } else if (!out.reason && accepts(lines, card)) {
      out.misplaced = misindented(positions, card, levels);
      out.indentation = true; // the marks are for lines indented wrong
      what = "indented wrong";
    } else if (!out.reason && card.before) {
      out.misplaced = misplacedByGraph(lines, card.before).map(function (at) { return positions[at]; });
    } else if (!out.reason) {
      var near = nearest(lines, card.orders);
      if (near) out.misplaced = near.misplaced.map(function (at) { return positions[at]; });
    }
    if (out.misplaced.length) out.reason = misplacedReason(out.misplaced.map(function (at) { return card.labels[at]; }), what);
    if (out.misplaced.length && what === "out of place") out.reason = withLevels(out.reason, positions, card, levels);
    return out;
  }

  /* An indented puzzle's "out of place" reason when some lines are at other levels than their own too:
   * moving the lines alone would not give an accepted block, so the reason names those lines as well. */
  function withLevels(reason, positions, card, levels) {
    var off = misindented(positions, card, levels).map(function (at) { return card.labels[at]; });
    if (!off.length) return reason;
    var names = off.length > 1 ? "lines " + off.slice(0, -1).join(", ") + " and " + off[off.length - 1] + " their levels" : "line " + off[0] + " its level";
    return reason.replace(/ and your block is an accepted order$/, ", give " + names + ", and your block is an accepted order");
  }

  /* A new order for n lines (`random` gives numbers in [0, 1)), never `previous` again when n > 1: the
   * learner sees a new shuffle each time the card is shown. */
  function shuffle(n, random, previous) {
    var order = [];
    for (var tries = 0; tries < 10; tries++) {
      order = [];
      for (var i = 0; i < n; i++) order.push(i);
      for (i = n - 1; i > 0; i--) {
        var j = Math.floor(random() * (i + 1)), t = order[i];
        order[i] = order[j];
        order[j] = t;
      }
      if (n < 2 || !previous || order.join(",") !== previous.join(",")) break;
    }
    return order;
  }

  /* The labels for a shuffle: the item shown first is A, the next B, ...; labels[item] is its label. */
  function labelsFor(order) {
    var labels = [];
    order.forEach(function (item, at) { labels[item] = String.fromCharCode(65 + at); });
    return labels;
  }

  /* The labels of an accepted order, e.g. "C A B D". */
  function orderLabels(order, card) {
    return order.map(function (line) { return card.labels[card.items.indexOf(line)]; }).join(" ");
  }

  /* A value card's wrong typed answer that is what a variant (an executed misconception) gives: that
   * variant's feedback, else "". `card.choices` holds the right answer first, then the variants'. */
  function variantFeedback(input, card) {
    var choices = (card && card.choices) || [];
    for (var i = 1; i < choices.length; i++) {
      if (judgeValue(input, choices[i].answer, card.tolerance).ok) return choices[i].feedback;
    }
    return "";
  }

  /* A message's Markdown code spans (a run of n backticks up to the next run of exactly n, one space
   * trimmed from each side when both have one) as [{code, text}]: each client writes the pieces as text
   * and <code> elements with textContent, so feedback and variant labels read as Markdown, no HTML parsed. */
  function codeSpans(message) {
    var text = String(message), out = [], plain = "", i = 0, runs = /`+/g, m;
    function flush() { if (plain) out.push({ code: false, text: plain }); plain = ""; }
    while (i < text.length) {
      runs.lastIndex = i;
      m = runs.exec(text);
      if (!m) break;
      plain += text.slice(i, m.index);
      var fence = m[0].length, close = -1, n;
      while ((n = runs.exec(text))) if (n[0].length === fence) { close = n.index; break; }
      if (close < 0) { plain += m[0]; i = m.index + fence; continue; }
      var body = text.slice(m.index + fence, close).replace(/\n/g, " ");
      if (/^ [\s\S]*\S[\s\S]* $/.test(body)) body = body.slice(1, -1);
      flush();
      out.push({ code: true, text: body });
      i = close + fence;
    }
    plain += text.slice(i);
    flush();
    return out;
  }

  /* A message's inline Markdown as [{tag, text}] pieces, tag "" (text), "code", "strong" or "em": code
   * spans first (codeSpans), then `**strong**` / `__strong__` and `*em*` / `_em_` in the text between
   * them (not nested; `_` only at word edges, so `zero_grad` stays a word). Each client writes the pieces
   * with textContent into <code>, <strong> and <em>: no HTML is ever parsed. */
  function inlinePieces(message) {
    var out = [];
    codeSpans(message).forEach(function (piece) {
      if (piece.code) { out.push({ tag: "code", text: piece.text }); return; }
      var text = piece.text, at = 0, m;
      var marks = /(\*\*|__)(?=\S)([\s\S]*?\S)\1|(\*|_)(?=\S)([\s\S]*?\S)\3/g;
      while ((m = marks.exec(text))) {
        var mark = m[1] || m[3], before = text.charAt(m.index - 1), after = text.charAt(m.index + m[0].length);
        if (mark.charAt(0) === "_" && (/\w/.test(before) || /\w/.test(after))) {
          marks.lastIndex = m.index + 1;  // intraword underscores are not emphasis
          continue;
        }
        if (m.index > at) out.push({ tag: "", text: text.slice(at, m.index) });
        out.push({ tag: m[1] ? "strong" : "em", text: m[2] || m[4] });
        at = m.index + m[0].length;
      }
      if (at < text.length) out.push({ tag: "", text: text.slice(at) });
    });
    return out;
  }

  var api = {
    codeSpans: codeSpans,
    inlinePieces: inlinePieces,
    judgeValue: judgeValue, judgeOrder: judgeOrder, judgeOrderItems: judgeOrderItems, parseOrder: parseOrder,
    parseIndented: parseIndented, accepts: accepts, placed: placed, verdict: verdict, feedbackFor: feedbackFor, kept: kept,
    nearest: nearest, misplacedByGraph: misplacedByGraph, misplacedReason: misplacedReason, lineCount: lineCount,
    orderLabels: orderLabels, shuffle: shuffle, labelsFor: labelsFor, close: close
  };
  api.roundTo = roundTo;
  api.variantFeedback = variantFeedback;
  if (typeof module !== "undefined" && module.exports) module.exports = api;
  root.QuizgenJudge = api;
})(typeof window !== "undefined" ? window : this);
