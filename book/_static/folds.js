/* A link to something inside a closed fold opens the fold (reads 182-183: a link from an exercise to a
 * figure in a closed answer led to a blank spot).
 *
 * Folds are sphinx-togglebutton dropdowns: an ".admonition.toggle" whose body is hidden while it has
 * the class "toggle-hidden", opened by the button in its title. When the page is opened at an anchor,
 * when the anchor changes, and when a reader follows a link to an anchor on this page, every closed
 * fold around the target is opened, outermost first, and the target is scrolled into view.
 */
(function () {
  "use strict";

  function targetOf(hash) {
    if (!hash || hash.length < 2) { return null; }
    try { return document.getElementById(decodeURIComponent(hash.slice(1))); } catch (e) { return null; }
  }

  /* The closed folds around el, outermost first. */
  function closedFolds(el) {
    var folds = [];
    for (var node = el; node; node = node.parentElement) {
      if (node.classList && node.classList.contains("toggle-hidden")) { folds.unshift(node); }
    }
    return folds;
  }

  function reveal(hash) {
    var target = targetOf(hash);
    if (!target) { return false; }
    var folds = closedFolds(target);
    folds.forEach(function (fold) {
      var button = fold.querySelector(":scope > .admonition-title .toggle-button");
      if (button && typeof toggleHidden === "function") { toggleHidden(button); }
      else { fold.classList.remove("toggle-hidden"); }
    });
    if (folds.length) { target.scrollIntoView({ block: "start" }); }
    return folds.length > 0;
  }

  document.addEventListener("click", function (event) {
    var link = event.target.closest && event.target.closest("a[href*='#']");
    if (!link || link.origin !== location.origin || link.pathname !== location.pathname) { return; }
    if (reveal(link.hash)) {
      event.preventDefault();
      history.pushState(null, "", link.hash);
    }
  });
  window.addEventListener("hashchange", function () { reveal(location.hash); });
  /* after sphinx-togglebutton has closed the folds (it runs when the document is parsed) */
  window.addEventListener("load", function () { reveal(location.hash); });
})();
