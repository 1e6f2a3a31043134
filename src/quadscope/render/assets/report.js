// quadscope HTML report: draws the plots described by the embedded JSON (see
// render/plotdata.py) as hand-written SVG. No network, no library. Text from the
// data is only ever set with textContent or setAttribute, never parsed as HTML.
(function () {
  "use strict";
  var NS = "http://www.w3.org/2000/svg";
  var M = { l: 66, r: 14, t: 10, b: 40 };
  var tip = document.getElementById("qs-tip");

  // One report's plots: its data D, drawn into the holders inside `scope` (the whole
  // page, or one sweep's section of a page that holds several).
  function report(D, scope) {
    var R = D.runs;
    var plotsById = {};
    D.plots.forEach(function (p) { plotsById[p.id] = p; });

    function el(tag, attrs, parent) {
      var e = document.createElementNS(NS, tag);
      for (var k in attrs) if (attrs[k] !== undefined && attrs[k] !== null) e.setAttribute(k, attrs[k]);
      if (parent) parent.appendChild(e);
      return e;
    }

    function fmt(v) {
      if (v === null || v === undefined || !isFinite(v)) return "—";
      var a = Math.abs(v);
      if (a !== 0 && (a >= 1e6 || a < 1e-3)) return v.toExponential(3).replace(/\.?0+e/, "e");
      if (Number.isInteger(v)) return String(v);
      return String(Number(v.toPrecision(4)));
    }

    function fmtValue(metric, v) {
      if (v === null || v === undefined || !isFinite(v)) return "—";
      if (/_s$/.test(metric)) {
        var a = Math.abs(v);
        if (a >= 1) return fmt(v) + " s";
        if (a >= 1e-3) return fmt(v * 1e3) + " ms";
        if (a >= 1e-6) return fmt(v * 1e6) + " µs";
        return fmt(v * 1e9) + " ns";
      }
      if (/_bytes$/.test(metric)) {
        var units = [["GiB", 1073741824], ["MiB", 1048576], ["KiB", 1024]];
        for (var i = 0; i < units.length; i++)
          if (Math.abs(v) >= units[i][1]) return fmt(v / units[i][1]) + " " + units[i][0];
        return fmt(v) + " B";
      }
      return fmt(v);
    }

    function fmtCount(v) {
      var a = Math.abs(v), u = [["G", 1e9], ["M", 1e6], ["k", 1e3]];
      for (var i = 0; i < u.length; i++) if (a >= u[i][1]) return fmt(Number((v / u[i][1]).toPrecision(3))) + u[i][0];
      return fmt(Number(v.toPrecision(3)));
    }

    // A tick in the axis's unit: 20 ms, 4 MiB, 64k.
    function fmtUnit(unit, v) {
      if (v === null || v === undefined || !isFinite(v)) return "—";
      if (v === 0) return "0";
      if (unit === "s") return fmtValue("x_s", v);
      if (unit === "bytes") return fmtValue("x_bytes", v);
      if (unit === "count") return fmtCount(v);
      return fmt(v);
    }

    // The points of one layer as [x, y, run index or -1]; undrawable ones dropped.
    function layerPoints(plot, layer) {
      var out = [], i, x, y;
      if (layer.rows !== undefined) {
        var rows = D.rowsets[layer.rows] || [];
        var col = typeof layer.y === "string" ? D.values[layer.y] : null;
        for (i = 0; i < rows.length; i++) {
          x = R.n[rows[i]];
          y = col ? col[rows[i]] : layer.y[i];
          if (ok(plot, x, y)) out.push([x, y, rows[i]]);
        }
      } else {
        for (i = 0; i < layer.x.length; i++) {
          x = layer.x[i]; y = layer.y[i];
          if (ok(plot, x, y)) out.push([x, y, -1]);
        }
      }
      return out;
    }

    function ok(plot, x, y) {
      if (x === null || y === null || x === undefined || y === undefined) return false;
      if (plot.xlog && x <= 0) return false;
      if (plot.ylog && y <= 0) return false;
      return true;
    }

    function tf(log) { return log ? function (v) { return Math.log10(v); } : function (v) { return v; }; }
    function itf(log) { return log ? function (v) { return Math.pow(10, v); } : function (v) { return v; }; }

    // Extent in transformed space, padded by 5%.
    function homeView(plot, cache) {
      var fx = tf(plot.xlog), fy = tf(plot.ylog);
      var x0 = Infinity, x1 = -Infinity, y0 = Infinity, y1 = -Infinity;
      function addX(v) { if (v !== null && (!plot.xlog || v > 0)) { v = fx(v); if (isFinite(v)) { x0 = Math.min(x0, v); x1 = Math.max(x1, v); } } }
      function addY(v) { if (v !== null && (!plot.ylog || v > 0)) { v = fy(v); if (isFinite(v)) { y0 = Math.min(y0, v); y1 = Math.max(y1, v); } } }
      plot.layers.forEach(function (layer, li) {
        if (layer.type === "points") cache[li].forEach(function (p) { addX(p[0]); addY(p[1]); });
        else if (layer.type === "line") { layer.x.forEach(addX); layer.y.forEach(addY); }
        else if (layer.type === "band") { layer.x.forEach(addX); layer.lo.forEach(addY); layer.hi.forEach(addY); }
        else if (layer.type === "hline") addY(layer.y);
        else if (layer.type === "vline") addX(layer.x);
      });
      if (!isFinite(x0)) { x0 = 0; x1 = 1; }
      if (!isFinite(y0)) { y0 = 0; y1 = 1; }
      if (x1 === x0) { x0 -= 0.5; x1 += 0.5; }
      if (y1 === y0) { var d = Math.abs(y0) * 0.1 || 0.5; y0 -= d; y1 += d; }
      var px = (x1 - x0) * 0.04, py = (y1 - y0) * 0.06;
      return [x0 - px, x1 + px, y0 - py, y1 + py];
    }

    function linearTicks(lo, hi, count) {
      var span = hi - lo, step = Math.pow(10, Math.floor(Math.log10(span / count)));
      var err = span / count / step;
      if (err >= 7.5) step *= 10; else if (err >= 3.5) step *= 5; else if (err >= 1.5) step *= 2;
      var out = [];
      for (var v = Math.ceil(lo / step) * step; v <= hi + step * 1e-9; v += step)
        out.push(Math.abs(v) < step * 1e-9 ? 0 : Number(v.toPrecision(12)));
      return out;
    }

    // Ticks of a log axis, in transformed (log10) space.
    function logTicks(lo, hi) {
      var out = [], d, m, mult = [1];
      if (hi - lo < 2.5) mult = [1, 2, 5];
      if (hi - lo < 0.8) return linearTicks(Math.pow(10, lo), Math.pow(10, hi), 4)
        .filter(function (v) { return v > 0; }).map(Math.log10);
      var step = Math.max(1, Math.ceil((hi - lo) / 8));
      for (d = Math.floor(lo); d <= Math.ceil(hi); d += step)
        for (m = 0; m < mult.length; m++) {
          var t = d + Math.log10(mult[m]);
          if (t >= lo && t <= hi) out.push(t);
        }
      return out;
    }

    // Byte axes tick in binary units, as the PNG does: 64 KiB, 128 KiB on a log axis
    // (powers of 2), 13 MiB, 14 MiB on a linear one (steps round in the unit shown).
    function byteLogTicks(lo, hi) {
      var l2 = Math.LOG10E / Math.LOG2E;  // log10(2)
      var a = Math.ceil(lo / l2), b = Math.floor(hi / l2), step = Math.max(1, Math.ceil((b - a + 1) / 8));
      var out = [];
      for (var e = a; e <= b; e += step) out.push(e * l2);
      if (out.length >= 2) return out;
      return byteLinearTicks(Math.pow(10, lo), Math.pow(10, hi), 4)
        .filter(function (v) { return v > 0; }).map(Math.log10);
    }

    function byteLinearTicks(lo, hi, count) {
      var top = Math.max(Math.abs(lo), Math.abs(hi)), scale = 1;
      while (scale < 1099511627776 && top >= scale * 1024) scale *= 1024;
      return linearTicks(lo / scale, hi / scale, count).map(function (t) { return t * scale; });
    }

    function axisTicks(log, unit, lo, hi, count) {
      if (unit === "bytes") return log ? byteLogTicks(lo, hi) : byteLinearTicks(lo, hi, count);
      return log ? logTicks(lo, hi) : linearTicks(lo, hi, count);
    }

    function Plot(holder, spec) {
      this.spec = spec;
      this.holder = holder;
      this.cache = spec.layers.map(function (l) { return l.type === "points" ? layerPoints(spec, l) : null; });
      this.home = homeView(spec, this.cache);
      this.view = this.home.slice();
      // As wide as the column on a phone (text stays 10 px, not shrunk to 5), at most 520.
      this.W = Math.max(300, Math.min(520, holder.clientWidth || 520));
      this.H = spec.small ? 170 : 310;
      this.svg = el("svg", { viewBox: "0 0 " + this.W + " " + this.H, "class": "qs-plot",
        "data-plot": spec.id, role: "img", width: this.W, height: this.H });
      var title = el("title", {}, this.svg);
      title.textContent = spec.title;
      holder.appendChild(this.svg);
      this.legend();
      this.draw();
      this.events();
    }

    Plot.prototype.sx = function (v) {
      var t = tf(this.spec.xlog)(v), w = this.view;
      return M.l + (t - w[0]) / (w[1] - w[0]) * (this.W - M.l - M.r);
    };
    Plot.prototype.sy = function (v) {
      var t = tf(this.spec.ylog)(v), w = this.view;
      return this.H - M.b - (t - w[2]) / (w[3] - w[2]) * (this.H - M.t - M.b);
    };

    Plot.prototype.draw = function () {
      var self = this, spec = this.spec, svg = this.svg, W = this.W, H = this.H, v = this.view;
      while (svg.childNodes.length > 1) svg.removeChild(svg.lastChild);
      var clipId = "clip-" + spec.id;
      var defs = el("defs", {}, svg);
      var cp = el("clipPath", { id: clipId }, defs);
      el("rect", { x: M.l, y: M.t, width: W - M.l - M.r, height: H - M.t - M.b }, cp);
      var axes = el("g", { "class": "axes" }, svg);
      el("rect", { x: M.l, y: M.t, width: W - M.l - M.r, height: H - M.t - M.b, "class": "frame" }, axes);
      var ix = itf(spec.xlog), iy = itf(spec.ylog);
      var xt = axisTicks(spec.xlog, spec.xunit, v[0], v[1], 6);
      var yt = axisTicks(spec.ylog, spec.yunit, v[2], v[3], spec.small ? 3 : 5);
      xt.forEach(function (t) {
        var val = spec.xlog ? ix(t) : t, X = self.sx(val);
        el("line", { x1: X, x2: X, y1: M.t, y2: H - M.b, "class": "grid" }, axes);
        var tx = el("text", { x: X, y: H - M.b + 14, "text-anchor": "middle", "class": "tick" }, axes);
        tx.textContent = fmtUnit(spec.xunit, val);
      });
      yt.forEach(function (t) {
        var val = spec.ylog ? iy(t) : t, Y = self.sy(val);
        el("line", { x1: M.l, x2: W - M.r, y1: Y, y2: Y, "class": "grid" }, axes);
        var ty = el("text", { x: M.l - 5, y: Y + 3, "text-anchor": "end", "class": "tick" }, axes);
        ty.textContent = fmtUnit(spec.yunit, val);
      });
      var xl = el("text", { x: (M.l + W - M.r) / 2, y: H - 6, "text-anchor": "middle", "class": "label" }, axes);
      xl.textContent = spec.xlabel;
      var yl = el("text", { x: 12, y: (M.t + H - M.b) / 2, "text-anchor": "middle", "class": "label",
        transform: "rotate(-90 12 " + (M.t + H - M.b) / 2 + ")" }, axes);
      yl.textContent = spec.ylabel;
      var g = el("g", { "clip-path": "url(#" + clipId + ")" }, svg);
      spec.layers.forEach(function (layer, li) { self.drawLayer(g, layer, li); });
      this.box = el("rect", { "class": "zoombox", visibility: "hidden" }, svg);
    };

    Plot.prototype.path = function (xs, ys) {
      var d = "", pen = false;
      for (var i = 0; i < xs.length; i++) {
        if (!ok(this.spec, xs[i], ys[i])) { pen = false; continue; }
        d += (pen ? "L" : "M") + this.sx(xs[i]).toFixed(1) + "," + this.sy(ys[i]).toFixed(1);
        pen = true;
      }
      return d;
    };

    Plot.prototype.drawLayer = function (g, layer, li) {
      var self = this, W = this.W, H = this.H;
      if (layer.type === "band") {
        var top = [], bot = [], i;
        for (i = 0; i < layer.x.length; i++) {
          if (!ok(this.spec, layer.x[i], layer.lo[i]) || !ok(this.spec, layer.x[i], layer.hi[i])) continue;
          top.push(this.sx(layer.x[i]).toFixed(1) + "," + this.sy(layer.hi[i]).toFixed(1));
          bot.unshift(this.sx(layer.x[i]).toFixed(1) + "," + this.sy(layer.lo[i]).toFixed(1));
        }
        if (top.length) el("polygon", { points: top.concat(bot).join(" "), fill: layer.color,
          "fill-opacity": D.band_alpha, "class": "band" }, g);
      } else if (layer.type === "line") {
        el("path", { d: this.path(layer.x, layer.y), fill: "none", stroke: layer.color,
          "stroke-width": layer.width || 2, "stroke-dasharray": layer.dash ? "5 4" : null, "class": "curve" }, g);
      } else if (layer.type === "hline") {
        var Y = this.sy(layer.y);
        el("line", { x1: M.l, x2: W - M.r, y1: Y, y2: Y, stroke: layer.color, "stroke-width": 1,
          "stroke-dasharray": layer.dash ? "5 4" : null }, g);
      } else if (layer.type === "vline") {
        var X = this.sx(layer.x);
        el("line", { x1: X, x2: X, y1: M.t, y2: H - M.b, stroke: layer.color, "stroke-width": 1.5,
          "stroke-dasharray": layer.dash ? "5 4" : null }, g);
      } else if (layer.type === "points") {
        var pts = this.cache[li], grp = el("g", { "class": "pts", "data-layer": li }, g);
        for (var k = 0; k < pts.length; k++) {
          var px = this.sx(pts[k][0]).toFixed(1), py = this.sy(pts[k][1]).toFixed(1);
          if (layer.marker === "v") {
            el("path", { d: "M" + (px - 4) + "," + (py - 4) + "h8l-4,7z", fill: "none", stroke: layer.color,
              "stroke-width": 1.3, "class": "pt", "data-k": k }, grp);
          } else if (layer.marker === "x") {
            el("path", { d: "M" + (px - 3) + "," + (py - 3) + "l6,6m0,-6l-6,6", stroke: layer.color,
              "stroke-width": 1.5, "class": "pt", "data-k": k }, grp);
          } else {
            el("circle", { cx: px, cy: py, r: 2.6, fill: layer.color, "fill-opacity": D.point_alpha,
              "class": "pt", "data-k": k }, grp);
          }
        }
      }
    };

    Plot.prototype.legend = function () {
      var box = document.createElement("div");
      box.className = "legend";
      var seen = {};
      this.spec.layers.forEach(function (layer) {
        if (!layer.label || seen[layer.label + layer.color]) return;
        seen[layer.label + layer.color] = true;
        var item = document.createElement("span");
        var sw = document.createElement("i");
        sw.className = "sw sw-" + layer.type + (layer.dash ? " dash" : "") + (layer.marker === "x" ? " cross" : "") + (layer.marker === "v" ? " tri" : "");
        sw.style.setProperty("--c", layer.color);
        if (layer.marker === "x" || layer.marker === "v") sw.textContent = layer.marker === "x" ? "×" : "▼";
        item.appendChild(sw);
        item.appendChild(document.createTextNode(layer.label));
        box.appendChild(item);
      });
      var reset = document.createElement("button");
      reset.type = "button";
      reset.className = "reset";
      reset.textContent = "reset zoom";
      var self = this;
      reset.addEventListener("click", function () { self.reset(); });
      box.appendChild(reset);
      this.holder.appendChild(box);
    };

    Plot.prototype.reset = function () { this.view = this.home.slice(); this.draw(); };

    Plot.prototype.hoverText = function (layer, p) {
      var word = D.size_word, i = p[2], lines = [];
      if (i >= 0) {
        lines.push(R.variant[i] + "  " + word + " = " + R.n[i] + ", repeat " + R.repeat[i] + ", run #" + R.seq[i]);
        var metric = layer.metric || (typeof layer.y === "string" ? layer.y : this.spec.metric);
        lines.push(metric + " = " + fmtValue(metric, D.values[metric][i]));
        if (typeof layer.y !== "string") lines.push(layer.name + " = " + fmtUnit(this.spec.yunit, p[1]));
        lines.push((R.exit_text ? R.exit_text[i] : "exit " + R.exit[i]) + (R.timeout[i] ? " (timed out)" : ""));
      } else {
        lines.push(word + " = " + fmtCount(p[0]));
        lines.push(layer.floor ? layer.name + ": drawn on the floor of the log axis"
          : (layer.name || "value") + " = " + fmtUnit(this.spec.yunit, p[1]));
      }
      return lines.join("\n");
    };

    // Pointer position in the SVG's own coordinates (the SVG may be scaled by CSS).
    Plot.prototype.local = function (ev) {
      var r = this.svg.getBoundingClientRect();
      return [(ev.clientX - r.left) * this.W / r.width, (ev.clientY - r.top) * this.H / r.height];
    };
    Plot.prototype.toData = function (px, py) {
      var w = this.view;
      return [w[0] + (px - M.l) / (this.W - M.l - M.r) * (w[1] - w[0]),
              w[2] + (this.H - M.b - py) / (this.H - M.t - M.b) * (w[3] - w[2])];
    };

    Plot.prototype.events = function () {
      var self = this, svg = this.svg, start = null;
      svg.addEventListener("mouseover", function (ev) {
        var t = ev.target;
        if (!t.classList || !t.classList.contains("pt")) return;
        var li = +t.parentNode.getAttribute("data-layer"), k = +t.getAttribute("data-k");
        tip.textContent = self.hoverText(self.spec.layers[li], self.cache[li][k]);
        tip.hidden = false;
        var r = t.getBoundingClientRect();
        tip.style.left = (r.right + window.scrollX + 8) + "px";
        tip.style.top = (r.top + window.scrollY - 8) + "px";
        t.classList.add("hot");
      });
      svg.addEventListener("mouseout", function (ev) {
        if (ev.target.classList && ev.target.classList.contains("pt")) {
          tip.hidden = true;
          ev.target.classList.remove("hot");
        }
      });
      svg.addEventListener("mousedown", function (ev) {
        if (ev.button !== 0) return;
        start = self.local(ev);
        ev.preventDefault();
      });
      window.addEventListener("mousemove", function (ev) {
        if (!start) return;
        var p = self.local(ev);
        self.box.setAttribute("x", Math.min(p[0], start[0]));
        self.box.setAttribute("y", Math.min(p[1], start[1]));
        self.box.setAttribute("width", Math.abs(p[0] - start[0]));
        self.box.setAttribute("height", Math.abs(p[1] - start[1]));
        self.box.setAttribute("visibility", "visible");
      });
      window.addEventListener("mouseup", function (ev) {
        if (!start) return;
        var p = self.local(ev), s = start;
        start = null;
        self.box.setAttribute("visibility", "hidden");
        if (Math.abs(p[0] - s[0]) < 6 || Math.abs(p[1] - s[1]) < 6) return;
        var a = self.toData(Math.min(p[0], s[0]), Math.max(p[1], s[1]));
        var b = self.toData(Math.max(p[0], s[0]), Math.min(p[1], s[1]));
        self.view = [a[0], b[0], a[1], b[1]];
        self.draw();
      });
      svg.addEventListener("dblclick", function () { self.reset(); });
      // Shift+wheel zooms about the pointer; a plain wheel keeps scrolling the page.
      svg.addEventListener("wheel", function (ev) {
        if (!ev.shiftKey) return;
        ev.preventDefault();
        var c = self.toData.apply(self, self.local(ev)), f = (ev.deltaY || ev.deltaX) > 0 ? 1.25 : 0.8, w = self.view;
        self.view = [c[0] + (w[0] - c[0]) * f, c[0] + (w[1] - c[0]) * f, c[1] + (w[2] - c[1]) * f, c[1] + (w[3] - c[1]) * f];
        self.draw();
      }, { passive: false });
    };

    function renderIn(root) {
      root.querySelectorAll(".plot-holder").forEach(function (h) {
        if (h.getAttribute("data-drawn")) return;
        var closed = h.closest("details:not([open])");
        if (closed) return;
        h.setAttribute("data-drawn", "1");
        new Plot(h, plotsById[h.getAttribute("data-plot")]);
      });
    }

    scope.querySelectorAll("details").forEach(function (d) {
      d.addEventListener("toggle", function () { if (d.open) renderIn(d); });
    });
    renderIn(scope);
    window.addEventListener("beforeprint", function () {
      scope.querySelectorAll("details").forEach(function (d) { d.open = true; renderIn(d); });
    });
  }

  document.querySelectorAll("script.qs-data").forEach(function (s) {
    report(JSON.parse(s.textContent), s.closest("[data-report]") || document);
  });
  document.body.setAttribute("data-ready", "1");
})();
