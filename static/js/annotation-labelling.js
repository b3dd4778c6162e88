// Main labelling page (templates/annotation/labelling/label.html): shows the active time on the item.
// The label form's own script (annotation-label.js) measures the time that is sent; this clock uses the
// same rule — it stops while the tab is hidden — so what the annotator sees is what is recorded.
(function () {
  "use strict";
  const clock = document.querySelector("[data-active-time]");
  if (!clock) return;
  let activeMs = 0;
  let visibleSince = document.visibilityState === "visible" ? performance.now() : null;
  document.addEventListener("visibilitychange", function () {
    if (document.visibilityState === "visible") {
      if (visibleSince === null) visibleSince = performance.now();
    } else if (visibleSince !== null) {
      activeMs += performance.now() - visibleSince;
      visibleSince = null;
    }
  });
  function render() {
    const running = visibleSince === null ? 0 : performance.now() - visibleSince;
    const seconds = Math.floor((activeMs + running) / 1000);
    clock.textContent = Math.floor(seconds / 60) + ":" + String(seconds % 60).padStart(2, "0");
  }
  render();
  setInterval(render, 1000);
})();
