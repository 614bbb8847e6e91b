// A site preview's calibration (webapp.preview.calibration): while it is queued or running, poll its
// progress and show it; when it ends, reload the page (the server draws its table).
(function () {
  "use strict";
  const section = document.getElementById("calibration");
  if (!section || !section.dataset.progressUrl) return;
  const bar = section.querySelector("#calibration-progress progress");
  const percent = document.getElementById("calibration-percent");
  const status = section.querySelector("#calibration-progress .status");
  SchedLab.poll(section.dataset.progressUrl, function (data) {
    if (data.finished) {
      window.location.reload();
      return false;
    }
    if (bar) bar.value = data.progress;
    if (percent) percent.textContent = (100 * data.progress).toFixed(1) + " %";
    if (status) SchedLab.showStatus(status, data.status, data.shown);
    return true;
  }, 2000);
})();
