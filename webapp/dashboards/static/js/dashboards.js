// Loads every Bokeh plot of a page from its JSON endpoint (bokeh.embed.json_item) and embeds it.
// Markup: <div class="bokeh-status">…</div> followed by <div id="X" data-bokeh-src="/url.json"></div>.
// The status element shows a spinner while loading and the server's message if loading fails.
(function () {
  "use strict";

  function statusFor(slot) {
    var previous = slot.previousElementSibling;
    return previous && previous.classList.contains("bokeh-status") ? previous : null;
  }

  function showError(slot, message) {
    var status = statusFor(slot);
    if (!status) {
      status = document.createElement("div");
      status.className = "bokeh-status";
      slot.parentNode.insertBefore(status, slot);
    }
    status.classList.add("error");
    status.textContent = "Could not draw this plot: " + message;
    slot.setAttribute("data-bokeh-state", "error");
  }

  function load(slot) {
    var url = slot.getAttribute("data-bokeh-src");
    slot.setAttribute("data-bokeh-state", "loading");
    return fetch(url, { credentials: "same-origin", headers: { Accept: "application/json" } })
      .then(function (response) {
        return response.json().catch(function () { return {}; }).then(function (body) {
          if (!response.ok) {
            throw new Error(body.error || ("the server answered " + response.status));
          }
          return body;
        });
      })
      .then(function (item) {
        if (!window.Bokeh) { throw new Error("BokehJS did not load"); }
        performance.mark("bokeh-fetched:" + slot.id);
        return Bokeh.embed.embed_item(item, slot.id);
      })
      .then(function () {
        performance.mark("bokeh-embedded:" + slot.id);
        var status = statusFor(slot);
        if (status) { status.remove(); }
        slot.setAttribute("data-bokeh-state", "done");
      })
      .catch(function (error) { showError(slot, error.message || String(error)); });
  }

  function loadAll() {
    // All at once: each plot appears as soon as its own JSON has arrived.
    var slots = Array.prototype.slice.call(document.querySelectorAll("[data-bokeh-src]"));
    return Promise.all(slots.map(load));
  }

  window.SchedLabDashboards = { load: load, loadAll: loadAll };
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", loadAll);
  } else {
    loadAll();
  }
})();
