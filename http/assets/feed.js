// The activity feed under a board's live page (the board's newest events:
// new personal bests, new #1s, settled tournaments) and on the index page
// (every public board's), from /v1/feed/stream. EventSource resends the
// last event id when it reconnects, so the stream resumes, or starts
// again with a snapshot.
(function () {
  "use strict";

  const list = document.getElementById("feed");
  const section = document.getElementById("activity");
  if (!list || !section) return;
  const onBoard = location.pathname.startsWith("/boards/");
  const board = onBoard ? decodeURIComponent(location.pathname.replace(/^\/boards\//, "").replace(/\/.*$/, "")) : "";
  const limit = 20;
  let events = []; // newest first

  // defs holds the definitions of the boards seen in events, read once
  // per board (GET /v1/boards/{board}), so that values show in their
  // formats (podium.js formatKey); at most 100 boards are looked up.
  const defs = new Map();
  function boardDef(board) {
    if (!defs.has(board) && defs.size < 100 && typeof Podium !== "undefined") {
      defs.set(board, null);
      fetch("/v1/boards/" + encodeURIComponent(board), { headers: { Accept: "application/json" } })
        .then((res) => (res.ok ? res.json() : null))
        .then((b) => { if (b && b.keys) { defs.set(board, b); render(); } })
        .catch(() => {});
    }
    return defs.get(board) || null;
  }

  // keys shows an event's keys. A current points board's keys (an era and
  // fixed-point points, docs/API.md "Points boards") show as the points
  // they were worth when the event happened: K * 2^-24 * 2^(-(t - era *
  // half_life) / half_life), two decimals.
  function keys(k, board, at) {
    if (!k) return "";
    const d = boardDef(board);
    if (!d) return k.map((v) => String(v).replace(/\B(?=(\d{3})+(?!\d))/g, ",")).join(" · ");
    if (d.points && d.points.kind === "current" && k.length === 2) {
      const h = d.points.half_life_days * 86400000;
      const v = k[1] * Math.pow(2, -24) * Math.pow(2, -(Date.parse(at) - k[0] * h) / h);
      return Number.isFinite(v) ? v.toLocaleString(undefined, { minimumFractionDigits: 2, maximumFractionDigits: 2 }) + " points" : "";
    }
    return k.map((v, i) => Podium.formatKey(v, d.keys[i])).join(" · ");
  }

  function ago(iso) {
    const t = Date.parse(iso);
    const s = Math.max(0, Math.round((Date.now() - t) / 1000));
    if (s < 60) return "just now";
    if (s < 3600) return Math.floor(s / 60) + "m ago";
    if (s < 86400) return Math.floor(s / 3600) + "h ago";
    return new Date(t).toLocaleDateString();
  }

  function line(ev) {
    // Names (and titles) are isolated: the line is one string, so a name's
    // bidi controls would otherwise reorder the rest of it.
    const who = ev.name || ev.player ? Podium.isolate(ev.name || ev.player) : "";
    return (onBoard ? "" : Podium.isolate(ev.title || ev.board) + ": ") + what(ev, who);
  }

  function what(ev, who) {
    switch (ev.kind) {
      case "personal_best":
        return who + " set a personal best: " + keys(ev.keys, ev.board, ev.at) + (ev.old ? " (was " + keys(ev.old, ev.board, ev.at) + ")" : " (first entry)");
      case "new_leader":
        return who + " took #1 with " + keys(ev.keys, ev.board, ev.at) +
          (ev.previous_player ? " from " + Podium.isolate(ev.previous_name || ev.previous_player) + " (" + keys(ev.old, ev.board, ev.at) + ")" : "");
      case "tournament_settled":
        return "Tournament settled" + (who ? ": " + who + " won" : "");
      case "league_settled":
        return "League settled: " + ((ev.data && ev.data.promoted) || 0) + " promoted, " + ((ev.data && ev.data.relegated) || 0) + " relegated";
    }
    return ev.kind;
  }

  function render() {
    list.textContent = "";
    for (const ev of events) {
      const li = document.createElement("li");
      li.dataset.kind = ev.kind;
      li.dataset.id = ev.id;
      const text = document.createElement("span");
      text.textContent = line(ev);
      const when = document.createElement("time");
      when.dateTime = ev.at;
      when.textContent = ago(ev.at);
      when.title = (typeof PodiumPage !== "undefined" ? PodiumPage.formatTime(ev.at) : ev.at) + " · period " + ev.period;
      li.append(text, " ", when);
      list.append(li);
    }
    section.hidden = events.length === 0;
  }

  // The stream is closed when the page is hidden (left, or kept in the
  // back/forward cache), so that pages left behind hold no connection
  // (a browser has 6 per server), and opened again when it comes back.
  let es = null;
  function open() {
    es = new EventSource("/v1/feed/stream?" + (onBoard ? "board=" + encodeURIComponent(board) + "&" : "") + "limit=" + limit);
    es.addEventListener("snapshot", (e) => {
      events = JSON.parse(e.data).events;
      render();
    });
    es.addEventListener("delta", (e) => {
      events = JSON.parse(e.data).events.concat(events).slice(0, limit);
      render();
    });
    es.addEventListener("error", (e) => {
      if (e.data) { // the server ended the stream (the board went private or was deleted)
        es.close();
        section.hidden = true;
      }
    });
  }
  open();
  addEventListener("pagehide", () => es.close());
  addEventListener("pageshow", (e) => { if (e.persisted) open(); });
  setInterval(render, 30000); // keep "ago" current
})();
