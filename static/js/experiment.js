// Experiment page: poll the progress endpoint and update the runs table in place (no reload).
(function () {
  "use strict";
  const table = document.getElementById("runs");
  if (!table) return;
  const FINAL = ["done", "failed", "cancelled"];
  let running = false;  // a run was unfinished while this page was open
  const fmt = (v, digits) => (v === undefined || v === null || v === "") ? "" : Number(v).toFixed(digits);

  function update(run) {
    const row = document.getElementById("run-" + run.id);
    if (!row) return;
    const get = (name) => row.querySelector('[data-field="' + name + '"]');
    SchedLab.showStatus(get("status"), run.status,
                        run.status + (run.cancel_requested && run.status === "running" ? " (cancelling)" : ""));
    get("error").textContent = run.error || "";
    get("bar").style.width = run.percent + "%";
    get("percent").textContent = run.percent + " %" + (run.time_left ? ", " + run.time_left : "");
    const s = run.summary || {};
    const shown = run.shown || {};   // written by the server's formatting module (engine.metrics.units)
    row.querySelectorAll("td.metric-cell").forEach(function (cell) {
      cell.textContent = shown[cell.dataset.field] || "";
    });
    const decisions = get("decisions");  // plan-based policies time each scheduling decision
    if (decisions) decisions.textContent = (s.mean_decision_ms === undefined || s.mean_decision_ms === null) ? ""
      : "decisions: mean " + fmt(s.mean_decision_ms, 1) + " ms, max " + fmt(s.max_decision_ms, 0) + " ms";
    const validation = get("validation");  // the engine's schedule check, one line
    if (validation) validation.textContent = (s.validation && s.validation.line) || "";
    get("csv").hidden = run.status !== "done";
    const final = FINAL.includes(run.status);
    const cancel = get("cancel"), rerun = get("rerun");
    if (cancel) cancel.hidden = final;
    if (rerun) rerun.hidden = !final;
  }

  SchedLab.poll(table.dataset.progressUrl, function (data) {
    data.runs.forEach(update);
    table.dataset.finished = data.finished ? "true" : "false";
    running = running || !data.finished;
    if (data.finished && running && table.dataset.reloadWhenDone) {  // the results are drawn by the server
      window.location.reload();
      return false;
    }
  }, 1500);
})();
