// Shows an element marked data-show-when="field=value1,value2" only while the form's field named
// `field` (a select or radio group) has one of those values. Used by the question import and design forms.
(function () {
  function currentValue(form, name) {
    const checked = form.querySelector('[name="' + name + '"]:checked');
    if (checked) return checked.value;
    const field = form.querySelector('[name="' + name + '"]');
    return field ? field.value : "";
  }

  function refresh(form) {
    form.querySelectorAll("[data-show-when]").forEach(function (element) {
      const [name, values] = element.dataset.showWhen.split("=");
      element.hidden = !values.split(",").includes(currentValue(form, name));
    });
  }

  document.addEventListener("DOMContentLoaded", function () {
    document.querySelectorAll("form").forEach(function (form) {
      if (!form.querySelector("[data-show-when]")) return;
      refresh(form);
      form.addEventListener("change", function () { refresh(form); });
    });
  });
})();
