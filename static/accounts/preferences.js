// The preferences page's time-zone picker: a search box (with the zones as suggestions) that
// drives the grouped list, and, for someone who never chose a zone, the browser's zone preselected.
(function () {
  "use strict";
  var select = document.getElementById("id_time_zone");
  var search = document.getElementById("tz-search");
  var input = document.getElementById("tz-search-input");
  if (!select || !search || !input) return;
  var field = select.closest(".field");
  field.parentNode.insertBefore(search, field.nextSibling);
  search.hidden = false;

  function has(zone) {
    return Array.prototype.some.call(select.options, function (o) { return o.value === zone; });
  }
  input.addEventListener("input", function () {
    var value = input.value.trim();
    if (has(value)) select.value = value;
  });

  if (search.hasAttribute("data-suggest-browser-zone")) {
    var zone = "";
    try { zone = Intl.DateTimeFormat().resolvedOptions().timeZone || ""; } catch (e) { zone = ""; }
    if (zone && zone !== select.value && has(zone)) {
      select.value = zone;
      var note = document.getElementById("tz-browser");
      note.textContent = note.dataset.text.replace("%(zone)s", zone);
      note.hidden = false;
    }
  }
})();
