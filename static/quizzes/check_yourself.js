// Check-yourself items on lesson pages: after an item is answered or revealed in place (htmx
// swaps the whole item), move focus into it — to the error if there is one, else the feedback
// or the model answer — so keyboard and screen-reader users land on what changed.
(function () {
  "use strict";
  if (window.checkYourselfFocus) return; // the tag may be rendered more than once
  window.checkYourselfFocus = true;

  var pending = null;

  document.addEventListener("htmx:beforeRequest", function (event) {
    var item = event.target instanceof HTMLElement ? event.target.closest(".cy-item") : null;
    pending = item ? item.id : null;
  });

  document.addEventListener("htmx:afterSettle", function () {
    if (!pending) return;
    var item = document.getElementById(pending);
    pending = null;
    if (!item) return;
    var target = item.querySelector(".error, .cy-feedback");
    if (!target) return;
    if (!target.hasAttribute("tabindex")) target.setAttribute("tabindex", "-1");
    target.focus();
  });
})();
