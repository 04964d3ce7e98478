// Review session keyboard shortcuts: Space or Enter shows the answer (on a calculated card with
// no number yet, moves to its field), 1–4 grade.
// Off when the panel says data-shortcuts="off" (the learner's preference). The buttons stay
// ordinary focusable buttons, so Tab + Enter works with or without this file.
(function () {
  "use strict";

  function panel() {
    return document.getElementById("review-panel");
  }

  function typingIn(target) {
    return target instanceof HTMLElement &&
      target.closest("input, textarea, select, [contenteditable]") !== null;
  }

  document.addEventListener("keydown", function (event) {
    var p = panel();
    if (!p || p.dataset.shortcuts !== "on") return;
    if (event.altKey || event.ctrlKey || event.metaKey || event.repeat) return;
    if (typingIn(event.target)) return;
    var onControl = event.target instanceof HTMLElement &&
      event.target.closest("button, a, summary") !== null;
    var target = null;
    if (event.key === " " || event.key === "Enter") {
      if (onControl) return; // let the focused button or link do its own thing
      // A calculated card checks a typed number: the key moves to its field instead of
      // submitting an empty answer.
      var value = p.querySelector("#calculated-value");
      if (value && !value.value) {
        event.preventDefault();
        value.focus();
        return;
      }
      target = p.querySelector('[data-shortcut="reveal"]');
    } else if (/^[1-4]$/.test(event.key)) {
      target = p.querySelector('[data-shortcut="grade-' + event.key + '"]');
    }
    if (target && !target.disabled) {
      event.preventDefault();
      target.click();
    }
  });

  // After htmx swaps in a new card, move focus to it; after a reveal, to the answer (the grade
  // buttons follow it, so on a phone they come into view). Screen readers read what changed
  // and the keys keep working.
  document.addEventListener("htmx:afterSettle", function (event) {
    var p = panel();
    if (!p || !(event.target instanceof HTMLElement)) return;
    // A reveal swaps the card itself (outerHTML): its old element is then detached.
    if (event.target.isConnected && !p.contains(event.target)) return;
    var target = document.getElementById("review-answer") || document.getElementById("card");
    if (target) target.focus({ preventScroll: false });
  });
})();
