/* quizgen answer judge: decides whether a learner's typed answer matches a card's executed answer.
 * Shared by the Anki note types and the HTML quiz; no dependencies, no network.
 * An answer is what the build computed: {type, value, dtype?, shape?} with type one of
 * none, bool, int, float, str, shape, dtype, tensor, list, exception, repr. */
(function (root) {
  "use strict";

  var DTYPE_ALIASES = {
    float: "float32", double: "float64", half: "float16", long: "int64", int: "int32",
    short: "int16", cfloat: "complex64", cdouble: "complex128"
  };
  var NUMBER = /[-+]?(?:\d+\.?\d*|\.\d+)(?:e[-+]?\d+)?|[-+]?inf(?:inity)?|nan/gi;

  function norm(s) { return String(s == null ? "" : s).trim(); }

  function toNumber(x) {
    if (typeof x === "number") return x;
    var s = String(x).trim().toLowerCase();
    if (s === "nan") return NaN;
    if (s === "inf" || s === "+inf" || s === "infinity") return Infinity;
    if (s === "-inf" || s === "-infinity") return -Infinity;
    return Number(s);
  }

  function close(got, want, tol) {
    got = toNumber(got); want = toNumber(want);
    if (isNaN(want) || isNaN(got)) return isNaN(want) && isNaN(got);
    if (!isFinite(want) || !isFinite(got)) return got === want;
    return Math.abs(got - want) <= tol.atol + tol.rtol * Math.abs(want);
  }

  function flatten(v, out) {
    out = out || [];
    if (Array.isArray(v)) { for (var i = 0; i < v.length; i++) flatten(v[i], out); } else out.push(v);
    return out;
  }

  /* One number typed as "8", "8.0", "-1e-3", "1/3", "tensor(8.)" or "tensor([8.])". */
  function parseScalar(text) {
    var s = norm(text).toLowerCase().replace(/^tensor\(/, "").replace(/\)$/, "")
      .replace(/,\s*(requires_grad|grad_fn|dtype)=.*$/, "").replace(/^\[+|\]+$/g, "").trim();
    var frac = /^([-+]?\d+(?:\.\d*)?)\s*\/\s*([-+]?\d+(?:\.\d*)?)$/.exec(s);
    if (frac) return Number(frac[1]) / Number(frac[2]);
    if (!/^([-+]?(?:\d+\.?\d*|\.\d+)(?:e[-+]?\d+)?|[-+]?inf(inity)?|nan)$/.test(s)) return null;
    return toNumber(s);
  }

  function numbersIn(text) {
    var s = norm(text).toLowerCase().replace(/(requires_grad|grad_fn|dtype)=[^,)\]]*/g, "");
    return (s.match(NUMBER) || []).map(toNumber);
  }

  function bool(text) {
    var s = norm(text).toLowerCase().replace(/^tensor\(|\)$/g, "");
    if (["true", "yes", "y"].indexOf(s) >= 0) return true;
    if (["false", "no", "n"].indexOf(s) >= 0) return false;
    return null;
  }

  function dtypeName(s) {
    s = norm(s).toLowerCase().replace(/^torch\./, "");
    return DTYPE_ALIASES[s] || s;
  }

  function exceptionName(text) {
    var m = /([A-Za-z_][A-Za-z0-9_.]*(?:Error|Exception|Warning|Interrupt|Exit|Iteration))/.exec(norm(text));
    return m ? m[1].split(".").pop() : null;
  }

  function result(ok, reason) { return { ok: ok, reason: reason || "" }; }

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
        return result(bool(s) === want, "the answer is " + (want ? "True" : "False"));
      case "int":
      case "float": {
        var x = parseScalar(s);
        if (x === null) return result(false, "expected a number");
        return result(close(x, want, tol), "");
      }
      case "str":
        return result(s.replace(/^(['"])(.*)\1$/, "$2") === want, "");
      case "dtype":
        return result(dtypeName(s) === dtypeName(want), "");
      case "shape": {
        var lower = s.toLowerCase();
        var dims = lower.match(/\d+/g) || [];
        if (lower === "scalar") dims = [];
        return result(dims.length === want.length && dims.every(function (d, i) { return Number(d) === want[i]; }), "");
      }
      case "tensor":
      case "list": {
        var flat = flatten(want);
        if (answer.dtype === "bool") {
          var words = s.toLowerCase().match(/true|false/g) || [];
          return result(words.length === flat.length && words.every(function (w, i) { return (w === "true") === flat[i]; }), "");
        }
        var got = numbersIn(s);
        if (flat.length === 1 && got.length !== 1) return result(false, "expected one number");
        return result(got.length === flat.length && got.every(function (g, i) { return close(g, flat[i], tol); }),
          got.length === flat.length ? "" : "expected " + flat.length + " numbers");
      }
      case "exception": {
        var name = exceptionName(s);
        return result(name !== null && name.toLowerCase() === String(want).toLowerCase(), "");
      }
      default:
        return result(s.replace(/\s+/g, " ") === norm(want).replace(/\s+/g, " "), "");
    }
  }

  /* Labels typed as "B A C", "BAC", "b,a,c" or "2 1 3" -> the labels, upper-cased. */
  function parseOrder(input, labels) {
    var s = norm(input).toUpperCase();
    var tokens = s.split(/[\s,;>\-]+/).filter(Boolean);
    if (tokens.length === 1 && tokens[0].length > 1 && /^[A-Z]+$/.test(tokens[0])) tokens = tokens[0].split("");
    return tokens.map(function (t) {
      if (/^\d+$/.test(t) && labels.indexOf(t) < 0) { var k = Number(t) - 1; return labels[k] || t; }
      return t;
    });
  }

  /* `card`: {labels: ["A", ...], items: [line index or -1-distractor, ...] per label, orders: [[line...]]}. */
  function judgeOrder(input, card) {
    var typed = parseOrder(input, card.labels);
    if (!typed.length) return result(false, "no order given");
    var positions = [];
    for (var i = 0; i < typed.length; i++) {
      var at = card.labels.indexOf(typed[i]);
      if (at < 0) return result(false, "there is no line " + typed[i]);
      positions.push(at);
    }
    return judgeOrderItems(positions, card);
  }

  /* An order given as positions in `card.items` (what a drag-and-drop list holds), first line first. */
  function judgeOrderItems(positions, card) {
    if (!positions.length) return result(false, "no order given");
    var lines = [];
    for (var i = 0; i < positions.length; i++) {
      var at = positions[i];
      if (!(at >= 0 && at < card.items.length)) return result(false, "there is no line " + at);
      if (card.items[at] < 0) return result(false, "line " + card.labels[at] + " does not belong in the block");
      lines.push(card.items[at]);
    }
    var key = lines.join(",");
    for (var j = 0; j < card.orders.length; j++) {
      if (card.orders[j].join(",") === key) return result(true, "");
    }
    return result(false, "");
  }

  /* The labels of an accepted order, e.g. "C A B D". */
  function orderLabels(order, card) {
    return order.map(function (line) { return card.labels[card.items.indexOf(line)]; }).join(" ");
  }

  var api = {
    judgeValue: judgeValue, judgeOrder: judgeOrder, judgeOrderItems: judgeOrderItems, parseOrder: parseOrder,
    orderLabels: orderLabels, close: close
  };
  if (typeof module !== "undefined" && module.exports) module.exports = api;
  root.QuizgenJudge = api;
})(typeof window !== "undefined" ? window : this);
