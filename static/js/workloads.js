// The target page's workload charts (templates/dashboard/_workloads.html): the server builds each figure
// (latency/charts/workloads.py) and hands them over in the page's JSON (#workload-charts); each element with
// data-figure draws its own through AtlasCharts.draw, so times follow the reader's zone (time.js) and the light
// or dark look (theme.js). The tables above them need no script.
(function () {
  "use strict";

  const dataEl = document.getElementById("workload-charts");
  if (!dataEl || !window.Plotly || !window.AtlasCharts) return;
  const figures = JSON.parse(dataEl.textContent) || {};
  const LANGUAGE = document.documentElement.lang || "en";
  const SEPARATORS = window.AtlasCharts.separators(LANGUAGE);
  const PLOT_CONFIG = window.AtlasCharts.plotConfig(LANGUAGE);

  for (const el of document.querySelectorAll("#workloads .plot[data-figure]")) {
    const figure = figures[el.dataset.figure];
    if (!figure) continue;
    const data = figure.data || [];
    const layout = Object.assign({ separators: SEPARATORS }, window.AtlasCharts.fitToWidth(el, data, figure.layout || {}));
    window.AtlasCharts.draw(el, data, layout, PLOT_CONFIG).catch((err) => console.warn(el.id, err));
  }
})();
