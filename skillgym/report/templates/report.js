// Filters and sorts the case table; everything else on the page is plain HTML and SVG.
(function () {
  "use strict";
  var table = document.getElementById("case-table");
  if (!table) { return; }
  var body = table.tBodies[0];
  var rows = Array.prototype.slice.call(body.rows);
  var controls = {
    lane: document.getElementById("filter-lane"),
    condition: document.getElementById("filter-condition"),
    status: document.getElementById("filter-status"),
    text: document.getElementById("filter-text")
  };
  var count = document.getElementById("case-count");
  var pageSize = document.getElementById("page-size");
  var prev = document.getElementById("page-prev"), next = document.getElementById("page-next");
  var page = 0;
  document.getElementById("case-filters").classList.remove("hidden");

  // Shows the rows that pass every filter, one page of them at a time.
  function apply() {
    var lane = controls.lane.value, condition = controls.condition.value;
    var status = controls.status.value, text = controls.text.value.trim().toLowerCase();
    var size = parseInt(pageSize.value, 10);
    var matching = rows.filter(function (row) {
      return (!lane || row.dataset.lane === lane) &&
        (!condition || row.dataset.condition === condition) &&
        (!status || row.dataset.statuses.split(" ").indexOf(status) >= 0) &&
        (!text || row.dataset.text.indexOf(text) >= 0);
    });
    var pages = size ? Math.max(1, Math.ceil(matching.length / size)) : 1;
    page = Math.min(page, pages - 1);
    var first = size ? page * size : 0, last = size ? first + size : matching.length;
    rows.forEach(function (row) { row.hidden = true; });
    matching.slice(first, last).forEach(function (row) { row.hidden = false; });
    table.classList.add("paged");
    prev.disabled = page === 0;
    next.disabled = page >= pages - 1;
    count.textContent = matching.length + " of " + rows.length + " rows" +
      (pages > 1 ? "; page " + (page + 1) + " of " + pages : "");
  }
  Object.keys(controls).forEach(function (name) {
    controls[name].addEventListener("input", function () { page = 0; apply(); });
  });
  pageSize.addEventListener("input", function () { page = 0; apply(); });
  prev.addEventListener("click", function () { page -= 1; apply(); });
  next.addEventListener("click", function () { page += 1; apply(); });

  function key(row, index, numeric) {
    var cell = row.cells[index];
    var value = cell.dataset.sort !== undefined ? cell.dataset.sort : cell.textContent.trim();
    if (!numeric) { return value.toLowerCase(); }
    return value === "" ? null : parseFloat(value);
  }
  Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, index) {
    var button = th.querySelector("button.sort");
    if (!button) { return; }
    button.addEventListener("click", function () {
      var descending = th.getAttribute("aria-sort") === "ascending";
      Array.prototype.forEach.call(table.tHead.rows[0].cells, function (other) { other.removeAttribute("aria-sort"); });
      th.setAttribute("aria-sort", descending ? "descending" : "ascending");
      var numeric = th.classList.contains("n");
      var sign = descending ? -1 : 1;
      rows.sort(function (a, b) {
        var x = key(a, index, numeric), y = key(b, index, numeric);
        if (x === y) { return 0; }
        if (x === null) { return 1; }  // a missing number sorts last either way
        if (y === null) { return -1; }
        return (x < y ? -1 : 1) * sign;
      });
      var ordered = document.createDocumentFragment();
      rows.forEach(function (row) { ordered.appendChild(row); });
      body.appendChild(ordered);
      page = 0;
      apply();
    });
  });
  apply();
})();
