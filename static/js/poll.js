// Shared by the experiment and study pages: poll a progress endpoint and show run statuses.
window.SchedLab = window.SchedLab || {};

// Fetch `url` (JSON) every `delay` ms and hand the data to `update`; slower once `data.finished`
// (a re-run elsewhere may start work again), a little later after a network error (server
// restarting). `update` returning false stops the polling (e.g. the page reloads itself).
SchedLab.poll = function (url, update, delay) {
  "use strict";
  async function tick() {
    let next = delay;
    try {
      const response = await fetch(url, {headers: {"Accept": "application/json"}, credentials: "same-origin"});
      if (response.ok) {
        const data = await response.json();
        if (update(data) === false) return;
        if (data.finished) next = 10000;
      }
    } catch (e) {
      next = 5000;
    }
    setTimeout(tick, next);
  }
  tick();
};

// A run's status badge (the `status status-<name>` span of the runs and points tables).
SchedLab.showStatus = function (element, status, text) {
  "use strict";
  element.textContent = text || status;
  element.className = "status status-" + status;
};
