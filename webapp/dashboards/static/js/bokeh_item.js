// Embeds plots whose json_item is in the page: <div id="X" data-bokeh-item="Y"></div> and
// <script id="Y" type="application/json">…</script> (a data block, so the CSP needs no inline script).
(function () {
  "use strict";
  document.querySelectorAll("[data-bokeh-item]").forEach(function (slot) {
    var data = document.getElementById(slot.getAttribute("data-bokeh-item"));
    if (data && window.Bokeh) { Bokeh.embed.embed_item(JSON.parse(data.textContent), slot.id); }
  });
})();
