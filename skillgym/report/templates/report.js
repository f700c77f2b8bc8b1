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
  document.getElementById("case-filters").classList.remove("hidden");

  function apply() {
    var lane = controls.lane.value, condition = controls.condition.value;
    var status = controls.status.value, text = controls.text.value.trim().toLowerCase();
    var shown = 0;
    rows.forEach(function (row) {
      var ok = (!lane || row.dataset.lane === lane) &&
        (!condition || row.dataset.condition === condition) &&
        (!status || row.dataset.statuses.split(" ").indexOf(status) >= 0) &&
        (!text || row.dataset.text.indexOf(text) >= 0);
      row.hidden = !ok;
      if (ok) { shown += 1; }
    });
    count.textContent = shown + " of " + rows.length + " rows";
  }
  Object.keys(controls).forEach(function (name) {
    controls[name].addEventListener("input", apply);
  });

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
      rows.forEach(function (row) { body.appendChild(row); });
    });
  });
  apply();
})();
