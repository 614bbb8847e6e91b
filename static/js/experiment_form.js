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
