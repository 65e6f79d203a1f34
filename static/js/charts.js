// What every page's Plotly charts share (dashboard.js, incident.js): the page's number separators, the plot
// config and the phone layout of legends. Loaded before the page's own script.
window.AtlasCharts = (function () {
  "use strict";

  const LANGUAGE = document.documentElement.lang || "en";
  // Plotly's separators: decimal point, then thousands, as Intl writes them for the language.
  function separators(language) {
    const parts = new Intl.NumberFormat(language || LANGUAGE).formatToParts(12345.6);
    const part = (type, fallback) => (parts.find((p) => p.type === type) || { value: fallback }).value;
    return part("decimal", ".") + part("group", ",");
  }

  // zh-CN is Plotly's own locale file, loaded by the page on Chinese pages only.
  function plotConfig(language, extra) {
    const config = Object.assign({ displaylogo: false, responsive: true }, extra || {});
    if ((language || LANGUAGE).toLowerCase().startsWith("zh")) config.locale = "zh-CN";
    return config;
  }

  // On a phone a legend beside the chart takes most of its width, and one above it wraps into rows that
  // eat the plot's height: there every legend goes under the chart, one entry a row at worst, and the
  // chart grows by as much so the plot keeps its height.
  const NARROW_PX = 600;
  const LEGEND_ROW_PX = 22;
  function fitToWidth(el, data, layout) {
    const legend = layout.legend || {};
    if (el.clientWidth >= NARROW_PX || layout.showlegend === false) return layout;
    const entries = data.filter((trace) => trace.showlegend !== false && trace.name).length;
    if (!entries) return layout;
    const under = { orientation: "h", x: 0, xanchor: "left", yref: "container", y: 0, yanchor: "bottom" };
    // A title beside rows of entries would push them past the right edge: it goes above them.
    if (legend.title) under.title = Object.assign({}, legend.title, { side: "top" });
    const rows = entries + (legend.title ? 1 : 0);
    // The height before any legend was added: a redraw must not grow the chart again.
    if (!el.dataset.baseHeight) el.dataset.baseHeight = String(el.clientHeight);
    const height = (layout.height || Number(el.dataset.baseHeight)) + rows * LEGEND_ROW_PX;
    return Object.assign({}, layout, { height, legend: Object.assign({}, legend, under) });
  }

  return { separators, plotConfig, fitToWidth };
})();
