// An incident's charts: each element with data-chart-api draws the figure
// that /api/* returns for its data-query, the same endpoints and parameters
// the overview's dashboard.js reads (the server builds every figure). No
// inline script: the page passes everything in data attributes.
(function () {
  "use strict";

  const gettext = window.gettext || ((text) => text);
  const LANGUAGE = document.documentElement.lang || "en";
  const SEPARATORS = (() => {
    const parts = new Intl.NumberFormat(LANGUAGE).formatToParts(12345.6);
    const part = (type, fallback) => (parts.find((p) => p.type === type) || { value: fallback }).value;
    return part("decimal", ".") + part("group", ",");
  })();
  const PLOT_CONFIG = { displaylogo: false, responsive: true };
  if (LANGUAGE.toLowerCase().startsWith("zh")) PLOT_CONFIG.locale = "zh-CN";

  // As the overview's charts do (dashboard.js): on a phone every legend goes under the chart, and the chart
  // grows by as much, so the plot keeps its height.
  const NARROW_PX = 600;
  const LEGEND_ROW_PX = 22;
  function fitToWidth(el, data, layout) {
    const legend = layout.legend || {};
    if (el.clientWidth >= NARROW_PX || layout.showlegend === false) return layout;
    const entries = data.filter((trace) => trace.showlegend !== false && trace.name).length;
    if (!entries) return layout;
    const under = { orientation: "h", x: 0, xanchor: "left", yref: "container", y: 0, yanchor: "bottom" };
    if (legend.title) under.title = Object.assign({}, legend.title, { side: "top" });
    const rows = entries + (legend.title ? 1 : 0);
    const height = (layout.height || el.clientHeight) + rows * LEGEND_ROW_PX;
    return Object.assign({}, layout, { height, legend: Object.assign({}, legend, under) });
  }

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
      layout.shapes = (layout.shapes || []).concat([span]);
    }
    Plotly.react(el, data, layout, PLOT_CONFIG).catch((err) => console.warn(el.id, err));
  }

  for (const el of document.querySelectorAll("[data-chart-api]")) draw(el);
})();
