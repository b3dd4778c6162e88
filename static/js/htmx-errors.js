// A failed htmx request is said on the page and announced (role="alert"): nothing is changed by it.
// htmx requests carry the CSRF token from the body's hx-headers (templates/base.html); nothing to do for that here.
document.addEventListener("htmx:responseError", function (event) {
  const box = document.querySelector(".messages") || document.createElement("ul");
  box.className = "messages";
  const item = document.createElement("li");
  item.className = "error";
  item.setAttribute("role", "alert");
  item.textContent = "The server answered " + event.detail.xhr.status + ". Nothing was changed; try again.";
  box.appendChild(item);
  document.querySelector("main.content").prepend(box);
});
