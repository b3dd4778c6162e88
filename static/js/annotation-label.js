// Keyboard labelling for templates/annotation/partials/label_form.html (pilot, qualification and main
// labelling share it; adjudication too). In the active question the key printed on a choice selects it:
// the server derives keys so that the digit typed is the value shown (0, 1, 2 on a 0–2 rubric; 1…9 on a
// category list — annotation/workflow/choice_keys.py); a choice without a key is clicked,
// "u" picks Unsure and "n" Not applicable where offered; the next question becomes active, or the
// justification box takes the focus when the chosen value needs one. Enter submits (Shift+Enter is a new
// line in a justification; Escape leaves the box). It also measures active time on the item: the clock
// stops while the tab is hidden, and the seconds are sent with the form.
(function () {
  "use strict";
  const form = document.querySelector("[data-label-form]");
  if (!form) return;
  const questions = Array.from(form.querySelectorAll(".label-question"));
  const secondsInput = form.querySelector("[data-seconds]");
  let active = 0;
  let activeMs = 0;
  let visibleSince = document.visibilityState === "visible" ? performance.now() : null;
  let submitting = false;

  function pause() {
    if (visibleSince !== null) {
      activeMs += performance.now() - visibleSince;
      visibleSince = null;
    }
  }
  function resume() {
    if (visibleSince === null) visibleSince = performance.now();
  }
  function activeSeconds() {
    const running = visibleSince === null ? 0 : performance.now() - visibleSince;
    return (activeMs + running) / 1000;
  }
  document.addEventListener("visibilitychange", function () {
    if (document.visibilityState === "visible") resume();
    else pause();
  });

  function setActive(index) {
    const moved = index !== active;
    active = Math.max(0, Math.min(index, questions.length - 1));
    questions.forEach(function (q, j) { q.classList.toggle("active", j === active); });
    // Answering by keyboard walks down the questions: keep the active one in view (above the submit bar).
    if (moved && questions[active]) questions[active].scrollIntoView({ block: "nearest" });
  }
  // The turn being rated in view inside the item pane (a long dialogue scrolls there, not the page).
  const source = form.querySelector("[data-label-source]");
  const rated = source ? source.querySelector(".turn.highlight") : null;
  if (rated && source.scrollHeight > source.clientHeight) {
    source.scrollTop = rated.offsetTop - source.offsetTop - source.clientHeight / 3;
  }
  function checkedValue(q) {
    const checked = q.querySelector("input[type=radio]:checked");
    return checked ? checked.value : null;
  }
  function needsJustification(q) {
    const values = (q.dataset.justifyValues || "").split(",").filter(Boolean);
    const value = checkedValue(q);
    return value !== null && values.indexOf(value) !== -1;
  }
  function refreshJustification(q) {
    const box = q.querySelector("[data-justification]");
    const area = box ? box.querySelector("textarea") : null;
    if (!area) return;
    const needed = needsJustification(q);
    area.required = needed;
    box.classList.toggle("needed", needed);
  }
  function choose(q, key) {
    const radio = q.querySelector('input[type=radio][data-key="' + key + '"]');
    if (!radio) return false;
    radio.checked = true;
    refreshJustification(q);
    if (needsJustification(q)) {
      q.querySelector("[data-justification] textarea").focus();
    } else if (active < questions.length - 1) {
      setActive(active + 1);
    }
    return true;
  }

  questions.forEach(function (q, i) {
    q.addEventListener("change", function () { setActive(i); refreshJustification(q); });
    q.addEventListener("focusin", function () { setActive(i); });
    refreshJustification(q);
  });
  const firstError = questions.findIndex(function (q) { return q.classList.contains("has-error"); });
  setActive(firstError === -1 ? 0 : firstError);

  document.addEventListener("keydown", function (event) {
    if (event.ctrlKey || event.metaKey || event.altKey || event.isComposing) return;
    const target = event.target;
    // Keys belong to the label form unless the focus is in some other form (the log-out button, a search).
    const otherForm = target.closest && target.closest("form");
    if (otherForm && otherForm !== form) return;
    const typing = target.matches("textarea, input[type=text], input:not([type])");
    if (event.key === "Enter") {
      if (typing && event.shiftKey) return;
      event.preventDefault();
      form.requestSubmit();
      return;
    }
    if (typing) {
      if (event.key === "Escape") target.blur();
      return;
    }
    if (event.key === "ArrowDown" && !target.matches("input[type=radio]")) {
      setActive(active + 1);
      event.preventDefault();
      return;
    }
    if (event.key === "ArrowUp" && !target.matches("input[type=radio]")) {
      setActive(active - 1);
      event.preventDefault();
      return;
    }
    const q = questions[active];
    if (q && event.key.length === 1 && choose(q, event.key.toLowerCase())) event.preventDefault();
  });

  form.dataset.keyboardReady = "1"; // browser tests wait for this before typing

  form.addEventListener("submit", function (event) {
    if (submitting) {
      event.preventDefault();
      return;
    }
    submitting = true;
    if (secondsInput) secondsInput.value = activeSeconds().toFixed(3);
  });
})();
