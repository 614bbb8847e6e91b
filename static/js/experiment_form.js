// New-experiment form: say which date day 0 of the time window is, for the trace chosen.
(function () {
  "use strict";
  const select = document.getElementById("id_trace");
  const box = document.getElementById("day-zero");
  if (!select || !box) return;
  function show() {
    box.querySelectorAll("[data-trace]").forEach(function (item) { item.hidden = item.dataset.trace !== select.value; });
  }
  select.addEventListener("change", show);
  show();
})();

// The "your own order" card: check the formula as it is typed (a small JSON request, debounced),
// and fill the box from a literature example.
(function () {
  "use strict";
  const box = document.getElementById("id_own_formula");
  const status = document.getElementById("formula-check");
  const first = document.getElementById("id_own_first");
  const algorithm = document.getElementById("id_own_algorithm");
  const use = document.getElementById("id_own_use");
  if (!box || !status) return;
  let timer = null;
  let asked = 0;
  function show(text, state) {
    status.textContent = text;
    status.classList.toggle("ok", state === "ok");
    status.classList.toggle("bad", state === "bad");
    status.dataset.state = state;
  }
  function check() {
    const formula = box.value.trim();
    if (!formula) { show("", "empty"); return; }
    const mine = ++asked;
    const query = new URLSearchParams({formula: formula, first: first.value, algorithm: algorithm.value});
    show("checking…", "checking");
    fetch(status.dataset.url + "?" + query.toString(), {headers: {"Accept": "application/json"}})
      .then(function (response) { return response.json(); })
      .then(function (answer) {
        if (mine !== asked) return;          // a later keystroke asked again
        if (answer.ok) {
          show("✓ " + answer.label + (answer.dynamic ? " — evaluated at every scheduling pass" : " — one key per job"), "ok");
        } else {
          show(answer.error, "bad");
        }
      })
      .catch(function () { if (mine === asked) show("could not check the formula now", "bad"); });
  }
  function later() {
    clearTimeout(timer);
    timer = setTimeout(check, 250);
  }
  box.addEventListener("input", function () { if (use) use.checked = true; later(); });
  first.addEventListener("change", later);
  algorithm.addEventListener("change", later);
  document.querySelectorAll(".formula-example").forEach(function (button) {
    button.addEventListener("click", function () {
      box.value = button.dataset.formula;
      first.value = button.dataset.first;
      if (use) use.checked = true;
      check();
    });
  });
  if (box.value.trim()) check();
})();
