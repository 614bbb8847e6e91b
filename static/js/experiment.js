// Experiment page: poll the progress endpoint and update the runs table in place (no reload).
(function () {
  "use strict";
  const table = document.getElementById("runs");
  if (!table) return;
  const url = table.dataset.progressUrl;
  const FINAL = ["done", "failed", "cancelled"];
  const fmt = (v, digits) => (v === undefined || v === null || v === "") ? "" : Number(v).toFixed(digits);

  function update(run) {
    const row = document.getElementById("run-" + run.id);
    if (!row) return;
    const get = (name) => row.querySelector('[data-field="' + name + '"]');
    const status = get("status");
    status.textContent = run.status + (run.cancel_requested && run.status === "running" ? " (cancelling)" : "");
    status.className = "status status-" + run.status;
    get("error").textContent = run.error || "";
    get("bar").style.width = run.percent + "%";
    get("percent").textContent = run.percent + " %" + (run.time_left ? ", " + run.time_left : "");
    const s = run.summary || {};
    get("mean_wait").textContent = fmt(s.mean_wait, 0);
    get("mean_bsld").textContent = fmt(s.mean_bsld, 2);
    get("utilization").textContent = fmt(s.utilization, 3);
    const decisions = get("decisions");  // plan-based policies time each scheduling decision
    if (decisions) decisions.textContent = (s.mean_decision_ms === undefined || s.mean_decision_ms === null) ? ""
      : "decisions: mean " + fmt(s.mean_decision_ms, 1) + " ms, max " + fmt(s.max_decision_ms, 0) + " ms";
    get("csv").hidden = run.status !== "done";
    const final = FINAL.includes(run.status);
    const cancel = get("cancel"), rerun = get("rerun");
    if (cancel) cancel.hidden = final;
    if (rerun) rerun.hidden = !final;
  }

  async function poll() {
    let delay = 1500;
    try {
      const response = await fetch(url, {headers: {"Accept": "application/json"}, credentials: "same-origin"});
      if (response.ok) {
        const data = await response.json();
        data.runs.forEach(update);
        table.dataset.finished = data.finished ? "true" : "false";
        if (data.finished) delay = 10000;  // keep a slow poll: a re-run elsewhere may start work again
      }
    } catch (e) {
      delay = 5000;  // server restarting: try again a bit later
    }
    setTimeout(poll, delay);
  }
  poll();
})();
