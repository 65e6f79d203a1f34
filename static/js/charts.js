// What every page's Plotly charts share (dashboard.js, incident.js): the page's number separators, the plot
// config, the phone layout of legends and the light or dark look. Loaded before the page's own script.
window.AtlasCharts = (function () {
  "use strict";

  const LANGUAGE = document.documentElement.lang || "en";
  // Plotly's separators: decimal point, then thousands, as Intl writes them for the language.
  function separators(language) {
    const parts = new Intl.NumberFormat(language || LANGUAGE).formatToParts(12345.6);
    const part = (type, fallback) => (parts.find((p) => p.type === type) || { value: fallback }).value;
    return part("decimal", ".") + part("group", ",");
  }

  // zh-CN is Plotly's own locale file, loaded by the page on Chinese pages only. Its short months lack 月 and
  // it keeps the English order of a date axis' labels ("十二 4, 2026"): these formats, which Plotly reads
  // before the registered locale's, write them as Chinese dates ("12月4日", "2026年12月4日").
  const ZH_DATES = {
    shortMonths: Array.from({ length: 12 }, (_, i) => i + 1 + "月"),
    year: "%Y年",
    month: "%Y年%-m月",
    dayMonth: "%-m月%-d日",
    dayMonthYear: "%Y年%-m月%-d日",
  };
  function plotConfig(language, extra) {
    const config = Object.assign({ displaylogo: false, responsive: true }, extra || {});
    if ((language || LANGUAGE).toLowerCase().startsWith("zh")) {
      config.locale = "zh-CN";
      config.locales = { "zh-CN": { format: ZH_DATES } };
    }
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

  // ---- the light or dark look (static/js/theme.js says which) ----------------------------------------
  // The server's figures are drawn for the light page (plotly_white, latency/charts); on the dark page the
  // same figure gets the dark page's colours: the card's background, light text and grid, a dark world map,
  // and outlines that stand out on it. The figure as the server sent it is kept on its element, so a change
  // of look redraws it from that, not from a figure already recoloured.
  const DARK = {
    paper: "#1b2028", // --card in the dark look: the chart sits on its card without a box around it
    ink: "#d9dfe8",
    grid: "#2e3641",
    line: "#3a424e",
    land: "#2b323c",
    ocean: "#151a21",
    borders: "#4f5866",
    coast: "#5d6776",
    // The server's outline around a marker without errors (latency/charts CLEAN_OUTLINE) and its path colour.
    cleanOutline: "rgba(60, 70, 85, 0.55)",
    outline: "rgba(225, 230, 238, 0.75)",
    path: "rgba(138, 180, 248, 0.6)",
  };

  function scheme() {
    return window.AtlasTheme ? window.AtlasTheme.scheme() : "light";
  }

  function darkLayout(layout) {
    const out = Object.assign({}, layout, {
      paper_bgcolor: DARK.paper,
      plot_bgcolor: DARK.paper,
      font: Object.assign({}, layout.font, { color: DARK.ink }),
    });
    const axes = new Set(["xaxis", "yaxis"].concat(Object.keys(layout).filter((key) => /^[xy]axis\d*$/.test(key))));
    for (const key of axes) {
      out[key] = Object.assign({}, layout[key], { gridcolor: DARK.grid, linecolor: DARK.line, zerolinecolor: DARK.line });
    }
    if (layout.geo) {
      out.geo = Object.assign({}, layout.geo, {
        bgcolor: DARK.paper,
        landcolor: DARK.land,
        oceancolor: DARK.ocean,
        lakecolor: DARK.ocean,
        countrycolor: DARK.borders,
        coastlinecolor: DARK.coast,
      });
    }
    if (layout.legend) out.legend = Object.assign({}, layout.legend, { bgcolor: "rgba(0, 0, 0, 0)" });
    return out;
  }

  function darkTrace(trace) {
    const meta = trace.meta || {};
    if (meta.role === "path") return Object.assign({}, trace, { line: Object.assign({}, trace.line, { color: DARK.path }) });
    const line = trace.marker && trace.marker.line;
    if (!line || line.color === undefined) return trace;
    const recolour = (c) => (c === DARK.cleanOutline ? DARK.outline : c);
    const color = Array.isArray(line.color) ? line.color.map(recolour) : recolour(line.color);
    return Object.assign({}, trace, { marker: Object.assign({}, trace.marker, { line: Object.assign({}, line, { color }) }) });
  }

  // The figure in the page's look now.
  function themed(data, layout) {
    if (scheme() !== "dark") return { data, layout };
    return { data: data.map(darkTrace), layout: darkLayout(layout) };
  }

  // Every chart is drawn through here: in the zone the reader chose (time.js) and the light or dark look
  // (theme.js), and drawn again from the same server figure when either choice changes.
  const drawn = new Map();
  function draw(el, data, layout, config) {
    drawn.set(el, [data, layout, config]);
    const zoned = window.AtlasTime ? window.AtlasTime.figure(data, layout) : { data, layout };
    const shown = themed(zoned.data, zoned.layout);
    return Plotly.react(el, shown.data, shown.layout, config);
  }
  function redraw() {
    for (const [el, args] of drawn) {
      if (!el.isConnected || !el.data) drawn.delete(el);
      else draw(el, ...args).catch((err) => console.warn(el.id, err));
    }
  }
  if (window.AtlasTime) window.AtlasTime.onChange(redraw);
  document.addEventListener("atlas:themechange", () => {
    if (window.Plotly) redraw();
  });

  return { separators, plotConfig, fitToWidth, themed, draw, scheme };
})();
