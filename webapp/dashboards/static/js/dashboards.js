// Loads the Bokeh plots of a page from their JSON endpoints (bokeh.embed.json_item) and embeds them.
// Markup: <div class="bokeh-status">…</div> followed by <div id="X" data-bokeh-src="/url.json"></div>.
// The status element shows a spinner while loading and the server's message if loading fails.
//
// Building a Bokeh document costs the browser 100–250 ms per figure, so plots are embedded lazily:
// a plot is embedded when it comes within a screen of the viewport, one plot at a time (the page
// stays responsive), in page order. Until then its slot says data-bokeh-state="waiting". The JSON
// of every plot is fetched at once when the page loads (it is small and gzipped), so a plot
// scrolled into view waits only for its drawing, not for the network.
// SchedLabDashboards.loadAll() embeds every plot now (the HTML download and tests use it); sections drawn
// on demand (a button) wait for their click, or SchedLabDashboards.showAll().
(function () {
  "use strict";

  var queue = [];          // slots to embed, in the order they came near the viewport
  var busy = false;
  var started = new WeakSet();
  var fetched = new WeakMap();   // slot -> promise of its json_item, started when the page loads

  function prefetch(slot) {
    if (!fetched.has(slot)) {
      var item = fetchItem(slot);
      item.catch(function () {});   // reported when the plot is embedded
      fetched.set(slot, item);
    }
    return fetched.get(slot);
  }

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

  // The page may have asked for the JSON already (window.SchedLabPrefetch, url -> fetch promise).
  function request(url) {
    var early = window.SchedLabPrefetch && window.SchedLabPrefetch[url];
    if (early) {
      delete window.SchedLabPrefetch[url];
      return early;
    }
    return fetch(url, { credentials: "same-origin", headers: { Accept: "application/json" } });
  }

  function fetchItem(slot) {
    return request(slot.getAttribute("data-bokeh-src"))
      .then(function (response) {
        return response.json().catch(function () { return {}; }).then(function (body) {
          if (!response.ok) {
            throw new Error(body.error || ("the server answered " + response.status));
          }
          performance.mark("bokeh-fetched:" + slot.id);
          return body;
        });
      });
  }

  function embed(slot, item) {
    if (!window.Bokeh) { throw new Error("BokehJS did not load"); }
    return Bokeh.embed.embed_item(item, slot.id).then(function () {
      performance.mark("bokeh-embedded:" + slot.id);
      var status = statusFor(slot);
      if (status) { status.remove(); }
      slot.setAttribute("data-bokeh-state", "done");
    });
  }

  // The next frame: let the browser paint what was just embedded before building the next plot.
  function nextFrame() {
    return new Promise(function (resolve) { requestAnimationFrame(function () { setTimeout(resolve, 0); }); });
  }

  function pump() {
    if (busy || queue.length === 0) { return; }
    busy = true;
    var job = queue.shift();
    job.item
      .then(function (item) { return embed(job.slot, item); })
      .catch(function (error) { showError(job.slot, error.message || String(error)); })
      .then(nextFrame)
      .then(function () { busy = false; pump(); });
  }

  // Start fetching at once (requests run in parallel) and embed in turn.
  function load(slot) {
    if (started.has(slot)) { return; }
    started.add(slot);
    slot.setAttribute("data-bokeh-state", "loading");
    queue.push({ slot: slot, item: prefetch(slot) });
    pump();
  }

  function slots() {
    return Array.prototype.slice.call(document.querySelectorAll("[data-bokeh-src]"));
  }

  function loadAll() {
    slots().forEach(load);
  }

  var observer = "IntersectionObserver" in window ? new IntersectionObserver(function (entries) {
    entries.forEach(function (entry) {
      if (entry.isIntersecting) {
        observer.unobserve(entry.target);
        load(entry.target);
      }
    });
  }, { rootMargin: "100% 0px" }) : null;

  // Watch every plot slot on the page not seen yet (call again after adding slots to the page).
  function observe() {
    slots().forEach(function (slot) {
      if (started.has(slot) || slot.hasAttribute("data-bokeh-state")) { return; }
      slot.setAttribute("data-bokeh-state", "waiting");
      prefetch(slot);
      if (observer) { observer.observe(slot); } else { load(slot); }
    });
  }

  // Sections drawn on demand: <div class="bokeh-status"><button class="show-plot" data-slot="X">…</button></div>
  // <div id="X" data-bokeh-on-demand="/url.json"></div>; the click turns the slot into an ordinary one and
  // loads it at once.
  function show(slot) {
    if (!slot || !slot.hasAttribute("data-bokeh-on-demand") || slot.hasAttribute("data-bokeh-src")) { return; }
    slot.setAttribute("data-bokeh-src", slot.getAttribute("data-bokeh-on-demand"));
    var status = statusFor(slot);
    if (status) {
      status.classList.remove("on-demand");
      status.setAttribute("role", "status");
      status.innerHTML = '<span class="spinner"></span> Loading…';
    }
    load(slot);
  }

  function showAll() {
    document.querySelectorAll("[data-bokeh-on-demand]").forEach(show);
  }

  document.addEventListener("click", function (event) {
    var button = event.target.closest && event.target.closest("button.show-plot");
    if (button) { show(document.getElementById(button.getAttribute("data-slot"))); }
  });

  window.SchedLabDashboards = { load: load, loadAll: loadAll, observe: observe, show: show, showAll: showAll };
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", observe);
  } else {
    observe();
  }
})();
