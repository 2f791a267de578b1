/* lnworked explorers, kernel-free form (see lnworked/explore.py for the DOM contract).
 *
 * Each explorer is a <div class="lnw-explorer" data-explorer="..."> holding its controls,
 * its readouts, an <svg class="lnw-plot"> and a <script type="application/json"
 * class="lnw-data"> grid of values that the Python library computed at build time.
 * This script only looks values up in that grid and draws them: no formula of the book
 * is evaluated here. Every query is scoped to one explorer's root, so any number of
 * explorers can share a page. The script defines window.lnwExplore once; each explorer
 * then calls lnwExplore.init(its root's id).
 */
(function () {
  "use strict";
  if (window.lnwExplore) { return; }

  function control(root, name) { return root.querySelector('[name="' + name + '"]'); }
  function value(root, name) { return control(root, name).value; }

  /* A slider's grid position: round((value - min) / step), kept inside the slider's range. */
  function position(el) {
    var min = parseFloat(el.getAttribute("min")), max = parseFloat(el.getAttribute("max"));
    var step = parseFloat(el.getAttribute("step"));
    var i = Math.round((parseFloat(el.value) - min) / step);
    return Math.max(0, Math.min(i, Math.round((max - min) / step)));
  }
  function at(root, name) { return position(control(root, name)); }

  /* A series of the spec (key, label and colour come from the grid), with its values. */
  function series(data, key, label, values) {
    return { key: key, label: label || data.series[key].label, color: data.series[key].color, values: values };
  }

  function setText(root, selector, text) {
    var nodes = root.querySelectorAll(selector);
    for (var i = 0; i < nodes.length; i++) { nodes[i].textContent = text; }
  }
  function readout(root, key, text) { setText(root, '.lnw-readout[data-key="' + key + '"]', text); }
  function param(root, name, text) { setText(root, '.lnw-param[data-param="' + name + '"]', text); }

  /* A readout string as a number for drawing; "undefined (0/0)" and "never" give null. */
  function num(text) {
    var v = parseFloat(text);
    return isFinite(v) ? v : null;
  }

  /* ---- SVG drawing ------------------------------------------------------------------ */

  function node(svg, parent, tag, attrs, text) {
    var e = document.createElementNS(svg.namespaceURI, tag);
    for (var k in attrs) { if (Object.prototype.hasOwnProperty.call(attrs, k)) { e.setAttribute(k, attrs[k]); } }
    if (text !== undefined && text !== null) { e.textContent = text; }
    parent.appendChild(e);
    return e;
  }

  function clear(svg) { while (svg.firstChild) { svg.removeChild(svg.firstChild); } }

  /* Text sizes in canvas units. The wide canvas (520 units) is drawn at most 560 px wide, so 13 units
     are 14 px there; the phone's canvas (340 units) fills a phone's ~330 px, so 14 units are ~13.5 px. */
  var TEXT = 13, PHONE_TEXT = 14;

  /* The plot area inside the canvas: room on the left for the rotated y label and the y ticks'
     labels (yTicks, so the longest label fits, or minChars characters if more: panels one above the
     other then share their left edge), below for the x ticks' labels and the x label, and
     above for the legend's rows (legendRows). */
  function frame(svg, yTicks, rows, minChars) {
    var box = (svg.getAttribute("viewBox") || "0 0 520 280").split(/[ ,]+/);
    var w = parseFloat(box[2]), h = parseFloat(box[3]);
    var size = w < 480 ? PHONE_TEXT : TEXT, chars = minChars || 0;
    (yTicks || []).forEach(function (t) { chars = Math.max(chars, String(t.label).length); });
    return { w: w, h: h, text: size, left: Math.round(size + 10 + 0.62 * size * Math.max(chars, 2)),
      right: w - 14, top: 8 + (rows || 1) * (size + 6), bottom: h - (2 * size + 20) };
  }

  function fmtTick(v) {
    if (v === 0) { return "0"; }
    var a = Math.abs(v);
    if (a >= 1e4 || a < 1e-3) { return v.toExponential(0).replace("+", ""); }
    return String(parseFloat(v.toPrecision(3)));
  }

  function niceStep(span, count) {
    var raw = span / count, mag = Math.pow(10, Math.floor(Math.log10(raw))), r = raw / mag;
    return (r <= 1 ? 1 : r <= 2 ? 2 : r <= 5 ? 5 : 10) * mag;
  }

  function yScale(f, lo, hi, log) {
    if (log) {
      var a = Math.log10(lo), b = Math.log10(hi);
      return function (v) { return f.bottom - (Math.log10(v) - a) / (b - a) * (f.bottom - f.top); };
    }
    return function (v) { return f.bottom - (v - lo) / (hi - lo) * (f.bottom - f.top); };
  }

  function axes(svg, f, yTicks, y, xTicks, x, xLabel, yLabel) {
    var g = node(svg, svg, "g", { "class": "lnw-axes", fill: "currentColor", "font-size": String(f.text) });
    node(svg, g, "line", { x1: f.left, y1: f.bottom, x2: f.right, y2: f.bottom, stroke: "currentColor" });
    node(svg, g, "line", { x1: f.left, y1: f.top, x2: f.left, y2: f.bottom, stroke: "currentColor" });
    yTicks.forEach(function (t) {
      var py = y(t.v);
      node(svg, g, "line", { x1: f.left, y1: py, x2: f.right, y2: py, stroke: "currentColor", "stroke-opacity": "0.12" });
      node(svg, g, "text", { x: f.left - 5, y: py + 0.35 * f.text, "text-anchor": "end" }, t.label);
    });
    xTicks.forEach(function (t) {
      var px = x(t.v);
      node(svg, g, "line", { x1: px, y1: f.bottom, x2: px, y2: f.bottom + 4, stroke: "currentColor" });
      node(svg, g, "text", { x: px, y: f.bottom + 5 + f.text, "text-anchor": "middle" }, t.label);
    });
    /* the x label centred under the plot, moved inwards where it would run past the canvas */
    var label = node(svg, g, "text", { x: (f.left + f.right) / 2, y: f.h - 5, "text-anchor": "middle" }, xLabel);
    var half = (label.getComputedTextLength ? label.getComputedTextLength() : 0.55 * f.text * xLabel.length) / 2;
    var cx = Math.max(half + 2, Math.min((f.left + f.right) / 2, f.w - half - 2));
    label.setAttribute("x", cx);
    var ly = (f.top + f.bottom) / 2, lx = f.text + 1;
    var yText = node(svg, g, "text", { x: lx, y: ly, "text-anchor": "middle", transform: "rotate(-90 " + lx + " " + ly + ")" },
      typeof yLabel === "string" ? yLabel : null);
    /* a y label given as parts [text, "sub"?]: the "sub" parts drawn as subscripts (SVG has no <sub>) */
    if (typeof yLabel !== "string") {
      var shift = 0.3 * f.text, low = false;
      yLabel.forEach(function (p) {
        var sub = p[1] === "sub", attrs = sub ? { "font-size": String(0.75 * f.text) } : {};
        if (sub !== low) { attrs.dy = String(sub ? shift : -shift); }
        low = sub;
        node(svg, yText, "tspan", attrs, p[0]);
      });
    }
  }

  /* Legend entries left to right above the plot; an entry that would run past the canvas starts a new row. */
  function legendLayout(w, items) {
    var size = w < 480 ? PHONE_TEXT : TEXT, start = 8, px = start, rows = 1, at = [];
    items.forEach(function (it) {
      var width = 18 + 0.56 * size * it.label.length;
      if (px > start && px + width > w - 4) { px = start; rows += 1; }
      at.push({ x: px, row: rows - 1 });
      px += width + 10;
    });
    return { size: size, rows: rows, at: at };
  }
  function legendRows(svg, items) {
    var box = (svg.getAttribute("viewBox") || "0 0 520 280").split(/[ ,]+/);
    return legendLayout(parseFloat(box[2]), items).rows;
  }

  function legend(svg, f, items) {
    var lay = legendLayout(f.w, items), size = lay.size, row = size + 6;
    var g = node(svg, svg, "g", { "class": "lnw-legend", "font-size": String(size), fill: "currentColor" });
    items.forEach(function (it, i) {
      var px = lay.at[i].x, py = 4 + lay.at[i].row * row;
      var mid = py + 0.6 * size;
      if (it.dash) {   /* a dashed or dotted series: a short stroke of its own pattern */
        node(svg, g, "line", { x1: px, y1: mid, x2: px + 14, y2: mid, stroke: it.color, "stroke-width": "2",
          "stroke-dasharray": it.dash });
      } else {
        node(svg, g, "rect", { x: px, y: mid - 4.5, width: 14, height: 9, fill: it.color });
      }
      node(svg, g, "text", { x: px + 18, y: py + size - 1 }, it.label);
    });
  }

  /* Lines over x = xs; series values may be null (not drawn); marker = an x value. */
  function lineChart(svg, o) {
    clear(svg);
    var lo = Infinity, hi = -Infinity;
    var items = o.series.filter(function (s) { return !s.nolegend; })
      .map(function (s) { return { label: s.label, color: s.color, dash: s.dash }; });
    o.series.forEach(function (s) {
      s.values.forEach(function (v) {
        if (v !== null && (!o.log || v > 0)) { lo = Math.min(lo, v); hi = Math.max(hi, v); }
      });
    });
    if (o.yMin !== undefined) { lo = o.yMin; }
    if (o.yMax !== undefined) { hi = o.yMax; }
    var yTicks = [];
    if (o.log) {
      var a = Math.floor(Math.log10(lo)), b = Math.ceil(Math.log10(hi));
      if (b <= a) { b = a + 1; }
      var every = o.logEvery || Math.max(1, Math.ceil((b - a) / 6));   /* a tall panel may ask for every decade */
      a = Math.floor(a / every) * every; b = Math.ceil(b / every) * every;   /* ticks include 1 */
      for (var k = a; k <= b; k += every) { yTicks.push({ v: Math.pow(10, k), label: k === 0 ? "1" : "1e" + k }); }
      lo = Math.pow(10, a); hi = Math.pow(10, b);
    } else {
      if (hi <= lo) { hi = lo + 1; }
      var st = niceStep(hi - lo, o.tickCount || 5);
      if (o.nice) { lo = Math.floor(lo / st) * st; hi = Math.ceil(hi / st) * st; }   /* ends on ticks */
      for (var t = Math.ceil(lo / st) * st; t <= hi + 1e-9 * st; t += st) {
        yTicks.push({ v: t, label: fmtTick(Math.abs(t) < 1e-9 * st ? 0 : t) });   /* 0, not -6e-17 */
      }
    }
    var f = frame(svg, yTicks, legendRows(svg, items), o.tickChars);
    var x0 = o.xs[0], x1 = o.xs[o.xs.length - 1];
    var x = function (v) { return f.left + (v - x0) / (x1 - x0) * (f.right - f.left); };
    var y = yScale(f, lo, hi, o.log);
    var xTicks = o.xTicks.map(function (v) { return typeof v === "object" ? v : { v: v, label: String(v) }; });
    axes(svg, f, yTicks, y, xTicks, x, o.xLabel, o.yLabel);
    o.series.forEach(function (s) {
      var d = "", pen = "M";
      for (var i = 0; i < o.xs.length; i++) {
        var v = s.values[i];
        if (v === null || (o.log && v <= 0)) { if (!s.join) { pen = "M"; } continue; }   /* join: across gaps */
        var above = s.clipTop && v > hi;   /* off the panel's top: drawn on its edge, hollow */
        if (above) { v = hi; }
        d += pen + x(o.xs[i]).toFixed(1) + "," + y(v).toFixed(1) + " ";
        pen = "L";
        if (s.dots) {   /* a measured value among unmeasured steps: a dot on the line */
          var dot = { cx: x(o.xs[i]).toFixed(1), cy: y(v).toFixed(1), r: 3, fill: s.color, "class": "lnw-point",
            "data-series": s.key };
          if (above) { dot.r = 4; dot.fill = "white"; dot.stroke = s.color; dot["stroke-width"] = 2; dot["class"] += " lnw-above"; }
          node(svg, svg, "circle", dot);
        }
      }
      var attrs = { d: d, fill: "none", stroke: s.color, "stroke-width": s.width || "2", "class": "lnw-line", "data-series": s.key };
      if (s.opacity) { attrs["stroke-opacity"] = s.opacity; }
      if (s.dash) { attrs["stroke-dasharray"] = s.dash; }
      node(svg, svg, "path", attrs);
    });
    if (o.marker !== undefined) {
      var mx = x(o.marker);
      node(svg, svg, "line", { x1: mx, y1: f.top, x2: mx, y2: f.bottom, stroke: "currentColor", "stroke-dasharray": "4 3", "class": "lnw-marker" });
      o.series.forEach(function (s) {
        var v = s.values[o.xs.indexOf(o.marker)];
        if (v !== null && (!o.log || v > 0)) {
          node(svg, svg, "circle", { cx: mx, cy: y(v), r: 4, fill: s.color, "class": "lnw-dot", "data-series": s.key });
        }
      });
    }
    if (o.note) {   /* a line inside the panel, top left: e.g. which run has no values here */
      node(svg, svg, "text", { x: f.left + 6, y: f.top + f.text + 4, "font-size": String(f.text), fill: "currentColor",
        "class": "lnw-note" }, o.note);
    }
    [].concat(o.ref === undefined ? [] : o.ref).forEach(function (ref) {   /* one value or several */
      if (ref >= lo && ref <= hi) {
        node(svg, svg, "line", { x1: f.left, y1: y(ref), x2: f.right, y2: y(ref), stroke: "currentColor",
          "stroke-dasharray": "2 3", "class": "lnw-ref" });
      }
    });
    legend(svg, f, items);
  }

  /* Grouped bars: groups = component labels; series values may be null (drawn as "0/0"). */
  function barChart(svg, o) {
    clear(svg);
    var lo = 0, hi = 0;
    var items = o.series.map(function (s) { return { label: s.label, color: s.color }; });
    o.series.forEach(function (s) { s.values.forEach(function (v) { if (v !== null) { lo = Math.min(lo, v); hi = Math.max(hi, v); } }); });
    if (hi - lo < 1e-12) { hi = lo + 1; }
    var st = niceStep(hi - lo, 5);
    lo = Math.floor(lo / st) * st; hi = Math.ceil(hi / st) * st;
    var yTicks = [];
    for (var t = lo; t <= hi + 1e-9 * st; t += st) { yTicks.push({ v: t, label: fmtTick(Math.abs(t) < 1e-9 * st ? 0 : t) }); }
    var f = frame(svg, yTicks, legendRows(svg, items));
    var y = yScale(f, lo, hi, false);
    var n = o.groups.length, gw = (f.right - f.left) / n, bw = gw * 0.8 / o.series.length;
    axes(svg, f, yTicks, y, [], function (v) { return v; }, o.xLabel, o.yLabel);
    var g = node(svg, svg, "g", { "font-size": String(f.text), fill: "currentColor", "text-anchor": "middle" });
    o.groups.forEach(function (label, i) {
      node(svg, g, "text", { x: f.left + gw * (i + 0.5), y: f.bottom + 5 + f.text }, label);
      o.series.forEach(function (s, j) {
        var v = s.values[i], bx = f.left + gw * i + gw * 0.1 + bw * j;
        if (v === null) {
          node(svg, g, "text", { x: bx + bw / 2, y: y(0) - 4, "class": "lnw-undefined" }, "0/0");
          return;
        }
        var top = Math.min(y(v), y(0)), h = Math.max(Math.abs(y(v) - y(0)), 0.5);
        node(svg, svg, "rect", { x: bx, y: top, width: bw - 2, height: h, fill: s.color, "class": "lnw-bar", "data-series": s.key });
      });
    });
    node(svg, svg, "line", { x1: f.left, y1: y(0), x2: f.right, y2: y(0), stroke: "currentColor" });
    legend(svg, f, items);
  }

  /* Panels one above the other inside plot (<svg class="lnw-panel">, each its own canvas, its height
     panel.height of the plot's): chart(panel) gives each panel's lineChart options. */
  function stack(plot, panels, chart) {
    var box = (plot.getAttribute("viewBox") || "0 0 520 280").split(/[ ,]+/);
    var w = parseFloat(box[2]), h = parseFloat(box[3]), top = 0;
    clear(plot);
    panels.forEach(function (p) {
      var ph = Math.round(h * p.height);
      var panel = node(plot, plot, "svg", { x: 0, y: top, width: w, height: ph, viewBox: "0 0 " + w + " " + ph,
        "class": "lnw-panel", "data-panel": p.key });
      lineChart(panel, chart(p));
      top += ph;
    });
  }

  /* ---- the three explorers ------------------------------------------------------------ */

  var RENDER = {};

  RENDER["layer-norm"] = function (root, data, event) {
    var preset = value(root, "preset"), comp = value(root, "component");
    var slider = control(root, "value");
    var target = event && event.target ? event.target.getAttribute("name") : null;
    if (target === "preset" || target === "component") {
      /* a new preset or component: the slider starts at that component's preset value */
      slider.value = data.presets[preset][comp - 1];
    }
    var vec = data.presets[preset].slice();
    vec[comp - 1] = parseInt(slider.value, 10);
    var key = vec.join(",");
    param(root, "x", "(" + vec.join(", ") + ")");
    var ie = data.axes.eps.indexOf(value(root, "eps"));
    var ig = data.axes.gamma.indexOf(value(root, "gamma"));
    var ib = data.axes.beta.indexOf(value(root, "beta"));
    var is = data.axes.sublayer.indexOf(value(root, "sublayer"));
    var row = data.values[key][is][ie][ig][ib];
    var d = vec.length, post = [], pre = [];
    for (var i = 0; i < d; i++) {
      readout(root, "post-" + (i + 1), row[i]);
      readout(root, "pre-" + (i + 1), row[d + i]);
      post.push(num(row[i]));
      pre.push(num(row[d + i]));
    }
    barChart(root.querySelector("svg.lnw-plot"), {
      groups: vec.map(function (_, i) { return "x" + (i + 1); }),
      series: [series(data, "x", null, vec), series(data, "post", null, post), series(data, "pre", null, pre)],
      xLabel: "component", yLabel: "value"
    });
  };

  RENDER.depth = function (root, data) {
    var p = at(root, "post_factor"), a = at(root, "branch"), depth = data.depths[at(root, "depth")];
    var post = data.post[p], pre = data.pre[a];
    readout(root, "post", post[depth - 1]);
    readout(root, "pre", pre[depth - 1]);
    readout(root, "post-depth-below", data.below[p]);
    readout(root, "pre-depth-below", data.below_pre[a]);
    lineChart(root.querySelector("svg.lnw-plot"), {
      xs: data.depths, log: true, marker: depth, xTicks: [1, 16, 32, 48, 64, 80, 96, 112, 128],
      series: [series(data, "pre", null, pre.map(num)), series(data, "post", null, post.map(num))],
      xLabel: "depth L (layers)", yLabel: "gradient factor at the input"
    });
  };

  RENDER.residual = function (root, data) {
    var v = value(root, "branch_variance"), n = data.ns[at(root, "n")];
    readout(root, "variance", data.variance[v][n - 1]);
    readout(root, "std", data.std[v][n - 1]);
    lineChart(root.querySelector("svg.lnw-plot"), {
      xs: data.ns, log: false, marker: n, yMin: 0, yMax: data.y_max, xTicks: [1, 32, 64, 96, 128, 160, 192, 224, 256],
      series: [series(data, "std", data.series.std.label + ", v = " + v, data.std[v].map(num))],
      xLabel: "L (additions to the residual stream)", yLabel: "std(x_L)"
    });
  };

  /* Stored training runs, one per setting of the selects: chapter 5's sweep
     (lnworked.stress.explorer) and chapter 7's DeepNorm runs (lnworked.stress.deepnorm_explorer).
     With data.panels the plot is split into panels one above the other (<svg class="lnw-panel">
     inside the plot, each its own canvas): a panel draws its series on a log or linear axis whose
     range is the panel's y_min/y_max or, with "fit", the run's own range (run[fit]). */
  RENDER.training = function (root, data) {
    var key = data.controls.map(function (name) { return value(root, name); }).join("|");
    var run = data.runs[key];
    data.readouts.forEach(function (k, i) { readout(root, k, run.readouts[i]); });
    var plot = root.querySelector("svg.lnw-plot");
    if (data.panels) {
      stack(plot, data.panels, function (p) {
        var range = p.fit ? run[p.fit] : [p.y_min, p.y_max];
        return {
          xs: data.steps, log: p.log, nice: !p.log, yMin: range[0], yMax: range[1], xTicks: data.x_ticks, ref: p.ref,
          tickChars: 4,
          series: p.series.map(function (k) {   /* drawn in the run's colour (its placement's) when it has one */
            var s = series(data, k, null, run[k]);
            if (run.color) { s.color = run.color; }
            return s;
          }),
          xLabel: p.x_label, yLabel: p.y_label
        };
      });
      return;
    }
    lineChart(plot, {
      xs: data.steps, log: true, yMin: data.y_min, yMax: data.y_max, xTicks: data.x_ticks, ref: data.uniform,
      series: data.order.map(function (k) { return series(data, k, null, run[k]); }),
      xLabel: "training step", yLabel: data.y_label
    });
  };
  RENDER.deepnorm = RENDER.training;
  RENDER.family = RENDER.training;
  /* Chapter 6: two stored runs under rate schedules side by side (lnworked.stress.schedule_explorer), one
     seed: per panel each run's rate (data.rates), product (measured steps only: joined, with dots) or loss;
     the table's two columns read each run ("a-" and "b-" readouts). */
  /* The product panel's note: which of the two runs has no measured product (none: no note). */
  function unmeasuredNote(runs, data) {
    var missing = runs.map(function (run) { return run.product.every(function (v) { return v === null; }); });
    if (missing[0] && missing[1]) { return "not measured for either run"; }
    if (missing[0] || missing[1]) { return "not measured for the " + (data.dash[missing[0] ? "a" : "b"] ? "dashed" : "solid") + " run"; }
    return null;
  }
  RENDER.schedules = function (root, data) {
    var seed = value(root, "seed");
    var picks = [["a", value(root, "schedule")], ["b", value(root, "other")]];
    var runs = picks.map(function (pick) { return data.runs[pick[1] + "|" + seed]; });
    picks.forEach(function (pick, i) {
      data.readouts.forEach(function (k, j) { readout(root, pick[0] + "-" + k, runs[i].readouts[j]); });
    });
    stack(root.querySelector("svg.lnw-plot"), data.panels, function (p) {
      return {
        xs: data.steps, log: p.log, nice: !p.log, yMin: p.y_min, yMax: p.y_max, xTicks: data.x_ticks, ref: p.ref,
        tickChars: 4, tickCount: p.tick_count, logEvery: p.log_every, xLabel: p.x_label, yLabel: p.y_label,
        note: p.key === "product" ? unmeasuredNote(runs, data) : null,
        series: picks.map(function (pick, i) {
          var ys = p.key === "rate" ? data.rates[pick[1]] : runs[i][p.key];
          /* rates and losses belong to steps 1, 2, ...; the product to the weights after 0, 1, ... steps */
          var s = series(data, pick[0], null, p.key === "product" ? ys : [null].concat(ys));
          s.dash = data.dash[pick[0]] || null;
          s.join = s.dots = p.key === "product";
          s.clipTop = !!p.clip_top;
          s.nolegend = p !== data.panels[0];
          return s;
        })
      };
    });
  };

  /* Chapter 6: Adam's momentum along one direction (lnworked.stress.walk_explorer), one cell per (b1, ratio
     position): |theta_s| on a log axis, dotted at 1, and the readouts of that cell. */
  RENDER["momentum-walk"] = function (root, data) {
    var cell = data.cells[value(root, "b1") + "|" + at(root, "ratio")];
    data.readouts.forEach(function (k, i) { readout(root, k, cell.readouts[i]); });
    lineChart(root.querySelector("svg.lnw-plot"), {
      xs: data.steps, log: true, yMin: data.y_min, yMax: data.y_max, xTicks: data.x_ticks, ref: 1,
      series: [series(data, "walk", null, cell.walk)], xLabel: data.x_label, yLabel: data.y_label
    });
  };

  /* Chapter 6: the loss along AdamW's first step (lnworked.stress.first_step_explorer), one cell per
     (depth, seed, rate): each placement's loss change over t and its tangent, dashed as data.dash says,
     the readouts of the slider's position t and a marker there. */
  RENDER["first-step"] = function (root, data) {
    var key = data.controls.map(function (name) { return value(root, name); }).join("|");
    var cell = data.cells[key], t = at(root, "t"), shown = cell.readouts[t];
    data.readouts.forEach(function (k, i) { readout(root, k, shown[i]); });
    lineChart(root.querySelector("svg.lnw-plot"), {
      xs: data.positions, log: false, xTicks: data.x_ticks, ref: 0, marker: data.positions[data.t_offset + t],
      series: data.order.map(function (k) {
        var s = series(data, k, null, cell[k]);
        s.dash = data.dash[k] || null;
        s.width = data.width[k] || "2";
        return s;
      }),
      xLabel: data.x_label, yLabel: data.y_label
    });
  };


  /* Chapter 7: Post-LN's three links against its branch scale kappa (lnworked.stress.branch_scale_explorer),
     one cell per (seed, rate): each link over the slider's positions, Pre-LN's values as dotted flat lines. */
  RENDER["branch-scale"] = function (root, data) {
    var key = data.controls.map(function (name) { return value(root, name); }).join("|");
    var cell = data.cells[key], k = at(root, "kappa");
    data.readouts.forEach(function (name, i) { readout(root, name, cell.readouts[k][i]); });
    var lines = data.links.map(function (name) { return series(data, name, null, cell[name]); });
    data.links.forEach(function (name, i) {
      var flat = data.positions.map(function () { return cell["pre-" + name]; });
      lines.push({ key: "pre-" + name, label: data.pre_label, color: data.series[name].color, values: flat,
        dash: "2 3", width: "1.5", nolegend: true });
    });
    lines.push({ key: "pre-legend", label: data.pre_label, color: data.pre_color, dash: "2 3",
      values: data.positions.map(function () { return null; }) });
    lineChart(root.querySelector("svg.lnw-plot"), {
      xs: data.positions, log: true, yMin: data.y_min, yMax: data.y_max, xTicks: data.x_ticks,
      marker: data.positions[k], series: lines, xLabel: data.x_label, yLabel: data.y_label
    });
  };

  /* Chapter 3: a random stack of blocks, one cell per (placement, branch scale, depth), all seeds. */
  RENDER["random-stack"] = function (root, data) {
    var placement = value(root, "placement"), view = value(root, "view"), depth = value(root, "depth");
    var cell = data.cells[placement + "|" + value(root, "branch_scale") + "|" + depth];
    var seed = at(root, "seed"), shown = cell.readouts[seed];
    data.readouts.forEach(function (k) { readout(root, k, shown[k]); });
    var rows = cell[view], xs = [];
    for (var i = view === "norm" ? 0 : 1; i <= cell.gain[0].length; i++) { xs.push(i); }
    var lines = [];
    rows.forEach(function (row, i) {
      if (i !== seed) {
        lines.push({ key: "seeds", label: data.series.seeds.label, color: data.series.seeds.color, values: row,
          width: "1", opacity: "0.45", nolegend: lines.length > 0 });
      }
    });
    lines.push(series(data, placement, data.series[placement].label + ", seed " + seed, rows[seed]));
    lineChart(root.querySelector("svg.lnw-plot"), {
      xs: xs, log: view === "norm", ref: 1, xTicks: data.ticks[depth], series: lines,
      xLabel: view === "norm" ? "layer ℓ (0 = input, L = top)" : "block ℓ",
      yLabel: view === "norm" ? [["‖g"], ["ℓ", "sub"], ["‖ / ‖g"], ["L", "sub"], ["‖ (log scale)"]] : "gain of block ℓ"
    });
  };

  function init(id) {
    var root = document.getElementById(id);
    if (!root || root.getAttribute("data-lnw-ready") === "1") { return; }
    var data = JSON.parse(root.querySelector("script.lnw-data").textContent);
    var render = RENDER[root.getAttribute("data-explorer")];
    /* On a phone the plot gets a narrower, taller canvas, so its text is not scaled down to 7 px
       and the chart is not squashed flat. The canvas is chosen from the width the explorer has
       when it draws (the window's, while it is hidden), so turning a phone or resizing a window
       redraws it on the canvas that fits. */
    var plot = root.querySelector("svg.lnw-plot");
    var wide = plot ? (data.view_box || plot.getAttribute("viewBox") || "0 0 520 280") : null;
    var phone = data.phone_view_box || "0 0 340 400";   /* a grid may ask for taller canvases (panels) */
    var fit = function () {
      if (!plot) { return false; }
      var width = root.clientWidth || window.innerWidth || 0;
      var box = width && width < 480 ? phone : wide;
      if (plot.getAttribute("viewBox") === box) { return false; }
      plot.setAttribute("viewBox", box);
      return true;
    };
    var sliders = root.querySelectorAll('input[type="range"]');
    var update = function (event) {
      fit();
      render(root, data, event);
      /* echo each slider's setting (after render, which may reset one) */
      for (var i = 0; i < sliders.length; i++) {
        var name = sliders[i].getAttribute("name");
        param(root, name, data.labels[name][position(sliders[i])]);
      }
    };
    var inputs = root.querySelectorAll("input, select");
    for (var i = 0; i < inputs.length; i++) {
      inputs[i].addEventListener("input", update);
      inputs[i].addEventListener("change", update);
    }
    update(null);
    var pending = false;
    if (window.addEventListener) {
      window.addEventListener("resize", function () {
        if (pending) { return; }
        pending = true;
        (window.requestAnimationFrame || window.setTimeout)(function () {
          pending = false;
          if (fit()) { update(null); }
        });
      });
    }
    root.setAttribute("data-lnw-ready", "1");
  }

  window.lnwExplore = { init: init, version: 2 };
})();
