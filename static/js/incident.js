// An incident's charts: each element with data-chart-api draws the figure
// that /api/* returns for its data-query, the same endpoints and parameters
// the overview's dashboard.js reads (the server builds every figure). No
// inline script: the page passes everything in data attributes.
(function () {
  "use strict";

  const gettext = window.gettext || ((text) => text);
  const LANGUAGE = document.documentElement.lang || "en";
  const SEPARATORS = window.AtlasCharts.separators(LANGUAGE);
  const PLOT_CONFIG = window.AtlasCharts.plotConfig(LANGUAGE);
  const fitToWidth = window.AtlasCharts.fitToWidth;

  function say(el, text) {
    const note = document.querySelector('[data-no-data="' + el.id + '"]');
    if (note) {
      note.textContent = text;
      note.hidden = !text;
    }
    el.hidden = !!text;
  }

  async function draw(el) {
    let body = null;
    try {
      const response = await fetch(el.dataset.chartApi + "?" + el.dataset.query, {
        credentials: "same-origin",
        headers: { Accept: "application/json" },
      });
      body = response.ok ? await response.json() : null;
    } catch (err) {
      body = null;
    }
    if (!body) {
      say(el, gettext("The chart could not be loaded: reload the page to try again."));
      return;
    }
    if (body.no_data) {
      say(el, body.no_data);
      return;
    }
    if (!window.Plotly) {
      say(el, gettext("Charts need static/vendor/plotly/plotly.min.js (run collectstatic)."));
      return;
    }
    const figure = body.figure || {};
    const data = figure.data || [];
    const layout = Object.assign({ separators: SEPARATORS }, fitToWidth(el, data, figure.layout || {}));
    if (el.dataset.markFrom) {
      // The incident's own span, shaded behind the lines: what came before it is the reference.
      const span = {
        type: "rect", xref: "x", yref: "paper", x0: el.dataset.markFrom, x1: el.dataset.markUntil, y0: 0, y1: 1,
        fillcolor: "rgba(180, 35, 24, 0.08)", line: { width: 0 }, layer: "below",
      };
      // The server shades every incident of the window (latency/charts/over_time.py): this one's own span
      // is drawn once, from the page's begin and end.
      const own = "incident-" + el.dataset.incident;
      span.name = own;
      layout.shapes = (layout.shapes || []).filter((shape) => shape.name !== own).concat([span]);
    }
    window.AtlasCharts.draw(el, data, layout, PLOT_CONFIG).catch((err) => console.warn(el.id, err));
  }

  for (const el of document.querySelectorAll("[data-chart-api]")) draw(el);
})();
