// The sdnbench dashboard page: state from server-sent events, charts as plain SVG (no library, works offline).
"use strict";

// Okabe-Ito: distinguishable with every common colour-vision deficiency (as the report's figures).
const PALETTE = ["#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000"];
const SVGNS = "http://www.w3.org/2000/svg";
const state = { series: {}, units: {}, cells: [], controllers: [], current: null, progress: null, knownRows: new Set() };

const $ = (id) => document.getElementById(id);

function colour(controller) {
  let i = state.controllers.indexOf(controller);
  if (i < 0) { state.controllers.push(controller); i = state.controllers.length - 1; renderLegend(); }
  return PALETTE[i % PALETTE.length];
}

function si(v) {
  const a = Math.abs(v);
  for (const [f, p] of [[1e9, "G"], [1e6, "M"], [1e3, "k"]]) if (a >= f) return +(v / f).toPrecision(3) + " " + p;
  if (a === 0) return "0";
  return String(+v.toPrecision(3));
}

function withUnit(v, unit) {
  if (unit === "bit/s" || unit === "packets/s" || unit === "requests/s" || unit === "responses/s") return si(v) + unit;
  return si(v) + (unit ? " " + unit : "");
}

function duration(s) {
  if (s === null || s === undefined) return "–";
  s = Math.round(s);
  if (s < 60) return s + " s";
  if (s < 3600) return Math.floor(s / 60) + " min " + (s % 60) + " s";
  return Math.floor(s / 3600) + " h " + Math.floor((s % 3600) / 60) + " min";
}

