// The zone every time on a page is shown in: the browser's own by default, UTC when the reader ticks the
// footer's box (remembered in this browser's localStorage; nothing is stored on the server). The server
// renders each time as <time datetime="...Z" data-utc> (latency/templatetags/atlas_time.py) and every chart
// with UTC times; this file converts both, and redraws charts drawn through AtlasCharts.draw on a change.
// CSV exports are not touched: they stay UTC whatever is chosen here.
window.AtlasTime = (function () {
  "use strict";

  const STORAGE_KEY = "atlas.time-zone";
  const LANGUAGE = document.documentElement.lang || "en";
  const BROWSER_ZONE = Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC";
  const listeners = [];

  function stored() {
    try {
      return window.localStorage.getItem(STORAGE_KEY);
    } catch (err) {
      return null; // storage refused (a locked-down browser): the default, the browser's zone
    }
  }

  // The choice as this page knows it: remembered where storage works, for this page alone where it does not.
  let choice = stored();

  function showsUTC() {
    return choice === "utc" || BROWSER_ZONE === "UTC";
  }

  function zone() {
    return showsUTC() ? "UTC" : BROWSER_ZONE;
  }

  // A time from the server: ISO with Z, or Plotly's UTC form without an offset ("2026-01-02T03:04:05.000").
  function parse(value) {
    if (value instanceof Date) return value;
    const text = String(value).trim().replace(" ", "T");
    return new Date(/(Z|[+-]\d\d:?\d\d)$/.test(text) ? text : text + "Z");
  }

  const partFormats = {};
  function parts(date, timeZone) {
    if (!partFormats[timeZone]) {
      partFormats[timeZone] = new Intl.DateTimeFormat("en-US", {
        timeZone, hourCycle: "h23", year: "numeric", month: "2-digit", day: "2-digit",
        hour: "2-digit", minute: "2-digit", second: "2-digit",
      }); // prettier-ignore
    }
    const out = {};
    for (const p of partFormats[timeZone].formatToParts(date)) out[p.type] = p.value;
    return out;
  }

  // The wall-clock time in the zone shown, as Plotly's date axis reads it (no offset).
  function wallClock(value) {
    const date = parse(value);
    if (isNaN(date)) return value;
    const p = parts(date, zone());
    const ms = String(date.getUTCMilliseconds()).padStart(3, "0");
    return `${p.year}-${p.month}-${p.day} ${p.hour}:${p.minute}:${p.second}.${ms}`;
  }

  // "UTC+05:30" at that instant in the zone shown (offsets change with summer time).
  function offsetLabel(value) {
    const date = parse(value === undefined ? new Date() : value);
    const p = parts(date, zone());
    const asUTC = Date.UTC(+p.year, +p.month - 1, +p.day, +p.hour, +p.minute, +p.second);
    const minutes = Math.round((asUTC - Math.floor(date.getTime() / 1000) * 1000) / 60000);
    if (!minutes) return "UTC";
    const sign = minutes < 0 ? "-" : "+";
    const abs = Math.abs(minutes);
    return `UTC${sign}${String(Math.floor(abs / 60)).padStart(2, "0")}:${String(abs % 60).padStart(2, "0")}`;
  }

  // What the footer and the axis titles name: "UTC", or "Europe/Berlin (UTC+01:00)".
  function zoneLabel() {
    return showsUTC() ? "UTC" : `${BROWSER_ZONE} (${offsetLabel()})`;
  }

  // As the server writes times for the page's language (latency/formats): sortable ISO-like in English,
  // 年月日 in Chinese; to the second, on a 24-hour clock.
  function format(value) {
    const date = parse(value);
    if (isNaN(date)) return String(value);
    const p = parts(date, zone());
    const time = `${p.hour}:${p.minute}:${p.second}`;
    if (LANGUAGE.toLowerCase().startsWith("zh")) return `${p.year}年${+p.month}月${+p.day}日 ${time}`;
    return `${p.year}-${p.month}-${p.day} ${time}`;
  }

  // ---- charts ----------------------------------------------------------------------------------------

  function dateAxes(layout) {
    const ids = new Set();
    for (const key of Object.keys(layout)) {
      const m = /^xaxis(\d*)$/.exec(key);
      if (m && layout[key] && layout[key].type === "date") ids.add("x" + m[1]);
    }
    return ids;
  }

  // A heatmap cell's span ("2026-01-02 09:00–10:00 UTC+05:30"), from the column's UTC edges.
  function spanText(start, end) {
    const a = wallClock(start);
    const b = wallClock(end);
    const offset = offsetLabel(start);
    if (a.slice(0, 10) === b.slice(0, 10)) return `${a.slice(0, 16)}–${b.slice(11, 16)} ${offset}`;
    return `${a.slice(0, 16)} – ${b.slice(0, 16)} ${offset}`;
  }

  // A server figure (UTC times) redrawn in the zone shown: x values and shapes on date axes become that
  // zone's wall-clock times, the axis title names the zone (layout.meta.time_title, "time, %(zone)s"),
  // and so does every hover: the axis' hover format, and a heatmap cell's span.
  // A time inside a server-written hover ("dark: no worker seen since 2026-03-07 09:05 UTC", the map's).
  const HOVER_TIME = /(\d{4}-\d\d-\d\d \d\d:\d\d) UTC/g;
  function hoverTimes(text) {
    if (typeof text !== "string" || showsUTC()) return text;
    return text.replace(HOVER_TIME, (match, when) => `${wallClock(when).slice(0, 16)} ${offsetLabel(when)}`);
  }

  function figure(data, layout) {
    data = data.map((trace) => {
      const copy = Object.assign({}, trace);
      for (const key of ["text", "hovertext"]) {
        if (Array.isArray(trace[key])) copy[key] = trace[key].map(hoverTimes);
        else if (typeof trace[key] === "string") copy[key] = hoverTimes(trace[key]);
      }
      return copy;
    });
    const axes = dateAxes(layout);
    if (!axes.size) return { data, layout };
    const out = Object.assign({}, layout);
    const title = (layout.meta || {}).time_title;
    for (const id of axes) {
      const key = "xaxis" + id.slice(1);
      const axis = Object.assign({}, layout[key]);
      if (axis.range) axis.range = axis.range.map(wallClock);
      axis.hoverformat = "%Y-%m-%d %H:%M:%S " + (showsUTC() ? "UTC" : BROWSER_ZONE).replace(/%/g, "%%");
      if (title) axis.title = Object.assign({}, axis.title, { text: title.replace("%(zone)s", zoneLabel()) });
      out[key] = axis;
    }
    out.shapes = (layout.shapes || []).map((shape) => {
      if (!axes.has(shape.xref || "x")) return shape;
      return Object.assign({}, shape, { x0: wallClock(shape.x0), x1: wallClock(shape.x1) });
    });
    const converted = data.map((trace) => {
      if (!axes.has(trace.xaxis || "x") || !Array.isArray(trace.x)) return trace;
      const copy = Object.assign({}, trace, { x: trace.x.map((x) => (x === null ? x : wallClock(x))) });
      if (trace.type === "heatmap" && Array.isArray(trace.customdata)) {
        const spans = trace.x.slice(0, -1).map((x, i) => spanText(x, trace.x[i + 1]));
        const respan = (cell, i) => (cell && cell[0] ? [spans[i], ...cell.slice(1)] : cell);
        copy.customdata = trace.customdata.map((row) => row.map(respan));
      }
      return copy;
    });
    return { data: converted, layout: out };
  }

  // ---- the page's times and the footer --------------------------------------------------------------

  function convertTimes(root) {
    for (const el of (root || document).querySelectorAll("time[data-utc]")) {
      el.textContent = format(el.getAttribute("datetime"));
      el.title = el.getAttribute("datetime");
    }
  }

  const footer = document.getElementById("time-zone");
  const note = document.getElementById("time-zone-note");
  const box = document.getElementById("time-zone-utc");

  function syncFooter() {
    if (!footer || !note) return;
    note.textContent = showsUTC() ? footer.dataset.utcText : footer.dataset.localText.replace("{zone}", zoneLabel());
    if (box) box.checked = showsUTC();
  }

  function apply() {
    syncFooter();
    convertTimes();
    for (const fn of listeners) fn();
  }

  function setUTC(utc) {
    choice = utc ? "utc" : null;
    try {
      if (utc) window.localStorage.setItem(STORAGE_KEY, "utc");
      else window.localStorage.removeItem(STORAGE_KEY);
    } catch (err) {
      // not remembered, but applied to this page all the same
    }
    apply();
  }

  if (box) {
    // Nothing to choose when the browser's own zone is UTC.
    box.closest("label").hidden = BROWSER_ZONE === "UTC";
    box.addEventListener("change", () => setUTC(box.checked));
  }
  // Another tab changed the choice.
  window.addEventListener("storage", (event) => {
    if (event.key !== STORAGE_KEY) return;
    choice = event.newValue;
    apply();
  });
  syncFooter();
  convertTimes();

  return {
    zone, zoneLabel, showsUTC, setUTC, format, wallClock, offsetLabel, figure, convertTimes,
    onChange: (fn) => listeners.push(fn),
  }; // prettier-ignore
})();
