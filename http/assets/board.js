// The live board page, /boards/{board}: the top entries of a board, kept
// current by the podium client (podium.js). ?limit=N picks how many (1 to
// 1000, default 50); ?transport=ws uses the WebSocket instead of SSE.
(function () {
  "use strict";

  const $ = (id) => document.getElementById(id);
  const el = (tag, cls, text) => {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  };

  const board = decodeURIComponent(location.pathname.replace(/^\/boards\//, "").replace(/\/.*$/, ""));
  const params = new URLSearchParams(location.search);
  const limitParam = parseInt(params.get("limit") || "", 10);
  const limit = Number.isFinite(limitParam) ? Math.min(1000, Math.max(1, limitParam)) : 50;
  const transport = params.get("transport") === "ws" ? "ws" : "sse";

  const rowsEl = $("rows");
  const table = $("board-table");
  const rowByPlayer = new Map(); // player id -> <tr>
  const timers = new WeakMap();  // <tr> -> pending highlight timers
  let headSig = "";
  let nextReset = null;          // ms since epoch, or null for a board that never resets
  let hasState = false;
  let status = { state: "connecting" };
  let noticeTimer = 0;

  $("board-id").textContent = board;
  $("transport").textContent = transport === "ws" ? "WebSocket" : "Server-Sent Events";
  $("json-link").href = "/v1/boards/" + encodeURIComponent(board) + "/entries?limit=" + limit;
  $("caption").textContent = "Top " + limit + " entries of " + board;

  function group(n) {
    return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
  }

  function ago(iso) {
    const t = Date.parse(iso);
    if (!Number.isFinite(t)) return "";
    const s = Math.max(0, Math.round((Date.now() - t) / 1000));
    if (s < 5) return "just now";
    if (s < 60) return s + "s ago";
    if (s < 3600) return Math.floor(s / 60) + "m ago";
    if (s < 86400) return Math.floor(s / 3600) + "h ago";
    return new Date(t).toLocaleDateString();
  }

  function showNotice(text, bad, ms) {
    const n = $("notice");
    clearTimeout(noticeTimer);
    n.textContent = "";
    if (text instanceof Node) n.append(text); else n.textContent = text;
    n.classList.toggle("bad", !!bad);
    n.hidden = false;
    if (ms) noticeTimer = setTimeout(() => { n.hidden = true; }, ms);
  }

  // --- table ---

  // points shows a decayed points value: two decimals, grouped.
  function points(v) {
    const n = Number(v);
    if (!Number.isFinite(n)) return "\u2014";
    const [i, f] = n.toFixed(2).split(".");
    return group(i) + "." + f;
  }

  // columns are what the table shows of an entry besides rank and player:
  // one column per key; on a current points board (whose entries carry
  // "value") the decayed points instead of the raw era and fixed-point
  // keys, which stay in each cell's title and the JSON; on a best_k board
  // (entries with "results") the kept results too.
  function columns(state) {
    const keys = state.keys;
    const cols = [];
    if (state.entries.length && state.entries.every((e) => e.value !== undefined)) {
      cols.push({
        name: "points", label: "Points", title: "points now: they decay with time (the ranking keys are exact integers)",
        text: (e) => points(e.value), value: (e) => String(e.value),
        hint: (e) => keys.map((k, i) => k.name + " " + e.keys[i]).join(", "),
      });
    } else {
      keys.forEach((k, i) => cols.push({
        name: k.name, label: Podium.keyLabel(k), minor: i > 0,
        title: (k.label ? k.label + " (" + k.name + ")" : k.name) + ": " + (k.order === "asc" ? "smaller is better" : "larger is better"),
        text: (e) => Podium.formatKey(e.keys[i], k),
        value: (e) => (e.keys[i] === undefined ? "" : String(e.keys[i])),
      }));
      if (keys.length > 1) {
        cols[0].tiebreak = (e) => "then " + keys.slice(1).map((k, j) => Podium.keyLabel(k) + " " + Podium.formatKey(e.keys[j + 1], k)).join(", ");
      }
    }
    if (state.entries.some((e) => e.results)) {
      cols.push({ name: "results", label: "Best results", cls: "col-results", minor: true,
        title: "each player's best kept results, best first", results: true });
    }
    // The percentile, computed from rank and total by podium.js (events
    // carry no percentile: it moves for everyone when the total does).
    cols.push({
      name: "percentile", label: "Ahead of", cls: "num col-pct",
      title: "the share of the ranked entries behind, rounded down",
      text: (e) => (e.percentile === undefined ? "\u2014" : e.percentile.toFixed(2) + "%"),
      value: (e) => (e.percentile === undefined ? "" : String(e.percentile)),
      hint: (e) => "ahead of " + (e.percentile === undefined ? "?" : e.percentile.toFixed(2)) + "% of the " + group(shownTotal) + " ranked",
    });
    return cols;
  }

  // resultsText shows kept results compactly: the first few, then "+n".
  function resultsText(rs, keys) {
    const show = 5;
    const fmt = (r) => r.keys.map((v, i) => Podium.formatKey(v, keys[i])).join(" / ");
    const all = (rs || []).map(fmt);
    const text = all.slice(0, show).join(" \u00b7 ") + (all.length > show ? " \u00b7 +" + (all.length - show) : "");
    return { text, title: all.join(", ") };
  }

  let cols = [];
  let shownTotal = 0; // the total of the state being rendered (the percentile's hint)
  function ensureHead(state) {
    const next = columns(state);
    const sig = JSON.stringify([state.keys, next.map((c) => c.name)]);
    if (sig === headSig) return;
    headSig = sig;
    cols = next;
    const head = $("head-row");
    while (head.children.length > 2) head.lastElementChild.remove();
    cols.forEach((c) => {
      const th = el("th", (c.cls || "num col-key") + (c.minor ? " minor" : ""), c.label);
      th.scope = "col";
      th.dataset.key = c.name;
      th.title = c.title;
      head.append(th);
    });
    const at = el("th", "col-at minor", "When");
    at.scope = "col";
    head.append(at);
    rowsEl.textContent = ""; // the columns changed: rebuild every row
    rowByPlayer.clear();
  }

  function makeRow() {
    const tr = el("tr");
    const rank = el("td", "col-rank");
    rank.append(el("span", "rank"), el("span", "move"));
    const player = el("td", "col-player");
    const name = el("bdi", "name"); // a player's name: isolated (docs/API.md, "Look-alike ids")
    name.tabIndex = 0; // history.js charts a player on a click or Enter
    name.setAttribute("role", "button");
    player.append(name);
    tr.append(rank, player);
    cols.forEach((c) => {
      const td = el("td", (c.cls || "num col-key") + (c.minor ? " minor" : ""));
      td.dataset.key = c.name;
      tr.append(td);
    });
    const at = el("td", "col-at minor");
    at.append(el("time"));
    tr.append(at);
    return tr;
  }

  function fillRow(tr, e, keys) {
    tr.dataset.player = e.player;
    tr.dataset.rank = String(e.rank);
    const cells = tr.children;
    // A board with rank_style shared shows the shared rank (1, 2, 2, 4);
    // its unique rank stays in data-rank and the title.
    const shared = e.rank_shared !== undefined;
    cells[0].firstChild.textContent = String(shared ? e.rank_shared : e.rank);
    if (shared) {
      tr.dataset.rankShared = String(e.rank_shared);
      cells[0].title = e.rank_shared !== e.rank ? "tied: rank " + e.rank + " when ties go to whoever got there first" : "";
    } else {
      delete tr.dataset.rankShared;
      cells[0].removeAttribute("title");
    }
    const name = cells[1].firstChild;
    name.textContent = e.name || e.player;
    if (e.name && e.name !== e.player) name.title = Podium.isolate(e.player); else name.removeAttribute("title");
    cols.forEach((c, i) => {
      const td = cells[2 + i];
      if (c.results) {
        const r = resultsText(e.results, keys);
        td.textContent = r.text;
        td.title = r.title;
        return;
      }
      td.textContent = c.text(e);
      if (c.tiebreak) {
        // On a phone the later keys are hidden; a row tied on the first
        // key shows them under it (render marks such rows "tied").
        td.append(el("small", "tiebreak", c.tiebreak(e)));
      }
      td.dataset.value = c.value(e);
      if (c.hint) td.title = c.hint(e);
    });
    const time = cells[cells.length - 1].firstChild;
    time.dateTime = e.at || "";
    time.textContent = ago(e.at);
    time.title = e.at ? PodiumPage.formatTime(e.at) : "";
  }

  // markTies marks the rows whose first key equals a neighbour's, so that a
  // narrow screen shows what breaks the tie.
  function markTies(entries) {
    entries.forEach((e, i) => {
      const tr = rowByPlayer.get(e.player);
      if (!tr) return;
      const same = (o) => !!o && o.keys[0] === e.keys[0];
      tr.classList.toggle("tied", same(entries[i - 1]) || same(entries[i + 1]));
    });
  }

  // mark highlights a row for 2 s and shows a movement marker for a while.
  function mark(tr, kind, symbol, label) {
    const old = timers.get(tr);
    if (old) old.forEach(clearTimeout);
    const mv = tr.querySelector(".move");
    mv.className = "move " + kind;
    mv.textContent = "";
    if (symbol) {
      const s = el("span", "", symbol);
      s.setAttribute("aria-hidden", "true");
      mv.append(s, el("span", "visually-hidden", label));
    }
    tr.classList.remove("flash-up", "flash-down", "flash-new", "flash-changed");
    void tr.offsetWidth; // restart the animation
    tr.classList.add("flash-" + kind);
    timers.set(tr, [
      setTimeout(() => tr.classList.remove("flash-" + kind), 2100),
      setTimeout(() => mv.classList.add("fade"), 8000),
      setTimeout(() => { mv.className = "move"; mv.textContent = ""; }, 9000),
    ]);
  }

  function render(state, info) {
    hasState = true;
    document.title = (state.title || state.board) + " · podium";
    $("title").textContent = state.title || state.board;
    $("period").textContent = state.period === "all" ? "all time" : state.period;
    $("period").dataset.period = state.period;
    nextReset = state.next_reset ? Date.parse(state.next_reset) : null;
    shownTotal = state.total;
    $("total").textContent = group(state.total);
    $("total-label").textContent = (state.total === 1 ? "entry" : "entries") +
      (state.total > state.entries.length && state.entries.length > 0 ? " (top " + state.entries.length + " shown)" : "");
    ensureHead(state);

    const seen = new Set();
    state.entries.forEach((e, i) => {
      let tr = rowByPlayer.get(e.player);
      if (!tr) {
        tr = makeRow();
        rowByPlayer.set(e.player, tr);
      }
      fillRow(tr, e, state.keys);
      seen.add(e.player);
      const here = rowsEl.children[i];
      if (here !== tr) rowsEl.insertBefore(tr, here || null);
    });
    for (const [player, tr] of rowByPlayer) {
      if (!seen.has(player)) {
        tr.remove();
        rowByPlayer.delete(player);
      }
    }
    $("empty").hidden = state.entries.length > 0;
    markTies(state.entries);
    lastKeys = state.keys;
    paintRule();

    if (info.previous_period) {
      showNotice("A new period has started: " + state.period + " (the ranking of " + info.previous_period + " is final).", false, 15000);
    }
    if (info.initial || info.previous_period) {
      tick();
      return;
    }
    const marked = new Set();
    for (const m of info.moved) {
      const tr = rowByPlayer.get(m.player);
      if (!tr) continue;
      const n = m.prev_rank - m.rank;
      const places = Math.abs(n) === 1 ? "place" : "places";
      if (n > 0) mark(tr, "up", "\u25B2" + n, "up " + n + " " + places);
      else mark(tr, "down", "\u25BC" + -n, "down " + -n + " " + places);
      marked.add(m.player);
    }
    for (const e of info.entered) {
      const tr = rowByPlayer.get(e.player);
      if (tr && !marked.has(e.player)) {
        mark(tr, "new", "new", "new entry");
        marked.add(e.player);
      }
    }
    for (const e of info.changed) {
      const tr = rowByPlayer.get(e.player);
      if (tr && !marked.has(e.player)) mark(tr, "changed", "", "");
    }
    tick();
  }

  // The ordering rule in words. A current points board ranks by its era
  // and fixed-point keys, which mean nothing to a reader: it says what
  // they amount to, the decayed points (the board's definition, read
  // once, says which boards are such).
  let lastKeys = null;
  let decay = null; // a current points board's "points" setting
  function paintRule() {
    if (!lastKeys) return;
    $("order-rule").textContent = decay
      ? "Ranked by points now (higher is better). Everyone's points halve every " + decay.half_life_days +
        " days, so the decay never changes the order; an exact tie goes to whoever reached it first."
      : Podium.orderRule(lastKeys);
  }
  if (board) fetch("/v1/boards/" + encodeURIComponent(board), { headers: { Accept: "application/json" } })
    .then((res) => (res.ok ? res.json() : null))
    .then((def) => {
      if (def && def.points && def.points.kind === "current") {
        decay = def.points;
        paintRule();
      }
    })
    .catch(() => {}); // the stream says what is wrong with the board

  // --- status, countdowns ---

  function paintStatus() {
    const s = $("status");
    let state = status.state;
    let text;
    let eta = "";
    if (state !== "live" && state !== "error" && state !== "closed" && navigator.onLine === false) {
      state = "offline";
      text = "offline";
    } else if (state === "live") {
      text = "live";
    } else if (state === "reconnecting") {
      text = "reconnecting";
      if (status.retry_at) eta = " in " + Math.max(1, Math.ceil((status.retry_at - Date.now()) / 1000)) + " s";
      else text = "reconnecting…";
    } else if (state === "error") {
      text = "stopped";
    } else if (state === "closed") {
      text = "closed";
    } else {
      text = "connecting…";
    }
    s.dataset.state = state;
    let t = s.querySelector(".status-text");
    let e = s.querySelector(".status-eta");
    if (!t) {
      s.textContent = "";
      t = el("span", "status-text");
      e = el("span", "status-eta");
      e.setAttribute("aria-hidden", "true"); // the seconds tick; screen readers hear the state only
      s.append(t, e);
    }
    if (t.textContent !== text) t.textContent = text;
    if (e.textContent !== eta) e.textContent = eta;
    table.classList.toggle("stale", !hasState || status.state !== "live");
  }

  function onStatus(st) {
    status = st;
    if (st.state === "error") {
      const msg = st.error && st.error.code === "board_not_found"
        ? "This board does not exist (or was deleted). "
        : "Live updates stopped: " + (st.error ? st.error.message : "unknown error") + ". ";
      const box = document.createDocumentFragment();
      box.append(msg);
      const a = el("a", "", "See all boards");
      a.href = "/";
      box.append(a);
      showNotice(box, true, 0);
      if (!hasState) $("title").textContent = board;
    }
    paintStatus();
  }

  let ticks = 0;
  function tick() {
    const r = $("reset");
    if (!hasState) {
      r.textContent = "–";
    } else if (nextReset === null || !Number.isFinite(nextReset)) {
      r.textContent = "never resets";
    } else {
      const left = nextReset - Date.now();
      r.textContent = left > 0 ? "resets in " + Podium.formatCountdown(left) : "resetting…";
    }
    paintStatus();
    if (++ticks % 15 === 0) {
      for (const t of rowsEl.querySelectorAll("time")) t.textContent = ago(t.dateTime);
    }
  }

  if (typeof Podium === "undefined" || typeof PodiumPage === "undefined") {
    showNotice("The podium client (/v1/client.js) did not load.", true, 0);
    return;
  }
  if (!board) {
    showNotice("No board in the address.", true, 0);
    return;
  }
  addEventListener("online", paintStatus);
  addEventListener("offline", paintStatus);
  setInterval(tick, 1000);
  tick();
  // Closed when the page is hidden (left, or kept in the back/forward
  // cache) so that pages left behind hold no connection (a browser has 6
  // per server); followed again when it comes back.
  let watcher = Podium.watch({ board, limit, transport, onUpdate: render, onStatus });
  addEventListener("pagehide", () => watcher.close());
  addEventListener("pageshow", (e) => {
    if (e.persisted) watcher = Podium.watch({ board, limit, transport, onUpdate: render, onStatus });
  });
})();
