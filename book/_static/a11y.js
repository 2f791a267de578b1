/* Accessibility fixes for the theme's script-only buttons (tests/test_accessibility.py).
 *
 * WCAG 2.5.3 "Label in Name": a control's accessible name must contain its visible text.
 * - The search field button is named by aria-label "Search" but shows "Search Ctrl+K": the
 *   aria-label is dropped, so its name is its visible text, and the Ctrl+K hint is hidden
 *   from assistive technology (the name is "Search").
 * - The colour-mode button is named "Color mode" while Font Awesome turns its three icons
 *   into <svg role="img"> titled "Light", "Dark", "System Settings": the icons become
 *   decorative and the button's name says the mode it is in ("Color mode: dark").
 * - A chapter with section pages gets a sidebar toggle, <summary> holding only a chevron icon,
 *   so it has no name (axe "summary-name"): it is named "Sections of" and the chapter's title.
 * Font Awesome swaps its <i> icons for <svg> after load, so the fix reruns on every change.
 *
 * WCAG 2.1.1 (axe "scrollable-region-focusable"): a box that scrolls must take keyboard focus. The
 * theme gives scrolling code and output boxes tabindex 0 on load, on resize and when the page's nodes
 * change, but not when a fold opens or a web font widens a line: a code box inside a closed fold is
 * measured at zero width and keeps tabindex -1 once opened. Here every such box is watched with a
 * ResizeObserver (a box that appears or changes size is measured again), with the theme's rule.
 */
(function () {
  "use strict";
  var MODES = { light: "light", dark: "dark", auto: "system setting" };

  function fix() {
    document.querySelectorAll(".search-button__button").forEach(function (button) {
      if (button.querySelector(".search-button__default-text")) { button.removeAttribute("aria-label"); }
    });
    document.querySelectorAll(".search-button__kbd-shortcut").forEach(function (hint) {
      hint.setAttribute("aria-hidden", "true");
    });
    document.querySelectorAll(".has-children > details > summary").forEach(function (toggle) {
      var link = toggle.parentElement.parentElement.querySelector(":scope > a");
      var name = "Sections of " + (link ? link.textContent.trim() : "this chapter");
      if (toggle.getAttribute("aria-label") !== name) { toggle.setAttribute("aria-label", name); }
    });
    var mode = document.documentElement.dataset.mode;
    document.querySelectorAll(".theme-switch-button").forEach(function (button) {
      button.querySelectorAll("svg, i").forEach(function (icon) {
        var title = icon.querySelector("title");
        if (title) { title.remove(); }
        ["role", "aria-labelledby", "title"].forEach(function (a) { if (icon.hasAttribute(a)) { icon.removeAttribute(a); } });
        if (icon.getAttribute("aria-hidden") !== "true") { icon.setAttribute("aria-hidden", "true"); }
      });
      var name = "Color mode" + (mode ? ": " + (MODES[mode] || mode) : "");
      if (button.getAttribute("aria-label") !== name) { button.setAttribute("aria-label", name); }
    });
  }

  var SCROLLERS = "pre, .nboutput > .output_area, .cell_output > .output, .jp-RenderedHTMLCommon, .pst-scrollable-table-container";

  function tabStop(box) {
    var scrolls = box.scrollWidth > box.clientWidth || box.scrollHeight > box.clientHeight;
    if (box.tabIndex !== (scrolls ? 0 : -1)) { box.tabIndex = scrolls ? 0 : -1; }
  }

  function watchScrollers() {
    var boxes = document.querySelectorAll(SCROLLERS);
    if (!window.ResizeObserver) { boxes.forEach(tabStop); return; }
    var observer = new ResizeObserver(function (entries) { entries.forEach(function (e) { tabStop(e.target); }); });
    boxes.forEach(function (box) { observer.observe(box); });
    if (document.fonts) { document.fonts.ready.then(function () { boxes.forEach(tabStop); }); }
  }

  function start() {
    fix();
    watchScrollers();
    var observer = new MutationObserver(fix);
    observer.observe(document.documentElement, { attributes: true, attributeFilter: ["data-mode"] });
    document.querySelectorAll(".theme-switch-button, .search-button__button").forEach(function (button) {
      observer.observe(button, { childList: true, subtree: true });
    });
  }
  if (document.readyState === "loading") { document.addEventListener("DOMContentLoaded", start); } else { start(); }
})();
