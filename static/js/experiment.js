// Experiment page: poll the progress endpoint and update the runs table in place (no reload).
(function () {
  "use strict";
  const table = document.getElementById("runs");
  if (!table) return;
  const FINAL = ["done", "failed", "cancelled"];
  // a run was unfinished while this page was open: as the server drew the page, or as a poll saw it (the runs
  // may all end between the server drawing the page and the first poll's answer: the page still reloads)
  let running = Array.from(table.querySelectorAll('[data-field="status"]'))
    .some(function (s) { return !FINAL.includes(s.textContent.trim()); });
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

  function updateReplicates(state) {   // the replicate set's one bar (webapp.experiments.replicates.set_progress)
    const section = document.getElementById("replicates");
    if (!section || !state) return;
    const get = (name) => section.querySelector('[data-field="' + name + '"]');
    section.dataset.status = state.status;
    SchedLab.showStatus(get("status"), state.status);
    get("bar").style.width = state.percent + "%";
    get("count").textContent = state.done + " of " + state.total + " replicates done";
    get("time_left").textContent = state.time_left ? ", " + state.time_left : "";
    get("error").textContent = state.error || "";
    get("error").hidden = !state.error;
    get("ready").hidden = !state.report_ready;
    const retry = get("retry");
    if (retry) retry.hidden = !(state.status === "failed" || state.status === "cancelled");
  }

  SchedLab.poll(table.dataset.progressUrl, function (data) {
    data.runs.forEach(update);
    updateReplicates(data.replicates);
    table.dataset.finished = data.finished ? "true" : "false";
    running = running || !data.finished;
    if (data.finished && running && table.dataset.reloadWhenDone) {  // the results are drawn by the server
      window.location.reload();
      return false;
    }
  }, 1500);
})();
