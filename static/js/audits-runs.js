// Audit pages: ask before destructive actions (buttons with data-confirm); announce a change of the run's status.
document.addEventListener("click", function (event) {
  var button = event.target.closest("[data-confirm]");
  if (button && !window.confirm(button.getAttribute("data-confirm"))) {
    event.preventDefault();
  }
});

// The run panel is swapped in by htmx on every poll and is no live region (it would be read out each time): when the
// status it shows has changed, the status and the dialogues done are said once, in the page's own status region.
document.addEventListener("htmx:load", function () {
  const status = document.getElementById("audit-status");
  const region = document.getElementById("audit-status-announcer");
  if (!status || !region || region.dataset.said === status.textContent) {
    return;
  }
  region.dataset.said = status.textContent;
  const done = document.getElementById("dialogues-done");
  region.textContent = "Audit " + status.textContent + (done ? ", " + done.textContent + " dialogues done." : ".");
});
