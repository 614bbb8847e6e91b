// Study page: poll the progress endpoint, update "k of n points done" and each point's status;
// reload once when the last point finishes so the plots and the table show every result.
(function () {
  "use strict";
  const box = document.getElementById("study-progress");
  if (!box) return;
  const wasFinished = box.dataset.finished === "true";
  const field = (name) => box.querySelector('[data-field="' + name + '"]');

  SchedLab.poll(box.dataset.progressUrl, function (data) {
    field("done").textContent = data.done;
    field("total").textContent = data.total;
    field("counts").textContent = "(" + data.counts.running + " running, " + data.counts.queued + " queued, " +
                                  data.counts.failed + " failed)";
    field("queue").textContent = data.queue || "";  // the next waiting point's place in the server's queue
    data.points.forEach(function (p) {
      const status = document.querySelector("#point-" + p.run + ' [data-field="status"]');
      if (status) SchedLab.showStatus(status, p.status);
    });
    if (data.finished && !wasFinished) { window.location.reload(); return false; }
  }, 2000);
})();
