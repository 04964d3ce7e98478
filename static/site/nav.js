// On a phone the top bar's sections scroll sideways: start with the current one in view.
(function () {
  "use strict";
  var current = document.querySelector('.sections [aria-current="page"]');
  var row = current && current.closest(".sections");
  if (!row || row.scrollWidth <= row.clientWidth) return;
  var link = current.getBoundingClientRect();
  var box = row.getBoundingClientRect();
  row.scrollLeft += link.left - box.left - (box.width - link.width) / 2;
})();
