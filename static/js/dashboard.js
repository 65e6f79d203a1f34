// Latency Atlas overview: the filters live in the URL (a view is shareable),
// charts come from /api/*, and a websocket says when new measurements landed.
// No framework and no request to any other host: Plotly and its world map are
// served from our own static files.
(function () {
  "use strict";

  const configEl = document.getElementById("dashboard-config");
  const form = document.getElementById("filters");
  if (!configEl || !form) return;
  const cfg = JSON.parse(configEl.textContent);
  const $ = (id) => document.getElementById(id);

  // Display strings come from Django's JavaScript catalog (/jsi18n/, loaded
  // before this file); without it, the English as written.
  const gettext = window.gettext || ((text) => text);
  const interpolate = window.interpolate || ((text, values) => text.replace(/%\((\w+)\)s/g, (m, key) => values[key]));
  // The page's language (<html lang>, the server's too): Plotly's locale and
  // number separators, the table's numbers.
  const LANGUAGE = cfg.language || document.documentElement.lang || "en";
  const SEPARATORS = window.AtlasCharts.separators(LANGUAGE);
  // topojsonURL keeps Plotly's geo plots off its CDN.
  const PLOT_CONFIG = window.AtlasCharts.plotConfig(LANGUAGE, { topojsonURL: cfg.topojson_url });
  const REFRESH_DELAY_MS = 300;
  const HEALTH_REFRESH_MS = 30000;
  const RETRY_FIRST_MS = 1000;
  const RETRY_MAX_MS = 15000;
  const CHARTS = ["overview", "histograms", "timeseries", "phases", "table"];

  // ---- filters ------------------------------------------------------------

  function isCustom() {
    return form.elements.window.value === "custom";
  }

  function params() {
    // FormData skips disabled inputs, so since/until only travel with a custom window.
    const p = new URLSearchParams();
    for (const [name, value] of new FormData(form)) {
      if (value !== "") p.append(name, value);
    }
    return p;
  }

  function selectedTargets() {
    return params().getAll("target").filter((v) => v !== "all");
  }

  function syncCustomRange() {
    const custom = isCustom();
    form.querySelector(".custom-range").hidden = !custom;
    for (const name of ["since", "until"]) form.elements[name].disabled = !custom;
  }

  // The download links carry the current filters; a preset window becomes
  // a relative since (24h, 7d, ...), which the exports read the same way.
  function exportQuery() {
    const p = new URLSearchParams();
    for (const t of selectedTargets()) p.append("target", t);
    for (const r of params().getAll("region")) p.append("region", r);
    if (form.elements.workload && form.elements.workload.value) p.set("workload", form.elements.workload.value);
    if (isCustom()) {
      for (const name of ["since", "until"]) if (form.elements[name].value) p.set(name, form.elements[name].value);
    } else {
      p.set("since", form.elements.window.value);
    }
    return p.toString();
  }

  // A region page reads the same workload as the table it is reached from.
  function workloadQuery() {
    const workload = form.elements.workload ? form.elements.workload.value : "";
    return workload ? "?" + new URLSearchParams({ workload }).toString() : "";
  }

  // The "workload shown" line names the chosen option, whose label is already in the reader's language.
  function syncWorkload() {
    const select = form.elements.workload;
    const name = document.getElementById("workload-name");
    if (select && name && select.selectedIndex >= 0) name.textContent = select.options[select.selectedIndex].text;
    const mixed = document.getElementById("workload-mixed");
    if (select && mixed) mixed.hidden = select.value !== "";
  }

  function syncDownloads() {
    for (const a of document.querySelectorAll("a[data-export]")) a.href = a.dataset.export + "?" + exportQuery();
  }

  function apply() {
    syncCustomRange();
    syncDownloads();
    syncWorkload();
    // A custom window means nothing until it has a start.
    if (isCustom() && !form.elements.since.value) return;
    history.replaceState(null, "", "?" + params().toString());
    refresh();
    const wanted = wsURL();
    if (!socket || socket.url !== wanted) reconnect();
  }

  // ---- the target picker -------------------------------------------------
  // Checkboxes named "target": none or "all" ticked means every target. The
  // last choice wins: ticking a target clears "all", ticking "all" clears
  // the targets, clearing the last target ticks "all" again.

  const picker = $("target-picker");

  function syncPicker(changed) {
    if (!picker) return;
    const boxes = Array.from(picker.querySelectorAll('input[name="target"]'));
    const all = boxes.find((box) => box.value === "all");
    const chosen = boxes.filter((box) => box.value !== "all");
    if (changed === all && all.checked) for (const box of chosen) box.checked = false;
    else if (changed && changed !== all && changed.checked) all.checked = false;
    if (!chosen.some((box) => box.checked)) all.checked = true;
    const names = chosen.filter((box) => box.checked).map((box) => box.dataset.name);
    const text = names.length ? names.join(", ") : cfg.text.all_targets;
    // Every chosen name shows (the summary wraps) and is in the title as well.
    $("target-summary").textContent = text;
    picker.querySelector("summary").title = text;
  }

  if (picker) {
    // Before the form's own listener (this element is nearer the box), so
    // apply() reads the boxes as corrected.
    picker.addEventListener("change", (event) => syncPicker(event.target));
  }

  // ---- the region picker -------------------------------------------------
  // Checkboxes named "region" (slugs): none ticked means every region.

  const regionPicker = $("region-picker");

  function regionBoxes() {
    return regionPicker ? Array.from(regionPicker.querySelectorAll('input[name="region"]:checked')) : [];
  }

  function syncRegionPicker() {
    const names = regionBoxes().map((box) => box.dataset.name);
    $("region-summary").textContent = names.length ? names.join(", ") : cfg.text.all_regions;
  }

  if (regionPicker) regionPicker.addEventListener("change", syncRegionPicker);

  // A dropdown closes when the reader clicks elsewhere.
  document.addEventListener("click", (event) => {
    for (const dropdown of [picker, regionPicker]) {
      if (dropdown && dropdown.open && !dropdown.contains(event.target)) dropdown.open = false;
    }
  });

  form.addEventListener("change", apply);
  // A chart's own options sit beside it but belong to the form (form="filters"),
  // where a change event bubbling up the page never reaches the form.
  for (const el of document.querySelectorAll('[form="filters"]')) el.addEventListener("change", apply);
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    apply();
  });

  // ---- fetching and drawing ------------------------------------------------

  const latest = {}; // endpoint -> sequence number of the newest request
  let signedOut = false;

  function showError(text) {
    const el = $("form-error");
    el.textContent = text || "";
    el.hidden = !text;
  }

  async function load(name) {
    const seq = (latest[name] = (latest[name] || 0) + 1);
    let response;
    try {
      response = await fetch(cfg.api[name] + "?" + params().toString(), {
        credentials: "same-origin",
        headers: { Accept: "application/json" },
      });
    } catch (err) {
      return null; // offline for a moment: the next live message retries
    }
    if (seq !== latest[name]) return null; // a newer request overtook this one
    if (response.status === 403 || response.status === 401) {
      stopLive(gettext("Signed out: reload the page to sign in again."));
      return null;
    }
    const body = await response.json().catch(() => null);
    if (seq !== latest[name] || body === null) return null;
    if (response.status === 400) {
      showError(interpolate(gettext("%(error)s (parameter %(param)s)"), { error: body.error, param: body.param }, true));
      return null;
    }
    return response.ok ? body : null;
  }

  // In place of a chart with nothing to draw: the API's reason (no_data).
  function showNoData(name, message) {
    const id = name === "overview" ? "map" : name === "table" ? "region-target-table" : name;
    const note = document.querySelector('[data-no-data="' + id + '"]');
    if (!note) return;
    note.textContent = message || "";
    note.hidden = !message;
    for (const el of document.querySelectorAll('[data-chart="' + id + '"]')) el.hidden = !!message;
  }

  const fitToWidth = window.AtlasCharts.fitToWidth;

  function plot(id, figure) {
    const el = $(id);
    if (!el || !figure) return;
    if (el.hidden) {
      // Replaced by its no-data message; drawn again, at its size, once shown.
      if (window.Plotly) Plotly.purge(el);
      return;
    }
    if (!window.Plotly) {
      el.textContent = gettext("Charts need static/vendor/plotly/plotly.min.js (run collectstatic).");
      return;
    }
    // A failed draw (the map's topojson fetch cut off by a server restart)
    // must not become an uncaught error: the next refresh draws again.
    const data = figure.data || [];
    const layout = Object.assign({ separators: SEPARATORS }, fitToWidth(el, data, figure.layout || {}));
    window.AtlasCharts.draw(el, data, layout, PLOT_CONFIG)
      .then(() => {
        // Drawn: the "loading" note over the box (overview.html) has done its job.
        for (const note of el.querySelectorAll(".plot-loading")) note.remove();
      })
      .catch((err) => console.warn(id, err));
  }

  const draw = {
    overview(body) {
      plot("map", body.figure);
      // The map's target choice only means something while targets are kept apart.
      const choice = $("map-target-choice");
      if (choice) choice.hidden = !body.per_target;
      const shows = $("map-shows");
      if (shows) {
        const named = (body.map_targets || []).find((t) => t.id === body.map_target);
        shows.textContent = named ? interpolate(gettext("Coloured for %(target)s."), { target: named.name }, true) : "";
        shows.hidden = !named;
      }
      const empty = $("empty-window");
      empty.textContent = body.empty || "";
      empty.hidden = !body.empty;
    },
    histograms: (body) => plot("histograms", body.figure),
    timeseries: (body) => plot("timeseries", body.figure),
    phases: (body) => plot("phases", body.figure),
    table(body) {
      tableRows = body.rows || [];
      if (body.columns) setColumns(body.columns);
      renderTable();
    },
  };

  let refreshing = false;
  let refreshAgain = false;

  async function refresh(skip = []) {
    // One refresh at a time; a request for another while one runs is kept,
    // not dropped, so the last message is always reflected.
    if (refreshing) {
      refreshAgain = true;
      return;
    }
    refreshing = true;
    showError("");
    await Promise.all(
      CHARTS.filter((name) => !skip.includes(name)).map(async (name) => {
        const body = await load(name);
        if (!body) return;
        showNoData(name, body.no_data);
        draw[name](body);
      })
    );
    refreshing = false;
    if (refreshAgain) {
      refreshAgain = false;
      refresh();
    }
  }

  let refreshTimer = null;
  function scheduleRefresh() {
    // Coalesce a burst into one refresh, but never postpone it forever: a
    // steady stream of messages still redraws every REFRESH_DELAY_MS.
    if (refreshTimer !== null || document.hidden) return;
    refreshTimer = setTimeout(() => {
      refreshTimer = null;
      refresh();
    }, REFRESH_DELAY_MS);
  }

  document.addEventListener("visibilitychange", () => {
    if (!document.hidden) refresh();
  });

  // A region going dark sends nothing: without this the map would keep it
  // live until the next measurement from elsewhere. The map and the table
  // (regions' status, missed runs) are read again now and then.
  setInterval(async () => {
    if (document.hidden || signedOut || refreshing) return;
    for (const name of ["overview", "table"]) {
      const body = await load(name);
      if (!body) continue;
      showNoData(name, body.no_data);
      draw[name](body);
    }
  }, HEALTH_REFRESH_MS);

  // ---- the sortable table --------------------------------------------------

  let tableRows = [];
  let sortKey = null;
  let sortDir = 1;
  const table = $("region-target-table");

  // The columns (and their headings, units included) are the server's:
  // /api/table sends them with the rows, for the percentile chosen.
  function setColumns(columns) {
    const row = table.tHead.rows[0];
    const now = Array.from(row.cells).map((th) => th.dataset.key + "|" + th.textContent);
    if (now.join("\n") === columns.map((c) => c.key + "|" + c.label).join("\n")) return;
    row.replaceChildren(
      ...columns.map((c) => {
        const th = document.createElement("th");
        th.dataset.key = c.key;
        th.dataset.type = c.type;
        if (c.type === "num") th.className = "num";
        th.textContent = c.label;
        return th;
      })
    );
    if (!columns.some((c) => c.key === sortKey)) sortKey = null;
  }

  // Numbers as the page's language writes them (<html lang>).
  const LOCALE = document.documentElement.lang || LANGUAGE;
  const NUMBER = {
    whole: new Intl.NumberFormat(LOCALE, { maximumFractionDigits: 0 }),
    tenths: new Intl.NumberFormat(LOCALE, { minimumFractionDigits: 1, maximumFractionDigits: 1 }),
    any: new Intl.NumberFormat(LOCALE),
  };

  // Columns of whole counts, written without decimals.
  const COUNTS = new Set(["samples", "missed"]);

  function formatCell(key, value) {
    if (value === null || value === undefined) return "–";
    if (key === "error_rate") return NUMBER.tenths.format(value * 100);
    if (typeof value === "number" && !COUNTS.has(key)) {
      // The unit is in the column's heading.
      return (Math.abs(value) >= 100 ? NUMBER.whole : NUMBER.tenths).format(value);
    }
    return typeof value === "number" ? NUMBER.any.format(value) : String(value);
  }

  function compare(a, b, key, numeric) {
    const x = a[key];
    const y = b[key];
    // Missing values sort last whichever the direction.
    if (x === null || x === undefined) return y === null || y === undefined ? 0 : 1;
    if (y === null || y === undefined) return -1;
    return sortDir * (numeric ? x - y : String(x).localeCompare(String(y)));
  }

  function link(href, text) {
    const a = document.createElement("a");
    a.href = href;
    a.textContent = text;
    return a;
  }

  function renderTable() {
    const headers = Array.from(table.tHead.rows[0].cells);
    const rows = tableRows.slice();
    if (sortKey) {
      const numeric = headers.find((th) => th.dataset.key === sortKey).dataset.type === "num";
      rows.sort((a, b) => compare(a, b, sortKey, numeric));
    }
    for (const th of headers) {
      th.setAttribute("aria-sort", th.dataset.key !== sortKey ? "none" : sortDir > 0 ? "ascending" : "descending");
    }
    const body = document.createElement("tbody");
    if (!rows.length) {
      const cell = body.insertRow().insertCell();
      cell.colSpan = headers.length;
      cell.className = "hint";
      cell.textContent = cfg.text.no_rows;
    }
    for (const row of rows) {
      const tr = body.insertRow();
      for (const th of headers) {
        const key = th.dataset.key;
        const cell = tr.insertCell();
        const text = formatCell(key, row[key]);
        if (key === "region" && row.region_slug) {
          cell.appendChild(link(cfg.region_url.replace("__slug__", encodeURIComponent(row.region_slug)) + workloadQuery(), text));
        } else if (key === "target" && row.target_id) {
          cell.appendChild(link(cfg.target_url.replace("/0/", "/" + row.target_id + "/"), text));
        } else {
          cell.textContent = text;
        }
        if (th.dataset.type === "num") cell.className = "num";
      }
    }
    table.replaceChild(body, table.tBodies[0]);
  }

  table.tHead.addEventListener("click", (event) => {
    const th = event.target.closest("th");
    if (!th) return;
    sortDir = th.dataset.key === sortKey ? -sortDir : 1;
    sortKey = th.dataset.key;
    renderTable();
  });

  // ---- live updates --------------------------------------------------------

  let socket = null;
  let retryDelay = RETRY_FIRST_MS;
  let retryTimer = null;
  let liveCount = 0;

  function setLive(state, text) {
    const el = $("live-indicator");
    el.className = "live " + state;
    el.textContent = text;
  }

  function wsURL() {
    // A single target listens to that target's group; anything else to all.
    const targets = selectedTargets();
    const query = targets.length === 1 ? "?target=" + encodeURIComponent(targets[0]) : "";
    return (location.protocol === "https:" ? "wss://" : "ws://") + location.host + cfg.ws_path + query;
  }

  function wanted(item) {
    const targets = selectedTargets();
    if (targets.length > 1 && !targets.includes(String(item.target_id))) return false;
    // The regions ticked now (the page's first ones without the picker).
    const ids = regionPicker ? regionBoxes().map((box) => Number(box.dataset.id)) : cfg.region_ids;
    return !ids.length || ids.includes(item.region_id);
  }

  function onMessage(message) {
    if (message.type !== "measurements") return;
    const items = (message.items || []).filter(wanted);
    if (!items.length) return;
    liveCount += items.length;
    const counter = $("live-count");
    counter.textContent = String(liveCount);
    counter.dataset.lastId = String(Math.max(...items.map((item) => item.id)));
    scheduleRefresh();
  }

  function connect() {
    clearTimeout(retryTimer);
    if (signedOut) return;
    const ws = new WebSocket(wsURL());
    let opened = false;
    socket = ws;
    ws.onopen = () => {
      if (ws !== socket) return;
      // Measurements may have landed while the socket was down.
      if (retryDelay !== RETRY_FIRST_MS) scheduleRefresh();
      opened = true;
      retryDelay = RETRY_FIRST_MS;
      setLive("on", gettext("live"));
    };
    ws.onmessage = (event) => {
      if (ws === socket) onMessage(JSON.parse(event.data));
    };
    ws.onclose = () => {
      if (ws !== socket || signedOut) return; // replaced on purpose, or stopped
      // A refused handshake looks like any drop; an expired session shows in
      // a 403 from the API, and then retrying is pointless.
      if (!opened) load("meta");
      const seconds = Math.round(retryDelay / 1000);
      const text = opened ? gettext("reconnecting in %(seconds)s s") : gettext("offline, retry in %(seconds)s s");
      setLive("off", interpolate(text, { seconds }, true));
      retryTimer = setTimeout(connect, retryDelay);
      retryDelay = Math.min(retryDelay * 2, RETRY_MAX_MS);
    };
  }

  function reconnect() {
    const old = socket;
    socket = null;
    if (old) old.close();
    retryDelay = RETRY_FIRST_MS;
    connect();
  }

  function stopLive(text) {
    signedOut = true;
    clearTimeout(retryTimer);
    if (socket) socket.close();
    setLive("off", gettext("stopped"));
    showError(text);
  }

  syncPicker(null);
  syncCustomRange();
  syncDownloads();
  // The map's first figure came with the page (overview.html's #first-map): drawn now, without a round trip,
  // and not asked for again by the first refresh.
  const firstMap = $("first-map");
  if (firstMap) {
    const body = JSON.parse(firstMap.textContent);
    showNoData("overview", body.no_data);
    draw.overview(body);
  }
  refresh(firstMap ? ["overview"] : []);
  connect();
})();
