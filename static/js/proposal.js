// A preview's proposal editor: after each change of a row or of the YAML, ask the server for the
// proposal (the YAML wins when it was edited) and show it both ways, with its difference from the
// current configuration. The buttons still post the form as it is, so it works without this script.
(function () {
  "use strict";
  const form = document.getElementById("proposal-form");
  if (!form) return;
  const yaml = form.querySelector('textarea[name="yaml"]');
  const base = form.querySelector('input[name="yaml_base"]');
  const diff = document.getElementById("proposal-diff");
  const error = document.getElementById("proposal-error");
  let timer = null;

  function setField(name, value) {
    const inputs = form.querySelectorAll('[name="' + name + '"]');
    inputs.forEach(function (input) {
      if (input.type === "checkbox") input.checked = Array.isArray(value) && value.includes(input.value);
      else input.value = value === null || value === undefined ? "" : value;
    });
  }

  async function check() {
    const data = new FormData(form);
    data.set("action", "check");
    const response = await fetch(form.dataset.checkUrl, {method: "POST", body: data, credentials: "same-origin"});
    const answer = await response.json();
    if (!response.ok) {
      error.textContent = (answer.errors || ["The proposal does not read."]).join(" ");
      error.hidden = false;
      return;
    }
    error.hidden = true;
    yaml.value = answer.yaml;
    base.value = answer.yaml;      // the rows and the YAML agree again
    Object.entries(answer.fields).forEach(function (entry) { setField(entry[0], entry[1]); });
    diff.innerHTML = answer.diff;   // rendered and escaped by the server's template
    form.dataset.checked = String(Number(form.dataset.checked || 0) + 1);
  }

  form.addEventListener("change", function (event) {
    if (event.target.name === "name") return;
    clearTimeout(timer);
    timer = setTimeout(function () { check().catch(function () {}); }, 250);
  });
})();
