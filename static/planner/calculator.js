// The calculator page: picking a GPU or model shows what it supplies; copy the shareable link.
(function () {
  "use strict";
  var form = document.getElementById("calc-form");
  var dataNode = document.getElementById("picker-data");
  var data = dataNode ? JSON.parse(dataNode.textContent) : { defaults: {}, clears: {} };
  var SOURCE = { gpu: "from the GPU", model: "from the model" };

  function field(name) {
    var el = form && form.elements.namedItem(name);
    return el && el.tagName === "INPUT" ? el : null;
  }

  // Picking a row empties the fields that would override it (so the pick takes effect), and the
  // empty fields show the row's figures as placeholders (the server does the same on first render).
  function pick(picker) {
    var select = form.elements.namedItem(picker);
    var figures = (data.defaults[picker] || {})[select.value] || {};
    (data.clears[picker] || []).forEach(function (name) {
      var input = field(name);
      if (!input) return;
      input.value = "";
      if (figures[name] !== undefined) {
        input.setAttribute("placeholder", figures[name] + " (" + SOURCE[picker] + ")");
      } else {
        input.removeAttribute("placeholder");
      }
    });
  }

  if (form) {
    // Capture phase: runs before htmx's own change listener reads the form for the request.
    form.addEventListener("change", function (event) {
      var name = event.target && event.target.name;
      if (name === "gpu" || name === "model") pick(name);
    }, true);
    // The decode-batch slider writes its field (the slider has no name of its own), and typing
    // in the field moves the slider.
    form.addEventListener("input", function (event) {
      var target = event.target;
      var synced = target && target.getAttribute && target.getAttribute("data-sync");
      if (synced) {
        var input = field(synced);
        if (input) input.value = target.value;
        return;
      }
      var slider = target && target.name && form.querySelector('[data-sync="' + target.name + '"]');
      if (slider && /^[0-9]+$/.test(target.value)) slider.value = target.value;
    }, true);
  }

  // Copy the link: the button appears only where the clipboard API exists. It lives in the
  // result, which htmx swaps, so listen on the document and reveal it after each swap.
  function revealCopyButtons() {
    if (!navigator.clipboard) return;
    document.querySelectorAll("button.copy-link[hidden]").forEach(function (b) { b.hidden = false; });
  }
  document.addEventListener("click", function (event) {
    var button = event.target.closest && event.target.closest("button.copy-link");
    if (!button) return;
    var status = button.parentNode.querySelector(".copy-status");
    navigator.clipboard.writeText(button.getAttribute("data-copy")).then(
      function () { if (status) status.textContent = "Link copied."; },
      function () { if (status) status.textContent = "Could not copy: select the link and copy it."; }
    );
  });
  // A field whose message is not empty is invalid for assistive technology too (WCAG 3.3.1).
  function markInvalidFields() {
    document.querySelectorAll("p.field-error[id^='err-']").forEach(function (message) {
      var field = document.getElementById("id_" + message.id.slice(4));
      if (!field) return;
      if (message.textContent.trim()) field.setAttribute("aria-invalid", "true");
      else field.removeAttribute("aria-invalid");
    });
  }
  // An update out of sight (on a phone the result is far above the lower fields): the announced
  // sentence is also shown under the field that changed it, with a link up to the result.
  var changedField = null;
  if (form) {
    ["input", "change"].forEach(function (type) {
      form.addEventListener(type, function (event) {
        var field = event.target && event.target.closest && event.target.closest(".field");
        if (field) changedField = field;
      }, true);
    });
  }
  function outOfSight(element) {
    if (!element) return true;
    var box = element.getBoundingClientRect();
    return box.bottom <= 0 || box.top >= window.innerHeight;
  }
  function showNearby() {
    var old = document.getElementById("calc-nearby");
    if (old) old.remove();
    var result = document.getElementById("calc-result");
    var announce = document.getElementById("calc-announce");
    var headline = result && result.querySelector(".headline, .errors");
    if (!changedField || !announce || !announce.textContent.trim() || !outOfSight(headline)) return;
    var note = document.createElement("p");
    note.id = "calc-nearby";
    note.className = "calc-nearby";
    note.setAttribute("data-testid", "calc-nearby");
    note.appendChild(document.createTextNode("Updated: " + announce.textContent.trim() + " "));
    var link = document.createElement("a");
    link.href = "#calc-result";
    link.textContent = "See the result";
    link.addEventListener("click", function (event) {
      event.preventDefault();
      result.scrollIntoView({ block: "start" });
      result.focus({ preventScroll: true });
    });
    note.appendChild(link);
    changedField.appendChild(note);
  }
  revealCopyButtons();
  markInvalidFields();
  document.body.addEventListener("htmx:afterSettle", function (event) {
    if (event.target && event.target.id === "calc-result") showNearby();
  });
  document.body.addEventListener("htmx:afterSwap", revealCopyButtons);
  document.body.addEventListener("htmx:afterSettle", markInvalidFields);
})();
