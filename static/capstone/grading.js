// Live total on the grading page: the sum of the checked levels' points, updated as radios
// change, and how many criteria still need a level before the grade can be released.
(function () {
  "use strict";
  var form = document.getElementById("grade-form");
  var output = document.getElementById("live-total");
  var left = document.getElementById("levels-left");
  if (!form || !output) return;
  function update() {
    var total = 0;
    form.querySelectorAll("input[type=radio][data-points]:checked").forEach(function (input) {
      total += Number(input.dataset.points) || 0;
    });
    output.textContent = String(total);
    if (!left) return;
    var missing = 0;
    form.querySelectorAll("fieldset.criterion").forEach(function (group) {
      if (!group.querySelector("input[type=radio]:checked")) missing += 1;
    });
    left.textContent = missing === 0 ? "· every criterion has a level"
      : "· " + missing + (missing === 1 ? " criterion needs" : " criteria need") + " a level";
  }
  form.addEventListener("change", update);
  update();
})();

// A grade that cannot be released comes back with an error beside each criterion still without a
// level: bring the first into view (clear of the sticky total bar) and focus it, so the grader
// reads it and Tab reaches that criterion's levels next.
(function () {
  "use strict";
  var error = document.querySelector("[data-level-error]");
  if (!error) return;
  error.focus({ preventScroll: true });
  error.scrollIntoView({ block: "center" });
})();
