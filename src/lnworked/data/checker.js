/* lnworked practice: the kernel-free answer checker (see lnworked/practice/widget.py).
 *
 * The checker is a <form class="lnw-checker"> holding a <select name="problem">, an
 * <input name="answer">, a Check button, a polite live region <p class="lnw-verdict"> and
 * a <script type="application/json" class="lnw-answers"> list of the answers of the
 * problems on the page (Answer.to_json(), in the order of the select's options). Checking
 * uses window.lnwAnswers (lnworked/data/answers.js): nothing typed is ever executed.
 * The script defines window.lnwChecker once; each checker calls lnwChecker.init(its id).
 */
(function () {
  "use strict";
  if (window.lnwChecker) { return; }

  function init(id) {
    var form = document.getElementById(id);
    if (!form || form.getAttribute("data-lnw-ready") === "1") { return; }
    var answers = JSON.parse(form.querySelector("script.lnw-answers").textContent);
    var menu = form.querySelector('select[name="problem"]');
    var box = form.querySelector('input[name="answer"]');
    var out = form.querySelector(".lnw-verdict");

    function show(verdict) {
      out.textContent = "";
      var mark = document.createElement("span");
      mark.setAttribute("aria-hidden", "true");
      mark.textContent = verdict.correct ? "\u2714 " : "\u2718 ";
      out.appendChild(mark);
      out.appendChild(document.createTextNode(verdict.message));
      out.className = "lnw-verdict " + (verdict.correct ? "lnw-right" : "lnw-wrong");
      box.setAttribute("aria-invalid", verdict.correct ? "false" : "true");
    }

    form.addEventListener("submit", function (event) {
      event.preventDefault();  // Enter in the answer box submits the form: check, never navigate
      show(window.lnwAnswers.checkAnswer(answers[parseInt(menu.value, 10)], box.value));
    });
    menu.addEventListener("change", function () {
      out.textContent = "";
      out.className = "lnw-verdict";
      box.removeAttribute("aria-invalid");
    });
    form.setAttribute("data-lnw-ready", "1");
  }

  window.lnwChecker = { init: init };
}());
