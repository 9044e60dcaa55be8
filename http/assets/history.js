// The history chart under a board's live page: the value of the board's
// first key over time, for one player (click a name) or for the top 10,
// drawn as plain SVG from GET /v1/boards/{board}/entries/{player}/history
// (the player's log rows, newest first). A player's entry after each row is
// worked out the way the board's mode keeps it: best keeps the better
// tuple, latest the last, sum adds; a delete clears it.
(function () {
  "use strict";

  const $ = (id) => document.getElementById(id);
  const SVG = "http://www.w3.org/2000/svg";
  const section = $("history");
  const svg = $("history-chart");
  if (!section || !svg || typeof fetch === "undefined" || typeof Podium === "undefined" || typeof PodiumPage === "undefined") return;
  const board = decodeURIComponent(location.pathname.replace(/^\/boards\//, "").replace(/\/.*$/, ""));
  const MAX_ROWS = 200;   // log rows read per player (two pages at most)
  const TOP = 10;
  const COLORS = ["#2563eb", "#dc2626", "#16a34a", "#d97706", "#7c3aed", "#0891b2", "#db2777", "#65a30d", "#9333ea", "#475569"];
  let def = null;         // the board, from GET /v1/boards/{board}
  let token = 0;          // drops answers to superseded requests

  function getJSON(path) {
    return fetch(path, { headers: { Accept: "application/json" } }).then((res) =>
      res.json().then((body) => {
        if (!res.ok) throw new Error((body.error && body.error.message) || "HTTP " + res.status);
        return body;
      }));
  }

  // rows reads up to MAX_ROWS of a player's log rows, oldest first.
  function rows(player) {
    const base = "/v1/boards/" + encodeURIComponent(board) + "/entries/" + encodeURIComponent(player) + "/history?limit=100";
    const out = [];
    const page = (cursor) => getJSON(base + (cursor ? "&cursor=" + encodeURIComponent(cursor) : "")).then((body) => {
      out.push(...(body.items || []));
      if (body.next_cursor && out.length < MAX_ROWS) return page(body.next_cursor);
      return out.reverse();
    });
    return page("");
  }

  function better(a, b) { // a ranks strictly ahead of b under the board's orders
    for (let i = 0; i < def.keys.length; i++) {
      if (a[i] === b[i]) continue;
      return def.keys[i].order === "asc" ? a[i] < b[i] : a[i] > b[i];
    }
    return false;
  }

  // series turns log rows into the entry's first key over time, within the
  // current period; a row that leaves the entry as it was adds no point.
  function series(list, period) {
    const pts = [];
    let cur = null;
    for (const r of list) {
      if (r.period !== period) continue;
      const t = Date.parse(r.at);
      if (r.kind === "delete") {
        cur = null;
        pts.push({ t, v: null });
        continue;
      }
      let next = r.keys;
      if (cur && def.mode === "sum") next = cur.map((v, i) => v + r.keys[i]);
      else if (cur && def.mode !== "latest" && !better(r.keys, cur)) next = cur;
      if (next !== cur) pts.push({ t, v: next[0] });
      cur = next;
    }
    return pts;
  }

  function node(tag, attrs, text) {
    const e = document.createElementNS(SVG, tag);
    for (const k in attrs) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    return e;
  }

  // draw renders step lines: x is time, y the first key, drawn so that up
  // is better (an ascending key's axis is flipped). The chart takes the
  // page's width and is drawn at the size it is shown (one SVG unit a CSS
  // pixel), so that its labels keep their size on a phone; it is drawn
  // again when that size changes.
  let last = null;
  function draw(lines) {
    last = lines;
    svg.textContent = "";
    const W = Math.max(200, Math.round(section.getBoundingClientRect().width) || 640); // the svg itself is hidden while empty
    const H = W < 480 ? 220 : 280, R = 14, T = 12, B = 44;
    const all = lines.flatMap((l) => l.pts.filter((p) => p.v !== null));
    $("history-empty").hidden = all.length > 0;
    if (!all.length) return;
    let t0 = Math.min(...all.map((p) => p.t)), t1 = Math.max(...all.map((p) => p.t), Date.now());
    let v0 = Math.min(...all.map((p) => p.v)), v1 = Math.max(...all.map((p) => p.v));
    if (t1 - t0 < 60000) t0 = t1 - 60000;
    if (v1 === v0) { v0 -= 1; v1 += 1; }
    const key = def.keys[0];
    const values = [v0, (v0 + v1) / 2, v1].map((v) => ({ v, text: Podium.formatKey(Math.round(v), key) }));
    // The value labels' width decides the left margin (7 px a character at 12 px).
    const L = Math.min(Math.round(W / 3), 14 + 7 * Math.max(...values.map((x) => x.text.length)));
    svg.setAttribute("viewBox", "0 0 " + W + " " + H);
    svg.setAttribute("height", String(H));
    const up = key.order === "asc" ? (v) => v : (v) => v1 - (v - v0); // "asc": smaller is better, drawn higher
    const x = (t) => L + (t - t0) / (t1 - t0) * (W - L - R);
    const y = (v) => T + (up(v) - v0) / (v1 - v0) * (H - T - B);
    svg.append(node("line", { x1: L, y1: H - B, x2: W - R, y2: H - B, class: "axis" }));
    svg.append(node("line", { x1: L, y1: T, x2: L, y2: H - B, class: "axis" }));
    const yAxis = node("g", { class: "value-axis" });
    for (const { v, text } of values) yAxis.append(node("text", { x: L - 6, y: y(v) + 4, "text-anchor": "end", class: "tick" }, text));
    const xAxis = node("g", { class: "time-axis" });
    for (const tk of PodiumPage.timeTicks(t0, t1, Math.floor((W - L - R) / 90))) {
      xAxis.append(node("line", { x1: x(tk.t), y1: H - B, x2: x(tk.t), y2: H - B + 4, class: "tick-mark" }));
      // A label centred on a tick near the right edge would stick out of
      // the chart: it ends at the edge instead (dropping it left a phone's
      // axis with one label).
      const edge = x(tk.t) > W - R - 28;
      xAxis.append(node("text", { x: edge ? W - R : x(tk.t), y: H - B + 17, "text-anchor": edge ? "end" : "middle", class: "tick" }, tk.label));
    }
    xAxis.append(node("text", { x: (L + W - R) / 2, y: H - 4, "text-anchor": "middle", class: "axis-title" }, "time (" + PodiumPage.zone(t1) + ")"));
    svg.append(yAxis, xAxis);
    lines.forEach((l, i) => {
      let d = "", last = null;
      for (const p of l.pts) {
        if (p.v === null) { last = null; continue; }
        d += last === null ? "M" + x(p.t) + " " + y(p.v) : "H" + x(p.t) + "V" + y(p.v);
        last = p;
      }
      if (last) d += "H" + x(t1);
      const color = COLORS[i % COLORS.length];
      const path = node("path", { d, fill: "none", stroke: color, "stroke-width": 2, class: "line" });
      path.dataset.player = l.player;
      path.append(node("title", {}, Podium.isolate(l.name)));
      svg.append(path);
    });
    const legend = $("history-legend");
    legend.textContent = "";
    lines.forEach((l, i) => {
      const li = document.createElement("li");
      const sw = node("svg", { width: 12, height: 12, "aria-hidden": "true" });
      sw.append(node("rect", { width: 12, height: 12, fill: COLORS[i % COLORS.length] }));
      li.append(sw, " ", Podium.bdi(l.name));
      li.dataset.player = l.player;
      legend.append(li);
    });
  }
  if (typeof ResizeObserver !== "undefined") {
    let lastW = 0;
    new ResizeObserver(() => {
      const w = Math.round(section.getBoundingClientRect().width);
      if (last && w && w !== lastW) { lastW = w; draw(last); }
    }).observe(section);
  }

  function chart(players, names) {
    const my = ++token;
    $("history-title").textContent = players.length === 1 ? "History of " + Podium.isolate(names[0] || players[0]) : "History of the top " + players.length;
    $("history-status").textContent = "loading…";
    const period = $("period").dataset.period;
    Promise.all(players.map((p) => rows(p)))
      .then((lists) => {
        if (my !== token) return;
        $("history-status").textContent = "";
        draw(lists.map((list, i) => ({ player: players[i], name: names[i] || players[i], pts: series(list, period) })));
      })
      .catch((err) => {
        if (my === token) $("history-status").textContent = "Could not read the history: " + err.message;
      });
  }

  function topPlayers() {
    const trs = Array.from(document.querySelectorAll("#rows tr")).slice(0, TOP);
    return [trs.map((tr) => tr.dataset.player), trs.map((tr) => tr.querySelector(".name").textContent)];
  }

  getJSON("/v1/boards/" + encodeURIComponent(board)).then((b) => {
    def = b;
    if (b.aggregate || b.points) return; // no submissions of their own to chart
    section.hidden = false;
    $("history-top").addEventListener("click", () => chart(...topPlayers()));
    const pick = (e) => {
      const tr = e.target.closest("tr[data-player]");
      if (tr && e.target.closest(".col-player")) chart([tr.dataset.player], [tr.querySelector(".name").textContent]);
    };
    const rowsEl = document.getElementById("rows");
    rowsEl.addEventListener("click", pick);
    rowsEl.addEventListener("keydown", (e) => { if (e.key === "Enter" || e.key === " ") { e.preventDefault(); pick(e); } });
  }).catch(() => {}); // the board page says what is wrong with the board
})();
