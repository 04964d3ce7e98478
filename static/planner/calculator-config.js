// The calculator's config.json upload: the file's text goes into the paste box (where it can be
// read and edited), and a change event on the box recalculates. Without JavaScript the file is
// posted with the form instead.
(function () {
  "use strict";
  document.addEventListener("change", function (event) {
    var input = event.target;
    if (!input || !input.getAttribute || !input.hasAttribute("data-config-upload")) return;
    // The text arrives through the paste box; htmx must not post the file as well.
    event.stopPropagation();
    var file = input.files && input.files[0];
    var box = document.getElementById(input.getAttribute("data-config-upload"));
    var error = document.getElementById("err-" + (box ? box.name : ""));
    if (!file || !box) return;
    var limit = parseInt(input.getAttribute("data-max-bytes"), 10);
    if (limit && file.size > limit) {
      if (error) error.textContent = "is larger than " + Math.floor(limit / 1024) + " KiB; a config.json is a few kB.";
      input.value = "";
      return;
    }
    var reader = new FileReader();
    reader.onload = function () {
      box.value = String(reader.result);
      input.value = "";
      box.dispatchEvent(new Event("change", { bubbles: true }));
    };
    reader.onerror = function () {
      if (error) error.textContent = "could not read the file; paste its text instead.";
    };
    reader.readAsText(file);
  }, true);
})();
