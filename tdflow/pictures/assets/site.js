// tdflow doc --html: client-side search over the index embedded in every page.
// Results are built with textContent and element properties: index text is never parsed as HTML.
(function () {
  "use strict";
  var index = JSON.parse(document.getElementById("tdflow-index").textContent);
  var input = document.getElementById("search");
  var list = document.getElementById("results");
  function score(op, q) { // name matches first, then summary and traits
    var name = op.n.toLowerCase(), short = name.slice(name.indexOf(".") + 1);
    if (short === q || name === q) return 0;
    if (short.indexOf(q) === 0) return 1;
    if (name.indexOf(q) >= 0) return 2;
    if ((op.s + " " + op.t).toLowerCase().indexOf(q) >= 0) return 3;
    return -1;
  }
  function search(q) {
    q = (q || "").trim().toLowerCase();
    list.textContent = "";
    if (!q) return [];
    var hits = [];
    index.forEach(function (op) { var s = score(op, q); if (s >= 0) hits.push([s, op]); });
    hits.sort(function (a, b) { return a[0] - b[0] || (a[1].n < b[1].n ? -1 : 1); });
    hits.slice(0, 50).forEach(function (h, i) {
      var li = document.createElement("li"), a = document.createElement("a");
      a.href = h[1].h; a.textContent = h[1].n;
      if (i === 0) a.className = "current";
      var small = document.createElement("small"); small.textContent = h[1].s;
      a.appendChild(small); li.appendChild(a); list.appendChild(li);
    });
    return hits.map(function (h) { return h[1].n; });
  }
  input.addEventListener("input", function () { search(input.value); });
  input.addEventListener("keydown", function (ev) {
    if (ev.key === "Enter" && list.firstChild) window.location.href = list.firstChild.firstChild.href;
    if (ev.key === "Escape") { input.value = ""; search(""); }
  });
  document.body.setAttribute("data-ops", index.length);
  window.tdflowSite = { search: search };
})();
