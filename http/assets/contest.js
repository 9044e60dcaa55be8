// The live contest page, /contests/{contest}: the public standings, kept
// current by the podium client (podium.js) over the contest's stream; the
// challenges with their current values, solve counts and first bloods, and
// a score-over-time chart of the top 10 in plain SVG, read again whenever
// the standings move (at most once a second) and every 10 seconds.
(function () {
  "use strict";

  const $ = (id) => document.getElementById(id);
  const el = (tag, cls, text) => {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  };
  const SVG = "http://www.w3.org/2000/svg";
  const svg = (tag, attrs) => {
    const e = document.createElementNS(SVG, tag);
    for (const k in attrs) e.setAttribute(k, attrs[k]);
    return e;
  };
  const COLORS = ["#2b59c3", "#c2362b", "#117a3d", "#c27c0e", "#7b3fb8", "#0f8a8a", "#b0713a", "#d0448a", "#5d636e", "#8a9a1c"];

  const id = decodeURIComponent(location.pathname.replace(/^\/contests\//, "").replace(/\/.*$/, ""));
  const api = "/v1/contests/" + encodeURIComponent(id);
  const rowsEl = $("rows");
  let contest = null;
  let refreshTimer = 0;
  let lastRefresh = 0;

  $("contest-id").textContent = id;
  $("json-link").href = api + "/standings";
  $("ctftime-link").href = api + "/ctftime";

  function group(n) { return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ","); }
  // Times carry the viewer's time zone (page.js).
  const when = (iso) => PodiumPage.formatTime(iso);
  function showNotice(text, bad) {
    const n = $("notice");
    n.textContent = text;
    n.classList.toggle("bad", !!bad);
    n.hidden = !text;
  }
  async function get(path) {
    const r = await fetch(api + path, { cache: "no-store" });
    const body = await r.json();
    if (!r.ok) throw Object.assign(new Error(body.error ? body.error.message : r.statusText), { code: body.error && body.error.code });
    return body;
  }

  const STATES = { upcoming: "Not started", running: "Running", frozen: "Running, standings frozen",
    ended: "Ended, standings frozen until the reveal", final: "Final standings" };

  function paintContest(c) {
    contest = c;
    document.title = (c.title || c.id) + " · podium";
    $("title").textContent = c.title || c.id;
    $("state").textContent = STATES[c.state] || c.state;
    $("window").textContent = when(c.start) + " – " + when(c.end) + (c.freeze ? " (freeze " + when(c.freeze) + ")" : "");
    if (c.state === "frozen" || c.state === "ended") {
      showNotice("The standings are frozen since " + when(c.freeze) + ": solves after it show once the contest is revealed.");
    } else {
      showNotice("");
    }
  }

  // --- standings, from the stream ---

  function render(state) {
    $("standings-table").classList.remove("stale");
    $("total").textContent = group(state.total);
    const seen = new Set();
    state.entries.forEach((e, i) => {
      let tr = rowsEl.querySelector('tr[data-team="' + CSS.escape(e.player) + '"]');
      if (!tr) {
        tr = el("tr");
        tr.dataset.team = e.player;
        tr.append(el("td", "col-rank"), el("td", "col-player"), el("td", "num"), el("td", "col-at minor"));
      }
      tr.dataset.rank = e.rank;
      const rank = el("span", "rank", String(e.rank));
      tr.children[0].replaceChildren(rank);
      tr.children[1].replaceChildren(Podium.bdi(e.name || e.player));
      tr.children[1].title = Podium.isolate(e.player);
      tr.children[2].textContent = group(e.keys[0]);
      tr.children[3].textContent = e.keys[0] > 0 ? when(e.at) : "";
      // On a phone the last-solve column is hidden: a row tied on score
      // shows it under the score, as what ordered the tie.
      if (e.keys[0] > 0) tr.children[2].append(el("small", "tiebreak", "last solve " + when(e.at)));
      const same = (o) => !!o && o.keys[0] === e.keys[0];
      tr.classList.toggle("tied", same(state.entries[i - 1]) || same(state.entries[i + 1]));
      seen.add(e.player);
      const here = rowsEl.children[i];
      if (here !== tr) rowsEl.insertBefore(tr, here || null);
    });
    for (const tr of Array.from(rowsEl.children)) if (!seen.has(tr.dataset.team)) tr.remove();
    $("empty").hidden = state.entries.length > 0;
    scheduleRefresh();
  }

  function onStatus(s) {
    const p = $("status");
    p.dataset.state = s.state === "live" ? "live" : s.state === "error" ? "error" : "connecting";
    p.textContent = s.state === "live" ? "live" : s.state === "error" ? (s.error ? s.error.message : "error") :
      s.state === "closed" ? "closed" : "connecting…";
    if (s.state !== "live") $("standings-table").classList.add("stale");
  }

  // --- challenges and chart, read when the standings move ---

  function scheduleRefresh() {
    if (refreshTimer) return;
    const wait = Math.max(0, 1000 - (Date.now() - lastRefresh));
    refreshTimer = setTimeout(() => { refreshTimer = 0; lastRefresh = Date.now(); refresh(); }, wait);
  }

  async function refresh() {
    try {
      const [c, ch, chart] = await Promise.all([get(""), get("/challenges?view=public"), get("/chart?view=public&top=10")]);
      paintContest(c);
      paintChallenges(ch.challenges);
      paintChart(chart);
    } catch (e) {
      showNotice(e.code === "not_found" ? "There is no contest " + id + "." : "Could not read the contest: " + e.message, true);
    }
  }

  function paintChallenges(list) {
    const body = $("challenges");
    body.textContent = "";
    for (const c of list) {
      const tr = el("tr");
      tr.dataset.challenge = c.id;
      const bloods = el("td");
      for (const b of c.first_bloods) {
        const s = el("span", "blood");
        s.append(el("span", "pos p" + b.position, ["1st", "2nd", "3rd"][b.position - 1]), Podium.bdi(b.name));
        bloods.append(s);
      }
      // On a phone the category column is hidden and shows under the
      // name instead, and the first bloods wrap one to a line, so the
      // table fits the screen.
      const name = el("td", "col-player", c.name);
      if (c.category) name.append(el("small", "cat", c.category));
      bloods.className = "bloods";
      tr.append(name, el("td", "minor", c.category), el("td", "num", group(c.value)),
        el("td", "num", String(c.solves)), bloods);
      body.append(tr);
    }
  }

  // The chart is drawn at the size it is shown (one SVG unit a CSS
  // pixel), so its labels keep their size on a phone, and drawn again
  // when that size changes. x is time, with a time axis in the viewer's
  // zone; y the score.
  let lastChart = null;
  function paintChart(ch) {
    lastChart = ch;
    const chart = $("chart");
    while (chart.childNodes.length > 1) chart.lastChild.remove(); // keep <title>
    const W = Math.max(200, Math.round(chart.getBoundingClientRect().width) || 800);
    const H = W < 480 ? 220 : 280;
    const L = 52, R = 14, T = 12, B = 44;
    chart.setAttribute("viewBox", "0 0 " + W + " " + H);
    chart.setAttribute("height", String(H));
    const t0 = Date.parse(ch.start);
    const t1 = Math.min(Date.parse(ch.cutoff || ch.end), Math.max(Date.now(), t0 + 60000));
    let top = 0;
    for (const s of ch.series) for (const p of s.points) top = Math.max(top, p[1]);
    top = top || 1;
    const x = (t) => L + (W - L - R) * Math.min(1, Math.max(0, (t - t0) / Math.max(1, t1 - t0)));
    const y = (v) => H - B - (H - B - T) * v / top;
    chart.append(svg("line", { class: "axis", x1: L, y1: H - B, x2: W - R, y2: H - B }),
      svg("line", { class: "axis", x1: L, y1: T, x2: L, y2: H - B }));
    const yAxis = svg("g", { class: "score-axis" });
    for (const v of [0, top / 2, top]) {
      const label = svg("text", { x: L - 6, y: y(v) + 4, "text-anchor": "end" });
      label.textContent = group(Math.round(v));
      yAxis.append(label);
    }
    chart.append(yAxis, timeAxis(t0, t1, x, H - B, W - L - R, (W - R + L) / 2, H - 4));
    const legend = $("legend");
    legend.textContent = "";
    ch.series.forEach((s, i) => {
      let d = "M" + x(t0) + "," + y(0);
      let v = 0;
      for (const p of s.points) {
        const px = x(Date.parse(p[0]));
        d += " H" + px + " V" + y(p[1]);
        v = p[1];
      }
      d += " H" + x(t1);
      const path = svg("path", { d, fill: "none", stroke: COLORS[i % COLORS.length], "stroke-width": 2 });
      const tip = svg("title", {});
      tip.textContent = Podium.isolate(s.name) + ": " + group(v);
      path.append(tip);
      chart.append(path);
      const item = el("span");
      item.append(el("span", "swatch c" + (i % COLORS.length)), Podium.bdi(s.name));
      legend.append(item);
    });
  }

  // timeAxis draws ticks on round local times under the plot (at y0),
  // spaced at least 90 px apart (a label is up to 60), and names the zone
  // under them.
  function timeAxis(t0, t1, x, y0, width, mid, bottom) {
    const g = svg("g", { class: "time-axis" });
    for (const tk of PodiumPage.timeTicks(t0, t1, Math.floor(width / 90))) {
      const px = x(tk.t);
      g.append(svg("line", { class: "tick-mark", x1: px, y1: y0, x2: px, y2: y0 + 4 }));
      // A label centred on a tick near the right edge would stick out of
      // the chart: it ends at the edge instead (dropping it left a phone's
      // axis with one label).
      const edge = px > x(t1) - 28;
      const label = svg("text", { x: edge ? x(t1) : px, y: y0 + 17, "text-anchor": edge ? "end" : "middle", class: "tick" });
      label.textContent = tk.label;
      g.append(label);
    }
    const title = svg("text", { x: mid, y: bottom, "text-anchor": "middle", class: "axis-title" });
    title.textContent = "time (" + PodiumPage.zone(t1) + ")";
    g.append(title);
    return g;
  }
  if (typeof ResizeObserver !== "undefined") {
    let lastW = 0;
    new ResizeObserver(() => {
      const w = Math.round($("chart").getBoundingClientRect().width);
      if (lastChart && w !== lastW) { lastW = w; paintChart(lastChart); }
    }).observe($("chart"));
  }

  refresh();
  // The state (running, frozen, ended) changes with time, not with
  // solves: read the contest again every 10 s too.
  setInterval(scheduleRefresh, 10000);
  Podium.watch({ board: id, collection: "contests", limit: 50, onUpdate: render, onStatus });
})();
