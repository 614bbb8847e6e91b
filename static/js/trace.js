// Trace page: while the file is parsed in the background, poll its status and reload once it changes.
(function () {
  "use strict";
  const badge = document.getElementById("trace-status");
  if (!badge || badge.dataset.status !== "parsing") return;
  async function poll() {
    try {
      const response = await fetch(badge.dataset.url, {credentials: "same-origin"});
      if (response.ok) {
        const data = await response.json();
        if (data.status !== "parsing") { window.location.reload(); return; }
      }
    } catch (e) { /* try again */ }
    setTimeout(poll, 1500);
  }
  setTimeout(poll, 1000);
})();
