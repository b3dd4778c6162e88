// htmx requests carry the CSRF token from the body's hx-headers; nothing else to do for forms.
// This file exists so pages without htmx attributes still load one small, cacheable script.
document.addEventListener("htmx:responseError", function (event) {
  const box = document.querySelector(".messages") || document.createElement("ul");
  box.className = "messages";
  const item = document.createElement("li");
  item.className = "error";
  item.textContent = "The server answered " + event.detail.xhr.status + ". Nothing was changed; try again.";
  box.appendChild(item);
  document.querySelector("main.content").prepend(box);
});
