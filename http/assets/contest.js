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
  function when(iso) {
    const t = Date.parse(iso);
    return Number.isFinite(t) ? new Date(t).toLocaleString() : "";
  }
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
      tr.append(el("td", "col-player", c.name), el("td", "", c.category), el("td", "num", group(c.value)),
        el("td", "num", String(c.solves)), bloods);
      body.append(tr);
    }
  }

  function paintChart(ch) {
    const chart = $("chart");
    while (chart.childNodes.length > 1) chart.lastChild.remove(); // keep <title>
    const W = 800, H = 300, L = 50, B = 20, T = 10, R = 10;
    const t0 = Date.parse(ch.start);
    const t1 = Math.min(Date.parse(ch.cutoff || ch.end), Math.max(Date.now(), t0 + 1));
    let top = 0;
    for (const s of ch.series) for (const p of s.points) top = Math.max(top, p[1]);
    top = top || 1;
    const x = (t) => L + (W - L - R) * Math.min(1, Math.max(0, (t - t0) / Math.max(1, t1 - t0)));
    const y = (v) => H - B - (H - B - T) * v / top;
    chart.append(svg("line", { class: "axis", x1: L, y1: H - B, x2: W - R, y2: H - B }),
      svg("line", { class: "axis", x1: L, y1: T, x2: L, y2: H - B }));
    const label = svg("text", { x: L - 6, y: T + 8, "text-anchor": "end" });
    label.textContent = group(top);
    const zero = svg("text", { x: L - 6, y: H - B, "text-anchor": "end" });
    zero.textContent = "0";
    chart.append(label, zero);
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
      const path = svg("path", { d, fill: "none", stroke: COLORS[i % COLORS.length], "stroke-width": 2, "vector-effect": "non-scaling-stroke" });
      const tip = svg("title", {});
      tip.textContent = Podium.isolate(s.name) + ": " + group(v);
      path.append(tip);
      chart.append(path);
      const item = el("span");
      item.append(el("span", "swatch c" + (i % COLORS.length)), Podium.bdi(s.name));
      legend.append(item);
    });
  }

  refresh();
  // The state (running, frozen, ended) changes with time, not with
  // solves: read the contest again every 10 s too.
  setInterval(scheduleRefresh, 10000);
  Podium.watch({ board: id, collection: "contests", limit: 50, onUpdate: render, onStatus });
})();
