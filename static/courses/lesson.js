// After "Mark lesson complete" swaps in the completed state, the button the keyboard user was on
// is gone; move focus to the next lesson (or the completion box) instead of the page's start.
document.body.addEventListener("htmx:afterSettle", () => {
  const completion = document.getElementById("completion");
  const focusLost = !document.activeElement || document.activeElement === document.body;
  if (!completion || !focusLost || !completion.querySelector(".lesson-done")) {
    return;
  }
  const next = document.querySelector(".lesson-nav a[rel=next]");
  (next || completion).focus();
});
