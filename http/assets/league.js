// The live page of a league cohort: /leagues/{board}?player=amy (the
// player's cohort) or /leagues/{board}?tier=bronze&cohort=3. A player's
// cohort follows its own stream (GET .../players/{player}/cohort/stream:
// whole snapshots, each as the cohort read answers). A cohort named by
// tier and number reads GET /v1/leagues/... and re-reads it, at most once
// a second, whenever the league board's live stream says the board moved.
// Zones are marked per row: promotion, safe, relegation.
(function () {
  "use strict";
  const $ = (id) => document.getElementById(id);
  const board = decodeURIComponent(location.pathname.split("/")[2] || "");
  const q = new URLSearchParams(location.search);
  const player = q.get("player"), tier = q.get("tier"), cohort = q.get("cohort"), period = q.get("period");
  const enc = encodeURIComponent;
  const ZONES = { promotion: "\u25b2 promotion", safe: "safe", relegation: "\u25bc relegation" };

  let url = "/v1/leagues/" + enc(board);
  if (player) url += "/players/" + enc(player) + "/cohort";
  else url += "/tiers/" + enc(tier || "") + "/cohorts/" + enc(cohort || "0");
  if (period) url += "?period=" + enc(period);

  $("board-id").textContent = board;
  $("board-link").href = "/boards/" + enc(board);

  function notice(msg) {
    const n = $("notice");
    n.textContent = msg;
    n.hidden = !msg;
  }

  let busy = false, again = false, last = 0;
  async function load() {
    if (busy) { again = true; return; }
    busy = true;
    last = Date.now();
    try {
      const r = await fetch(url, { headers: { Accept: "application/json" } });
      const c = await r.json();
      if (!r.ok) {
        notice((c.error && c.error.message) || ("HTTP " + r.status));
        return;
      }
      notice("");
      render(c);
    } catch (e) {
      notice("Could not read the cohort: " + e);
    } finally {
      busy = false;
      if (again) { again = false; setTimeout(load, 1000); }
    }
  }

  function render(c) {
    $("title").textContent = (player ? player + "'s cohort" : "Cohort " + c.cohort) + " \u00b7 " + c.tier;
    document.title = $("title").textContent + " \u00b7 podium";
    $("period").textContent = c.period;
    $("tier").textContent = c.tier;
    $("cohort").textContent = c.cohort + " (" + c.entries.length + " of " + c.size + ")";
    const rows = $("rows");
    rows.textContent = "";
    for (const e of c.entries) {
      const tr = document.createElement("tr");
      tr.dataset.zone = e.zone;
      tr.dataset.player = e.player;
      if (player && e.player === player) tr.classList.add("me");
      const cells = [String(e.rank), e.name || e.player, e.keys ? e.keys.join(" / ") : "\u2013", ZONES[e.zone] || e.zone];
      cells.forEach((t, i) => {
        const td = document.createElement(i === 1 ? "th" : "td");
        if (i === 1) td.scope = "row";
        td.textContent = t;
        tr.append(td);
      });
      rows.append(tr);
    }
  }

  // The board's stream tells when entries moved; a cohort is re-read then,
  // no more than once a second.
  let timer = 0;
  function moved() {
    if (timer) return;
    timer = setTimeout(() => { timer = 0; load(); }, Math.max(0, 1000 - (Date.now() - last)));
  }
  function status(state) {
    const s = $("status");
    s.dataset.state = state;
    s.textContent = state;
  }

  if (player && !period && window.EventSource) {
    // The cohort's stream: a snapshot now and on every change. An error
    // event (board deleted, not readable) ends it; a dropped connection
    // is retried by EventSource, and starts again with a snapshot.
    const es = new EventSource(url + "/stream");
    es.onopen = () => status("live");
    es.addEventListener("snapshot", (ev) => {
      notice("");
      render(JSON.parse(ev.data));
    });
    es.addEventListener("error", (ev) => {
      if (ev.data) {
        const e = JSON.parse(ev.data);
        es.close();
        notice(e.message || e.code);
        status("ended");
        return;
      }
      if (es.readyState === EventSource.CLOSED) {
        // Refused (a 404 before the player's first score of the
        // period, say): the read says why.
        status("");
        load();
      } else {
        status("reconnecting");
      }
    });
    return;
  }
  load();
  if (window.Podium && !period) {
    Podium.watch({
      board, limit: 1, onUpdate: moved,
      onStatus(st) {
        const s = $("status");
        s.dataset.state = st.state;
        s.textContent = st.state === "live" ? "live" : st.state;
      },
    });
  } else {
    $("status").textContent = "";
  }
})();
