// Starts fetching every plot's JSON while BokehJS downloads (the URLs: <script id="bokeh-prefetch"
// type="application/json">); dashboards.js takes the responses from window.SchedLabPrefetch.
(function () {
  "use strict";
  var data = document.getElementById("bokeh-prefetch");
  if (!data) { return; }
  window.SchedLabPrefetch = {};
  JSON.parse(data.textContent).forEach(function (url) {
    window.SchedLabPrefetch[url] = fetch(url, { credentials: "same-origin", headers: { Accept: "application/json" } });
  });
})();
