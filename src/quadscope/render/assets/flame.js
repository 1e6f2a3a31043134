// quadscope HTML report: the interactive differential flame graph, drawn by the
// vendored d3-flame-graph (vendor/flamegraph.js, see vendor/LICENSES.txt) from the
// tree embedded as JSON (profile/flametree.py). Click a frame to zoom, search by
// name, hover for the class and shares. Names are set as text, never as HTML.
(function () {
  "use strict";
  var holder = document.getElementById("qs-flame");
  var src = document.getElementById("qs-flame-data");
  if (!holder || !src || typeof flamegraph === "undefined") return;
  var tree = JSON.parse(src.textContent);
  var total = tree.value || 1, sizes = tree.sizes || ["?", "?"];

  // Colour is each frame's share of the growth beyond linear: red carries it,
  // blue grows slower than linear, grey is linear; too few samples: neutral.
  // A search hit is amber: d3-flame-graph marks it (d.highlight) and leaves the
  // colour to the mapper, so without this a search found frames but showed none.
  function colour(d) {
    var x = d.data, e = x.excess || 0, t;
    if (d.highlight) return "rgb(255,191,0)";
    if (x.noise) return "rgb(222,220,214)";
    if (Math.abs(e) < 0.02) return "rgb(200,204,210)";
    t = Math.sqrt(Math.min(Math.abs(e), 1));
    if (e > 0) return "rgb(" + Math.round(240 + 15 * t) + "," + Math.round(205 - 175 * t) + "," + Math.round(195 - 165 * t) + ")";
    return "rgb(" + Math.round(190 - 140 * t) + "," + Math.round(205 - 80 * t) + "," + Math.round(235 + 20 * t) + ")";
  }

  function label(d) {
    var x = d.data, lines = [x.name + (x.dso ? "  (" + x.dso + ")" : "")];
    lines.push((100 * x.value / total).toFixed(1) + "% of the time at n = " + sizes[1]);
    if (x.cls) lines.push("fitted class " + x.cls);
    if (x.noise) lines.push("too few samples (" + x.samples + ") to measure its growth");
    else {
      if (x.k !== null && x.k !== undefined) lines.push("k = " + x.k.toFixed(2) + " from n = " + sizes[0] + " to " + sizes[1]);
      lines.push((100 * (x.excess || 0)).toFixed(1) + "% of the growth beyond linear");
    }
    if (x.collapsed) lines.push(x.collapsed + " frames collapsed into one");
    if (x.name === "start-up" && x.dso === "[interpreter]") lines.push("interpreter start-up (imports, site, encodings): it does not grow with n, so it is one frame");
    return lines.join("\n");
  }

  var chart = flamegraph.default()
    .width(Math.max(600, holder.clientWidth || 1100))
    .cellHeight(18)
    .transitionDuration(0)
    .minFrameSize(1)
    .sort(false)
    .setColorMapper(colour)
    .setLabelHandler(label);
  // The first drawing is whole as soon as the page has loaded: drawn through a 250 ms
  // transition, a screenshot taken at load showed the frames as slivers, "all" a tenth of
  // the width. What the reader does (a click, a search, a reset) still animates.
  // d3-flame-graph grows each new frame's width over d3's default 250 ms whatever the
  // duration; an update at 0 ms replaces those transitions, and d3 ends a 0 ms one on a
  // later tick (it starts it, then defers the first tick): flush those ticks now.
  d3.select(holder).datum(tree).call(chart);
  chart.update();
  for (var i = 0; i < 3 && typeof d3.timerFlush === "function"; i++) d3.timerFlush();
  function animate() { chart.transitionDuration(250); }
  holder.addEventListener("click", animate, { capture: true, once: true });

  var search = document.getElementById("qs-flame-search");
  var info = document.getElementById("qs-flame-info");
  chart.setSearchHandler(function (results, sum) {
    info.textContent = search.value ? results.length + " frame(s), " + (100 * sum / total).toFixed(1) + "% of the time" : "";
  });
  search.addEventListener("input", animate, { once: true });
  search.addEventListener("input", function () {
    if (search.value) chart.search(search.value); else { chart.clear(); info.textContent = ""; }
  });
  document.getElementById("qs-flame-reset").addEventListener("click", function () { animate(); chart.resetZoom(); });
  holder.setAttribute("data-ready", "1");
})();
