// tdflow view: pan, zoom, search and the side panel over the SVG that Graphviz laid out.
// Everything shown in the panel goes through textContent: program text is never parsed as HTML.
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("tdflow-data").textContent);
  var host = document.getElementById("graph");
  var svg = host.querySelector("svg");
  var panel = document.getElementById("panel");
  var input = document.getElementById("search");
  var countEl = document.getElementById("count");

  // -- pan and zoom: by the viewBox, so the SVG stays crisp at every scale ----------------------
  svg.removeAttribute("width");
  svg.removeAttribute("height");
  var full = svg.viewBox.baseVal;
  var home = { x: full.x, y: full.y, w: full.width, h: full.height };
  var view = { x: home.x, y: home.y, w: home.w, h: home.h };
  function apply() { svg.setAttribute("viewBox", view.x + " " + view.y + " " + view.w + " " + view.h); }
  var box = host.getBoundingClientRect();
  if (box.width && home.h / home.w > 1.5 * box.height / box.width) {
    view.w = Math.min(home.w, home.w * 0.6 + 300); // a tall program: start at its top, readable
    view.x = home.x + (home.w - view.w) / 2;
    view.h = view.w * box.height / box.width; apply();
  }
  function pointer(ev) { // the event's position in SVG user units
    var r = svg.getBoundingClientRect();
    var s = Math.max(view.w / r.width, view.h / r.height);
    var ox = (r.width * s - view.w) / 2, oy = (r.height * s - view.h) / 2;
    return { x: view.x - ox + (ev.clientX - r.left) * s, y: view.y - oy + (ev.clientY - r.top) * s, s: s };
  }
  function zoom(f, at) {
    var w = Math.min(Math.max(view.w * f, 20), home.w * 20), k = w / view.w;
    view.x = at.x - (at.x - view.x) * k; view.y = at.y - (at.y - view.y) * k;
    view.w = w; view.h = view.h * k; apply();
  }
  function center() { return { x: view.x + view.w / 2, y: view.y + view.h / 2 }; }
  function fit() { view = { x: home.x, y: home.y, w: home.w, h: home.h }; apply(); }
  host.addEventListener("wheel", function (ev) {
    ev.preventDefault();
    zoom(Math.exp(ev.deltaY * 0.0015), pointer(ev));
  }, { passive: false });
  var drag = null;
  host.addEventListener("pointerdown", function (ev) {
    drag = { x: ev.clientX, y: ev.clientY, moved: false };
  });
  window.addEventListener("pointermove", function (ev) {
    if (!drag) return;
    var dx = ev.clientX - drag.x, dy = ev.clientY - drag.y;
    if (!drag.moved && Math.abs(dx) + Math.abs(dy) < 4) return;
    drag.moved = true; host.classList.add("dragging");
    var s = pointer(ev).s;
    view.x -= dx * s; view.y -= dy * s; drag.x = ev.clientX; drag.y = ev.clientY; apply();
  });
  window.addEventListener("pointerup", function () {
    host.classList.remove("dragging");
    setTimeout(function () { drag = null; }, 0);
  });
  document.getElementById("zoom-in").onclick = function () { zoom(1 / 1.4, center()); };
  document.getElementById("zoom-out").onclick = function () { zoom(1.4, center()); };
  document.getElementById("fit").onclick = fit;
  function reveal(el) { // zoom to show el if it is off screen
    var b = el.getBBox(), m = el.getCTM(), root = svg.getCTM();
    if (!m || !root) return;
    var rel = root.inverse().multiply(m);
    var cx = rel.a * (b.x + b.width / 2) + rel.c * (b.y + b.height / 2) + rel.e;
    var cy = rel.b * (b.x + b.width / 2) + rel.d * (b.y + b.height / 2) + rel.f;
    var w = Math.min(view.w, Math.max(b.width * 6, 400)), h = view.h * w / view.w;
    view = { x: cx - w / 2, y: cy - h / 2, w: w, h: h }; apply();
  }

  // -- the side panel ---------------------------------------------------------------------------
  function el(tag, text, cls) {
    var e = document.createElement(tag);
    if (text !== undefined && text !== null) e.textContent = String(text);
    if (cls) e.className = cls;
    return e;
  }
  function table(rows) {
    var t = el("table");
    rows.forEach(function (r) {
      var tr = el("tr"); tr.appendChild(el("td", r[0])); tr.appendChild(el("td", r[1])); t.appendChild(tr);
    });
    return t;
  }
  function section(title, content) {
    panel.appendChild(el("h3", title));
    panel.appendChild(content);
  }
  var selected = null;
  function select(id) {
    if (selected) selected.classList.remove("selected");
    selected = document.getElementById(id);
    if (selected) selected.classList.add("selected");
    panel.textContent = "";
    var node = data.nodes[id], edge = data.edges[id];
    if (edge) {
      panel.appendChild(el("h2", edge.value));
      panel.appendChild(el("p", edge.type, "loc"));
      section("from", el("p", data.nodes[edge.src].title));
      section("to", el("p", data.nodes[edge.dst].title));
      return;
    }
    if (!node) return;
    panel.appendChild(el("h2", node.title));
    if (node.loc) panel.appendChild(el("div", node.loc, "loc"));
    if (node.type) section("type", el("p", node.type));
    if (node.results && node.results.length) section("results", table(node.results.map(function (r) { return ["", r]; })));
    if (node.operands && node.operands.length) section("operands", table(node.operands.map(function (r, i) { return ["#" + i, r]; })));
    if (node.attrs) section("attributes", node.attrs.length ? table(node.attrs) : el("p", "none", "hint"));
    if (node.fused) section("fused group", el("p", node.fused.join(" \u2192 ")));
    var k = node.kernel;
    if (k) {
      var rows = [["launch", "#" + k.launch], ["kernel", k.kernel], ["reads", k.inputs], ["writes", k.outputs]];
      if (k.in_place) rows.push(["in place", k.in_place]);
      section("kernel", table(rows));
      if (k.code) panel.appendChild(el("pre", k.code));
    }
    var d = node.doc;
    if (d) {
      var box = el("div");
      if (d.summary) box.appendChild(el("p", d.summary));
      if (d.description) box.appendChild(el("pre", d.description));
      var facts = [];
      if (d.record) facts.push(["record", d.record]);
      if (d.formula) facts.push(["formula", d.formula]);
      if (d.gradient) facts.push(["gradient", d.gradient]);
      if (d.traits) facts.push(["traits", d.traits.join(", ")]);
      if (d.location) facts.push(["defined at", d.location]);
      if (facts.length) box.appendChild(table(facts));
      section("documentation (.td)", box);
    }
  }
  svg.addEventListener("click", function (ev) {
    if (drag && drag.moved) return;
    var g = ev.target.closest("g.node, g.edge");
    if (g) select(g.id);
  });

  // -- search: op names, value names, types, attribute text -------------------------------------
  var matches = [], at = -1;
  function search(q) {
    q = (q || "").trim().toLowerCase();
    matches.forEach(function (m) { m.classList.remove("match"); });
    matches = []; at = -1;
    if (!q) { host.classList.remove("searching"); countEl.textContent = ""; return 0; }
    Object.keys(data.nodes).forEach(function (id) {
      if (data.nodes[id].search.indexOf(q) >= 0) matches.push(document.getElementById(id));
    });
    Object.keys(data.edges).forEach(function (id) {
      var e = data.edges[id];
      if ((e.value + " " + e.type).toLowerCase().indexOf(q) >= 0) matches.push(document.getElementById(id));
    });
    matches = matches.filter(Boolean);
    matches.forEach(function (m) { m.classList.add("match"); });
    host.classList.add("searching");
    countEl.textContent = matches.length + " match" + (matches.length === 1 ? "" : "es");
    return matches.length;
  }
  function next() {
    if (!matches.length) return;
    at = (at + 1) % matches.length;
    reveal(matches[at]); select(matches[at].id);
  }
  input.addEventListener("input", function () { search(input.value); });
  input.addEventListener("keydown", function (ev) { if (ev.key === "Enter") next(); });

  var nodes = svg.querySelectorAll("g.node").length, edges = svg.querySelectorAll("g.edge").length;
  document.getElementById("stats").textContent = data.summary;
  document.body.setAttribute("data-nodes", nodes);
  document.body.setAttribute("data-edges", edges);
  document.body.setAttribute("data-ready", "1");
  window.tdflowView = { select: select, search: search, next: next, fit: fit, zoom: zoom };
})();
