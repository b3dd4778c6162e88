// Adjudicator decision form (templates/annotation/adjudication/item.html). The label form's script
// (annotation-label.js) gives number keys and Enter; this one moves the focus to the note once every
// open question has a decision, so a reviewer can choose, type the note and press Enter without a mouse.
(function () {
  "use strict";
  const form = document.querySelector("[data-label-form]");
  const note = document.getElementById("note");
  if (!form || !note) return;
  const questions = Array.from(form.querySelectorAll(".label-question"));
  function allDecided() {
    return questions.every(function (q) { return q.querySelector("input[type=radio]:checked"); });
  }
  document.addEventListener("keyup", function (event) {
    if (document.activeElement === note) return;
    if (event.key.length === 1 && allDecided()) note.focus();
  });
})();
