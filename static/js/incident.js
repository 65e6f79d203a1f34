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
    const layout = Object.assign({ separators: SEPARATORS }, figure.layout || {});
    Plotly.react(el, figure.data || [], layout, PLOT_CONFIG).catch((err) => console.warn(el.id, err));
  }

  for (const el of document.querySelectorAll("[data-chart-api]")) draw(el);
})();
