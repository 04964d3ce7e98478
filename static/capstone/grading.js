// Live total on the grading page: the sum of the checked levels' points, updated as radios change.
(function () {
  "use strict";
  var form = document.getElementById("grade-form");
  var output = document.getElementById("live-total");
  if (!form || !output) return;
  function update() {
    var total = 0;
    form.querySelectorAll("input[type=radio][data-points]:checked").forEach(function (input) {
      total += Number(input.dataset.points) || 0;
    });
    output.textContent = String(total);
  }
  form.addEventListener("change", update);
  update();
})();
