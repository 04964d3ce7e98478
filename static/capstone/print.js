// The 'Print / save as PDF' button: shown only where a script runs (the CSP forbids an inline
// onclick), it opens the browser's print dialog; the print stylesheet fits the plan on one page.
(function () {
  "use strict";
  document.querySelectorAll("button[data-print]").forEach(function (button) {
    button.hidden = false;
    button.addEventListener("click", function () { window.print(); });
  });
})();
