// The calculator's config.json upload, and open tables kept open across recalculations.
// The upload: the file's text goes into the paste box (where it can be
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

  // A recalculation replaces the result: the tables a reader opened stay open (focus on their
  // summary is kept by htmx, which refocuses an element with the same id).
  var opened = [];
  document.body.addEventListener("htmx:beforeSwap", function (event) {
    if (!event.detail.target || event.detail.target.id !== "calc-result") return;
    opened = Array.prototype.map.call(
      event.detail.target.querySelectorAll("details[id][open]"), function (d) { return d.id; });
  });
  document.body.addEventListener("htmx:afterSwap", function (event) {
    if (!event.detail.target || event.detail.target.id !== "calc-result") return;
    opened.forEach(function (id) {
      var details = document.getElementById(id);
      if (details) details.open = true;
    });
  });
})();
