// The launch form's preview is swapped in on every change of the form and is no live region (it would be read out
// whole each time): when what it says in short changes, that is said once, in the form's own status region.
document.addEventListener("htmx:afterSettle", function () {
  const region = document.getElementById("launch-preview-announcer");
  if (!region) {
    return;
  }
  const text = (id) => (document.getElementById(id) || {}).textContent;
  const missing = text("launch-preview-missing");
  const blocking = document.querySelectorAll("#launch-check .launch-blocking").length;
  const said = missing
    ? missing
    : text("preview-dialogues") === undefined
      ? ""
      : "Preview: " + text("preview-dialogues") + " dialogues, " + text("preview-calls") + " model calls at most." +
        (blocking ? " " + blocking + " reason" + (blocking === 1 ? "" : "s") + " stop the launch." : "");
  if (said !== region.textContent) {
    region.textContent = said;
  }
});
