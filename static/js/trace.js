// Trace page: while the file is parsed in the background, poll its status; once it changes, fetch
// this page again and swap in its content (summary, cleaning report, plots) without a reload, then
// add the scripts the new content needs (BokehJS and the plot loader) and draw the plots.
(function () {
  "use strict";
  const badge = document.getElementById("trace-status");
  if (!badge || badge.dataset.status !== "parsing") return;

  function addMissingScripts(doc) {
    const present = new Set(Array.from(document.scripts, (s) => s.src));
    const added = [];
    doc.querySelectorAll("script[src]").forEach((old) => {
      if (present.has(old.src)) return;
      const script = document.createElement("script");
      script.src = old.src;
      script.async = false;  // run in document order: BokehJS before the loader
      document.body.appendChild(script);
      added.push(script);
    });
    return added;
  }

  async function showParsed() {
    const response = await fetch(window.location.href, {credentials: "same-origin"});
    if (!response.ok) throw new Error("page " + response.status);
    const doc = new DOMParser().parseFromString(await response.text(), "text/html");
    const fresh = doc.getElementById("trace-page");
    const current = document.getElementById("trace-page");
    if (!fresh || !current) throw new Error("unexpected page");
    current.replaceWith(document.adoptNode(fresh));
    if (window.SchedLabDashboards) {
      window.SchedLabDashboards.observe();  // the loader is already here: watch the new plot slot
    } else {
      addMissingScripts(doc);               // the loader looks for plot slots when it starts
    }
  }

  async function poll() {
    try {
      const response = await fetch(badge.dataset.url, {credentials: "same-origin"});
      if (response.ok) {
        const data = await response.json();
        if (data.status !== "parsing") {
          try { await showParsed(); } catch (e) { window.location.reload(); }
          return;
        }
      }
    } catch (e) { /* try again */ }
    setTimeout(poll, 1500);
  }
  setTimeout(poll, 1000);
})();