function el(tag, attrs, parent) {
  const e = document.createElementNS(SVGNS, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  if (parent) parent.appendChild(e);
  return e;
}

function renderProgress() {
  const p = state.progress;
  if (!p) return;
  $("done").textContent = p.done;
  $("total").textContent = p.total ?? "?";
  $("failed").textContent = p.failed;
  $("left").textContent = p.finished ? "done" : duration(p.left_s);
  $("elapsed").textContent = duration(p.elapsed_s);
  $("bar-fill").style.width = (p.total ? Math.min(100, (100 * p.done) / p.total) : 0) + "%";
  const badge = $("status");
  badge.textContent = p.finished ? "finished" : "running";
  badge.className = "badge " + (p.finished ? "finished" : "running");
}

function renderCurrent() {
  const c = state.current;
  $("current").textContent = c ? c.label : "none running";
  $("current").dataset.running = c ? "1" : "0";
  $("current-time").textContent = c
    ? "running for " + duration(Date.now() / 1000 - c.started) + (c.expected_s ? " of ~" + duration(c.expected_s) + " of traffic" : "")
    : "";
}

function renderLegend() {
  const legend = $("legend");
  legend.replaceChildren(...state.controllers.map((c, i) => {
    const s = document.createElement("span");
    s.style.setProperty("--c", PALETTE[i % PALETTE.length]);
    s.textContent = c;
    return s;
  }));
}

function chartFor(metric) {
  let card = document.querySelector(`.chart[data-metric="${metric}"]`);
  if (!card) {
    $("no-series").hidden = true;
    card = document.createElement("div");
    card.className = "chart";
    card.dataset.metric = metric;
    const h = document.createElement("h3");
    h.textContent = metric + (state.units[metric] ? " (" + state.units[metric] + ")" : "");
    card.appendChild(h);
    card.appendChild(el("svg", { viewBox: "0 0 560 190", preserveAspectRatio: "none" }));
    $("charts").appendChild(card);
  }
  return card;
}

function renderChart(metric) {
  const pts = state.series[metric] || [];
  const card = chartFor(metric);
  card.dataset.points = pts.length;
  const svg = card.querySelector("svg");
  svg.replaceChildren();
  if (!pts.length) return;
  const W = 560, H = 190, L = 58, R = 8, T = 8, B = 22;
  let t0 = Infinity, t1 = -Infinity, v0 = 0, v1 = -Infinity;
  for (const [t, v] of pts) { t0 = Math.min(t0, t); t1 = Math.max(t1, t); v0 = Math.min(v0, v); v1 = Math.max(v1, v); }
  if (t1 === t0) t1 = t0 + 1;
  if (v1 <= v0) v1 = v0 + 1;
  v1 += (v1 - v0) * 0.05;
  const x = (t) => L + ((t - t0) / (t1 - t0)) * (W - L - R);
  const y = (v) => H - B - ((v - v0) / (v1 - v0)) * (H - T - B);
  for (let i = 0; i <= 4; i++) {
    const v = v0 + ((v1 - v0) * i) / 4;
    el("line", { x1: L, x2: W - R, y1: y(v), y2: y(v), class: "grid" }, svg);
    el("text", { x: L - 4, y: y(v) + 3, "text-anchor": "end" }, svg).textContent = si(v);
  }
  for (let i = 0; i <= 3; i++) {
    const t = t0 + ((t1 - t0) * i) / 3;
    el("text", { x: x(t), y: H - 6, "text-anchor": i === 0 ? "start" : i === 3 ? "end" : "middle" }, svg)
      .textContent = new Date(t * 1000).toLocaleTimeString([], { hour12: false });
  }
  el("line", { x1: L, x2: L, y1: T, y2: H - B, class: "axis" }, svg);
  el("line", { x1: L, x2: W - R, y1: H - B, y2: H - B, class: "axis" }, svg);
  const lines = new Map();   // one line per trial and flow, coloured by controller
  for (const p of pts) {
    if (!lines.has(p[2])) lines.set(p[2], { c: p[3], pts: [] });
    lines.get(p[2]).pts.push(p);
  }
  for (const [name, line] of lines) {
    line.pts.sort((a, b) => a[0] - b[0]);
    const d = line.pts.map((p) => x(p[0]).toFixed(1) + "," + y(p[1]).toFixed(1)).join(" ");
    const pl = el("polyline", { points: d, fill: "none", stroke: colour(line.c), "stroke-width": 1.5 }, svg);
    el("title", {}, pl).textContent = name;
    if (line.pts.length < 20) for (const p of line.pts) el("circle", { cx: x(p[0]), cy: y(p[1]), r: 2, fill: colour(line.c) }, svg);
  }
}

function renderCells() {
  const cells = state.cells;
  $("no-cells").hidden = cells.length > 0;
  const ctrls = [];
  const rows = new Map();
  for (const c of cells) {
    if (!ctrls.includes(c.controller)) ctrls.push(c.controller);
    const key = [c.topology, c.workload, c.params, c.metric].join("|");
    if (!rows.has(key)) rows.set(key, { c, by: {} });
    rows.get(key).by[c.controller] = c;
  }
  const head = $("cells").tHead;
  head.replaceChildren();
  const hr = head.insertRow();
  for (const h of ["topology", "workload", "parameters", "metric", ...ctrls]) hr.appendChild(document.createElement("th")).textContent = h;
  const body = $("cells").tBodies[0];
  body.replaceChildren();
  for (const [key, row] of rows) {
    const tr = body.insertRow();
    tr.dataset.row = key;
    if (!state.knownRows.has(key)) { tr.className = "new"; state.knownRows.add(key); }
    for (const t of [row.c.topology, row.c.workload, row.c.params, row.c.metric + (row.c.unit ? " (" + row.c.unit + ")" : "")]) tr.insertCell().textContent = t;
    for (const ctrl of ctrls) {
      const td = tr.insertCell();
      td.className = "num";
      const c = row.by[ctrl];
      if (!c) continue;
      const marks = (c.failed_repetitions ? " ✗" + c.failed_repetitions : "") + (c.valid ? "" : " †");
      td.textContent = (c.mean === null ? "–" : si(c.mean)) + (c.ci95 === null ? "" : " ± " + si(c.ci95)) + " (n=" + c.n + ")" + marks;
      if (marks) { td.classList.add("marked"); td.title = c.invalid_reasons || "failed repetitions: " + c.failed_repetitions; }
    }
  }
}

function addSeries(data) {
  Object.assign(state.units, data.units);
  for (const [metric, pts] of Object.entries(data.points)) {
    state.series[metric] = (state.series[metric] || []).concat(pts);
    renderChart(metric);
  }
}

function connect() {
  const es = new EventSource("events");
  es.addEventListener("snapshot", (e) => {
    const s = JSON.parse(e.data);
    $("run").textContent = s.run;
    Object.assign(state, { progress: s.progress, current: s.current, cells: s.cells, units: s.units, series: s.series });
    renderProgress(); renderCurrent(); renderCells();
    for (const m of Object.keys(s.series)) renderChart(m);
  });
  es.addEventListener("progress", (e) => { state.progress = JSON.parse(e.data); renderProgress(); });
  es.addEventListener("trial", (e) => {
    const d = JSON.parse(e.data);
    state.current = d.label ? d : null;
    if (d.last) $("last").textContent = "last trial: " + d.last.status + " in " + d.last.seconds.toFixed(1) + " s" + (d.last.summary ? ", " + d.last.summary : "");
    renderCurrent();
  });
  es.addEventListener("series", (e) => addSeries(JSON.parse(e.data)));
  es.addEventListener("cells", (e) => { state.cells = JSON.parse(e.data).cells; renderCells(); });
  es.onerror = () => { const b = $("status"); if (!state.progress || !state.progress.finished) { b.textContent = "reconnecting…"; b.className = "badge lost"; } };
  es.onopen = () => renderProgress();
}

connect();
setInterval(renderCurrent, 1000);
