// <form data-confirm="Delete this trace?">: asks before submitting (no inline handlers: see the CSP).
document.addEventListener("submit", function (event) {
  "use strict";
  var question = event.target.getAttribute && event.target.getAttribute("data-confirm");
  if (question && !window.confirm(question)) { event.preventDefault(); }
}, true);
