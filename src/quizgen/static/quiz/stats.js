/* quizgen statistics: reviews per day, retention and the due forecast of some cards (a deck's, or all),
 * from the progress store's review log and schedules, drawn as SVG bar charts by this file (no library,
 * nothing fetched). First pure functions on times and counts, then the drawing, which touches the page
 * only when called, so node loads this file. Times are epoch milliseconds; days are the browser's. */
(function (root) {
  "use strict";

  var F = root.QuizgenFSRS || require("./fsrs.js");
  var D = root.QuizgenDom || require("./dom.js");
  var SVG = "http://www.w3.org/2000/svg";
  var REVIEW_DAYS = 30, FORECAST_DAYS = 30, RETENTION_WEEKS = 12;
  var PROGRESS_EVENT = "quizgen-progress";

  /* Midnight, local time, of the day `t` falls in, and `n` days after it. */
  function dayStart(t) { var d = new Date(t); d.setHours(0, 0, 0, 0); return d.getTime(); }
  function addDays(t, n) { var d = new Date(t); d.setDate(d.getDate() + n); return d.getTime(); }

  function idSet(ids) { var set = {}; ids.forEach(function (id) { set[id] = true; }); return set; }

  /* [{day, count}] for the `days` days up to today: the reviews of `ids` rated each day. */
  function reviewsPerDay(log, ids, now, days) {
    var mine = idSet(ids), today = dayStart(now), out = [], at = {};
    for (var i = days - 1; i >= 0; i--) {
      var day = addDays(today, -i);
      at[day] = out.length;
      out.push({ day: day, count: 0 });
    }
    log.forEach(function (r) {
      var k = at[dayStart(r[0])];
      if (mine[r[1]] && k !== undefined) out[k].count++;
    });
    return out;
  }

  /* [{day (the week's first), passed, total}] for the `weeks` weeks up to today: of the reviews of cards
   * already learned (in review state), how many were remembered (rated Hard or better). */
  function retentionByWeek(log, ids, now, weeks) {
    var mine = idSet(ids), first = addDays(dayStart(now), -(7 * weeks - 1)), out = [];
    for (var w = 0; w < weeks; w++) out.push({ day: addDays(first, 7 * w), passed: 0, total: 0 });
    log.forEach(function (r) {
      if (!mine[r[1]] || r[3] !== F.REVIEW || r[0] < first) return;
      var k = Math.min(weeks - 1, Math.floor(Math.round((dayStart(r[0]) - first) / F.DAY) / 7));
      out[k].total++;
      if (r[2] > F.AGAIN) out[k].passed++;
    });
    return out;
  }

  /* The same over the last `days` days, in one figure: {passed, total}. */
  function retention(log, ids, now, days) {
    var mine = idSet(ids), since = addDays(dayStart(now), -(days - 1)), passed = 0, total = 0;
    log.forEach(function (r) {
      if (!mine[r[1]] || r[3] !== F.REVIEW || r[0] < since) return;
      total++;
      if (r[2] > F.AGAIN) passed++;
    });
    return { passed: passed, total: total };
  }

  /* [{day, count}] for today and the next days: how many of `ids` fall due each day (today counts the
   * overdue), and {overdue} beside it. */
  function forecast(progress, ids, now, days) {
    var today = dayStart(now), out = [], at = {}, overdue = 0;
    for (var i = 0; i < days; i++) {
      var day = addDays(today, i);
      at[day] = i;
      out.push({ day: day, count: 0 });
    }
    ids.forEach(function (id) {
      var card = progress.cards[id];
      if (!card) return;
      if (card.due < today) overdue++;
      var k = card.due < today ? 0 : at[dayStart(card.due)];
      if (k !== undefined) out[k].count++;
    });
    return { days: out, overdue: overdue };
  }

  function sum(xs, key) { return xs.reduce(function (n, x) { return n + x[key]; }, 0); }
  function percent(passed, total) { return total ? Math.round((100 * passed) / total) + "%" : "no reviews"; }

  function reviewsText(per) {
    var total = sum(per, "count");
    return D.plural(total, "review") + " in the last " + per.length + " days, " + per[per.length - 1].count + " today.";
  }

  function retentionText(r, days) {
    if (!r.total) return "No learned card was reviewed in the last " + days + " days.";
    return "Remembered " + percent(r.passed, r.total) + " of learned cards in the last " + days + " days (" +
      r.passed + " of " + D.plural(r.total, "review") + ").";
  }

  function forecastText(f) {
    var week = sum(f.days.slice(0, 7), "count");
    return f.days[0].count + " due today" + (f.overdue ? " (" + f.overdue + " overdue)" : "") + ", " + week +
      " in the next 7 days.";
  }

  function shortDate(t) { return new Date(t).toLocaleDateString(undefined, { month: "short", day: "numeric" }); }

  /* ---- drawing: one bar chart, an SVG named by its heading, its numbers also as a table ---- */

  function svg(name, attrs, parent) {
    var el = document.createElementNS(SVG, name);
    Object.keys(attrs).forEach(function (k) { el.setAttribute(k, String(attrs[k])); });
    if (parent) parent.appendChild(el);
    return el;
  }

  function html(name, text, parent, className) {
    var el = document.createElement(name);
    if (text !== undefined && text !== null) el.textContent = text;
    if (className) el.className = className;
    if (parent) parent.appendChild(el);
    return el;
  }

  /* A figure: heading, a sentence, the chart, and a table of the same numbers (collapsed).
   * spec: {id, title, text, bars: [{label, value, shown}], max, unit, width}. */
  function chart(spec) {
    var figure = html("figure", null, null, "chart");
    figure.id = spec.id;
    var heading = html("h3", spec.title, figure);
    heading.id = spec.id + "-title";
    var text = html("p", spec.text, figure, "chart-text");
    text.id = spec.id + "-text";
    var width = Math.max(260, Math.round(spec.width || 320)), height = 150;
    var left = 34, bottom = 22, top = 10, plotW = width - left - 6, plotH = height - top - bottom;
    var box = svg("svg", {
      viewBox: "0 0 " + width + " " + height, width: width, height: height, role: "img",
      "aria-labelledby": heading.id + " " + text.id, focusable: "false"
    }, figure);
    box.setAttribute("class", "chart-svg");
    var max = Math.max(spec.max || 0, 1);
    spec.bars.forEach(function (b) { max = Math.max(max, b.value); });
    // The axes, the top value and 0 (the numbers, in the table below too).
    svg("line", { x1: left, y1: top, x2: left + plotW, y2: top, "class": "chart-grid" }, box);
    svg("line", { x1: left, y1: top + plotH, x2: left + plotW, y2: top + plotH, "class": "chart-axis" }, box);
    svg("text", { x: left - 4, y: top + 4, "text-anchor": "end", "class": "chart-label" }, box).textContent =
      spec.unit === "%" ? max + "%" : String(max);
    svg("text", { x: left - 4, y: top + plotH, "text-anchor": "end", "class": "chart-label" }, box).textContent = "0";
    var n = spec.bars.length, step = plotW / n, barW = Math.max(1, step * 0.72);
    spec.bars.forEach(function (b, i) {
      var h = b.value > 0 ? Math.max(1, (b.value / max) * plotH) : 0, x = left + i * step + (step - barW) / 2;
      var bar = svg("rect", { x: x.toFixed(1), y: (top + plotH - h).toFixed(1), width: barW.toFixed(1),
        height: h.toFixed(1), "class": "chart-bar" }, box);
      svg("title", {}, bar).textContent = b.label + ": " + b.shown;
      if (i === 0 || i === n - 1 || i === Math.floor((n - 1) / 2)) {
        var anchor = i === 0 ? "start" : i === n - 1 ? "end" : "middle";
        var at = i === 0 ? left + i * step : i === n - 1 ? left + (i + 1) * step : x + barW / 2;
        svg("text", { x: at.toFixed(1), y: height - 6, "text-anchor": anchor, "class": "chart-label" }, box)
          .textContent = b.label;
      }
    });
    var details = html("details", null, figure, "chart-table");
    html("summary", "The numbers", details).tabIndex = 0; // a tab stop, like the setup's
    var table = html("table", null, details);
    var head = html("tr", null, html("thead", null, table));
    html("th", spec.columns[0], head).scope = "col";
    html("th", spec.columns[1], head).scope = "col";
    var body = html("tbody", null, table);
    spec.bars.forEach(function (b) {
      var row = html("tr", null, body);
      html("th", b.label, row).scope = "row";
      html("td", b.shown, row);
    });
    return figure;
  }

  /* Draw the statistics of `ids` into `place` (emptied first), as of `now`. */
  function draw(place, progress, ids, now) {
    var log = progress.log || [], width = place.clientWidth || 320;
    place.textContent = "";
    var per = reviewsPerDay(log, ids, now, REVIEW_DAYS);
    place.appendChild(chart({
      id: "chart-reviews", title: "Reviews per day", text: reviewsText(per), width: width,
      columns: ["Day", "Reviews"],
      bars: per.map(function (d) { return { label: shortDate(d.day), value: d.count, shown: String(d.count) }; })
    }));
    var weeks = retentionByWeek(log, ids, now, RETENTION_WEEKS);
    place.appendChild(chart({
      id: "chart-retention", title: "Retention", text: retentionText(retention(log, ids, now, REVIEW_DAYS), REVIEW_DAYS),
      width: width, unit: "%", max: 100, columns: ["Week from", "Remembered"],
      bars: weeks.map(function (w) {
        return {
          label: shortDate(w.day), value: w.total ? Math.round((100 * w.passed) / w.total) : 0,
          shown: w.total ? percent(w.passed, w.total) + " of " + w.total : "no reviews"
        };
      })
    }));
    var f = forecast(progress, ids, now, FORECAST_DAYS);
    place.appendChild(chart({
      id: "chart-forecast", title: "Due in the next " + FORECAST_DAYS + " days", text: forecastText(f), width: width,
      columns: ["Day", "Due"],
      bars: f.days.map(function (d) { return { label: shortDate(d.day), value: d.count, shown: String(d.count) }; })
    }));
  }

  /* The statistics section of a page: drawn now, and again after a review or an import (the page's
   * "quizgen-progress" event) and when its width changes. */
  function mount(place, store, ids) {
    if (!place) return;
    var lastWidth = place.clientWidth, timer = null;
    function refresh() { draw(place, store.load(), ids, Date.now()); lastWidth = place.clientWidth; }
    window.addEventListener("resize", function () {
      clearTimeout(timer);
      timer = setTimeout(function () { if (place.clientWidth !== lastWidth) refresh(); }, 150);
    });
    document.addEventListener(PROGRESS_EVENT, refresh);
    refresh();
  }

  /* Say that progress changed (a review rated, a file imported): the statistics redraw. */
  function changed() {
    if (typeof document !== "undefined") document.dispatchEvent(new Event(PROGRESS_EVENT));
  }

  var api = {
    dayStart: dayStart, addDays: addDays, reviewsPerDay: reviewsPerDay, retentionByWeek: retentionByWeek,
    retention: retention, forecast: forecast, reviewsText: reviewsText, retentionText: retentionText,
    forecastText: forecastText, draw: draw, mount: mount, changed: changed
  };
  if (typeof module !== "undefined" && module.exports) module.exports = api;
  root.QuizgenStats = api;
})(typeof window !== "undefined" ? window : this);
