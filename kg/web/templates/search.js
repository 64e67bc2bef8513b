// The search of a static abstract-kg site: names (with aliases and acronyms) and paper
// titles from search-index.js, matched in the browser. Results are built as DOM nodes
// with textContent: no text of the index is ever read as HTML.
(function () {
  "use strict";
  // the first part of an id: the type (its CSS class) and what a reader calls it
  var TYPES = { paper: ["Paper", "paper"], method: ["Method", "method"], task: ["Task", "task"],
                dataset: ["Dataset", "dataset"], venue: ["Venue", "venue"],
                repository: ["CodeRepository", "code repository"] };
  function page(id) { return "resource/" + id.replace(/%/g, "%25") + ".html"; }
  var params = new URLSearchParams(window.location.search);
  var q = (params.get("q") || "").trim();
  var box = document.querySelector("nav input[type=search]");
  if (box) { box.value = q; }
  var status = document.getElementById("status");
  var results = document.getElementById("results");
  if (!q) { return; }
  var words = q.toLowerCase().split(/[^\p{L}\p{N}]+/u).filter(Boolean);
  var whole = q.toLowerCase();

  function score(texts) {
    // 3: a name is the query, 2: a name starts with it, 1: every word is in a name
    var best = 0;
    for (var i = 0; i < texts.length; i++) {
      var t = texts[i].toLowerCase();
      if (t === whole) { return 3; }
      if (t.indexOf(whole) === 0) { best = Math.max(best, 2); }
      else if (words.every(function (w) { return t.indexOf(w) >= 0; })) { best = Math.max(best, 1); }
    }
    return best;
  }

  var names = [];
  KG_SEARCH.names.forEach(function (e) {
    var s = score([e[0]].concat(e[3] || []));
    if (s) { names.push([s, e]); }
  });
  names.sort(function (a, b) { return b[0] - a[0] || b[1][2] - a[1][2] || (a[1][0] < b[1][0] ? -1 : 1); });
  var papers = [];
  KG_SEARCH.papers.forEach(function (p) {
    var s = score([p[0]]);
    if (s) { papers.push([s, p]); }
  });
  papers.sort(function (a, b) { return b[0] - a[0] || b[1][2] - a[1][2]; });

  function table(rows, cells) {
    var t = document.createElement("table");
    rows.forEach(function (r) {
      var tr = t.insertRow();
      cells(r).forEach(function (c, i) {
        var td = tr.insertCell();
        if (i > 0) { td.className = "n"; }
        if (c instanceof Node) { td.appendChild(c); } else { td.textContent = c; }
      });
    });
    return t;
  }
  function link(href, text) { var a = document.createElement("a"); a.href = href; a.textContent = text; return a; }
  function heading(text) { var h = document.createElement("h2"); h.textContent = text; return h; }

  document.title = "Search: " + q + " · abstract-kg";
  status.textContent = names.length + papers.length ? "" : "Nothing found.";
  if (names.length) {
    results.appendChild(heading("Methods, tasks, datasets"));
    results.appendChild(table(names.slice(0, 50), function (r) {
      var cell = document.createElement("span");
      cell.appendChild(link(page(r[1][1]), r[1][0]));
      var type = TYPES[r[1][1].split("/")[0]] || ["", ""];
      var kind = document.createElement("span");
      kind.className = "kind " + type[0];
      kind.textContent = type[1];
      cell.appendChild(document.createTextNode(" "));
      cell.appendChild(kind);
      return [cell, String(r[1][2])];
    }));
  }
  if (papers.length) {
    results.appendChild(heading("Papers"));
    results.appendChild(table(papers.slice(0, 50), function (r) {
      return [link(page("paper/" + r[1][1]), r[1][0]), r[1][2] ? String(r[1][2]) : ""];
    }));
  }
})();
