// Audit pages: ask before destructive actions (buttons with data-confirm). Progress polling is htmx.
document.addEventListener("click", function (event) {
  var button = event.target.closest("[data-confirm]");
  if (button && !window.confirm(button.getAttribute("data-confirm"))) {
    event.preventDefault();
  }
});
