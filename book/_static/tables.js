/* Wide tables as stacked cards on a phone (styles in tables.css).
 *
 * At a window of at most 600 px, a content table wider than its box would scroll sideways and
 * hide its columns past the right edge; one that fits only by squeezing a column of text to a
 * word or two a line (a cell of CRUSHED_WORDS words or more in less than CRUSHED_PX) is hard to read
 * too. Such a table gets the class "lnw-cards": each body row
 * is shown as a card, one "header: value" line per cell. Each cell gets data-label (its column
 * header's text) and a label element that clones the header's content, so math in a header
 * (MathJax) shows as math. The label is aria-hidden: screen readers keep the table's own
 * header associations, which the explicit ARIA roles keep when CSS changes the display.
 * Tables that fit stay tables; wider windows are never touched. Reruns on resize, and after a
 * click (a fold or tab that opens may reveal a table).
 */
(function () {
  "use strict";
  var NARROW = 600;
  var CRUSHED_WORDS = 8;
  var CRUSHED_PX = 110;
  var ROLES = { TABLE: "table", THEAD: "rowgroup", TBODY: "rowgroup", TFOOT: "rowgroup", TR: "row", TD: "cell" };

  function tables() {
    return document.querySelectorAll(".bd-article table:not(.lnw-table)");
  }

  /* The header row: the last row of thead, or a first row made only of th cells. */
  function headerRow(table) {
    if (table.tHead && table.tHead.rows.length) { return table.tHead.rows[table.tHead.rows.length - 1]; }
    var first = table.rows[0];
    if (first && first.cells.length && Array.prototype.every.call(first.cells, function (c) { return c.tagName === "TH"; })) {
      return first;
    }
    return null;
  }

  /* The header cell of each column (a colspan covers several columns). */
  function columnHeaders(row) {
    var columns = [];
    if (!row) { return columns; }
    Array.prototype.forEach.call(row.cells, function (cell) {
      for (var k = 0; k < cell.colSpan; k++) { columns.push(cell); }
    });
    return columns;
  }

  function label(header) {
    var span = document.createElement("span");
    span.className = "lnw-card-label";
    span.setAttribute("aria-hidden", "true");
    var source = header.children.length === 1 && header.firstElementChild.tagName === "P" ? header.firstElementChild : header;
    Array.prototype.forEach.call(source.childNodes, function (node) { span.appendChild(node.cloneNode(true)); });
    span.querySelectorAll("[id]").forEach(function (el) { el.removeAttribute("id"); });
    // a copy must not take keyboard focus (MathJax's output is focusable, for its menu)
    span.querySelectorAll("[tabindex], a[href], button, input, select, textarea").forEach(function (el) {
      el.setAttribute("tabindex", "-1");
    });
    return span;
  }

  function toCards(table) {
    var head = headerRow(table);
    var columns = columnHeaders(head);
    table.classList.add("lnw-cards");
    if (head) { head.classList.add("lnw-card-head"); }
    Array.prototype.forEach.call(table.querySelectorAll("table, thead, tbody, tfoot, tr, th, td"), function (el) {
      if (el.closest("table") !== table && el !== table) { return; }
      var role = el.tagName === "TH" ? (el.parentElement === head ? "columnheader" : "rowheader") : ROLES[el.tagName];
      el.setAttribute("role", role);
    });
    table.setAttribute("role", "table");
    Array.prototype.forEach.call(table.rows, function (row) {
      if (row === head) { return; }
      var column = 0;
      Array.prototype.forEach.call(row.cells, function (cell) {
        var header = columns[column];
        column += cell.colSpan;
        var text = header ? header.textContent.replace(/\s+/g, " ").trim() : "";
        if (!text || header === cell) { return; }
        cell.setAttribute("data-label", text);
        cell.insertBefore(label(header), cell.firstChild);
      });
    });
  }

  /* A cell of many words squeezed into a narrow column: a word or two a line. */
  function crushed(table) {
    return Array.prototype.some.call(table.querySelectorAll("td, th"), function (cell) {
      if (cell.closest("table") !== table) { return false; }
      var words = cell.textContent.trim().split(/\s+/).length;
      return words >= CRUSHED_WORDS && cell.getBoundingClientRect().width < CRUSHED_PX;
    });
  }

  function toTable(table) {
    table.classList.remove("lnw-cards");
    table.querySelectorAll(".lnw-card-label").forEach(function (span) { span.remove(); });
    table.querySelectorAll("[data-label]").forEach(function (cell) { cell.removeAttribute("data-label"); });
  }

  function update() {
    var narrow = window.innerWidth <= NARROW;
    tables().forEach(function (table) {
      if (table.classList.contains("lnw-cards")) { toTable(table); }
      var box = table.parentElement;
      if (narrow && box && (table.getBoundingClientRect().width > box.clientWidth + 1 || crushed(table))) {
        toCards(table);
      }
    });
  }

  var pending = false;
  function schedule() {
    if (pending) { return; }
    pending = true;
    window.requestAnimationFrame(function () { pending = false; update(); });
  }

  function start() {
    var mathjax = window.MathJax && window.MathJax.startup && window.MathJax.startup.promise;
    (mathjax || Promise.resolve()).then(update, update);
    window.addEventListener("resize", schedule);
    document.addEventListener("click", function () { window.setTimeout(schedule, 50); });
  }
  if (document.readyState === "complete") { start(); } else { window.addEventListener("load", start); }
})();
