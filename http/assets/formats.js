// What a board's format adds to its live page (/boards/{board}), read
// from GET /v1/boards/{board}: a tournament's window, state,
// participants and payouts (GET /v1/tournaments/{board}[/payouts]); a
// points board's decay and its ladder's tournaments; what an aggregate
// board sums; how many results a best_k board keeps.
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
  const section = $("format");
  if (!board || !section || typeof fetch === "undefined") return;

  // A tournament's state in the API's words (docs/API.md: upcoming, open,
  // ended, settled), as the console shows it too; "ended" says what it
  // waits for.
  const STATE = { upcoming: "upcoming", open: "open", ended: "ended (settling)", settled: "settled" };

  function getJSON(path) {
    return fetch(path, { headers: { Accept: "application/json" } }).then((res) =>
      res.json().then((body) => {
        if (!res.ok) throw new Error((body.error && body.error.message) || "HTTP " + res.status);
        return body;
      }));
  }

  function link(id, text) {
    const a = el("a", "", text || id);
    a.href = "/boards/" + encodeURIComponent(id);
    return a;
  }

  // when: a time in the viewer's zone, with the zone (page.js).
  const when = (iso) => PodiumPage.timeEl(iso);

  function fact(dl, name, value, key) {
    const div = el("div", "pair");
    const dd = el("dd");
    if (key) dd.dataset.fact = key;
    if (value instanceof Node) dd.append(value); else dd.textContent = value;
    div.append(el("dt", "", name), dd);
    dl.append(div);
    return dd;
  }

  function keyText(def, vals) {
    return (vals || []).map((v, i) => Podium.formatKey(v, def.keys[i])).join(" / ");
  }

  // --- tournaments ---

  let status = null;     // the last GET /v1/tournaments/{board}
  let payoutsRun = -1;   // the settlement run whose payouts are shown

  function tournament(def) {
    const t = def.tournament;
    $("format-title").textContent = "Tournament";
    const dl = el("dl", "facts");
    dl.id = "tournament";
    fact(dl, "State", el("strong", "state", "…"), "state");
    fact(dl, "Starts", when(t.start), "start");
    fact(dl, "Ends", when(t.end), "end");
    fact(dl, "", "", "countdown").parentElement.classList.add("countdown");
    fact(dl, "Joining", t.join_required ? "players join first" : "open: a first score joins", "join");
    fact(dl, "Participants", "–", "participants");
    fact(dl, "Pays", "rank r earns " + t.weight + " / r points" + (t.ladder ? " on ladder " + t.ladder : ""), "pays");
    section.append(dl);
    const pay = el("section", "payouts");
    pay.id = "payouts";
    pay.hidden = true;
    pay.setAttribute("aria-labelledby", "payouts-title");
    const h = el("h3", "", "Payouts");
    h.id = "payouts-title";
    const wrap = el("div", "table-wrap");
    const table = el("table", "board");
    const head = el("tr");
    for (const [label, cls] of [["#", "col-rank"], ["Player", "col-player"], ["Points", "num"]]) {
      const th = el("th", cls, label);
      th.scope = "col";
      head.append(th);
    }
    const thead = el("thead");
    thead.append(head);
    const tbody = el("tbody");
    tbody.id = "payout-rows";
    table.append(thead, tbody);
    wrap.append(table);
    const boards = el("p", "points-boards");
    boards.id = "points-boards";
    pay.append(h, wrap, boards);
    section.append(pay);
    section.hidden = false;
    const poll = () => {
      getJSON("/v1/tournaments/" + encodeURIComponent(board)).then((st) => {
        status = st;
        paint(def);
      }).catch(() => {}).finally(() => {
        // Waiting for the settlement (it runs within seconds of the end):
        // look again soon; otherwise once in a while.
        setTimeout(poll, status && status.state === "ended" ? 2000 : 15000);
      });
    };
    countdown(def);
    poll();
    setInterval(() => countdown(def), 1000);
  }

  // countdown follows the server's state (the browser's clock may be off)
  // and counts down to the next edge of the window by the browser's clock.
  function countdown(def) {
    const dd = section.querySelector('[data-fact="countdown"]');
    if (!dd) return;
    const now = Date.now();
    const start = Date.parse(def.tournament.start), end = Date.parse(def.tournament.end);
    const phase = status ? status.state : now < start ? "upcoming" : now < end ? "open" : "ended";
    let name, text;
    if (phase === "upcoming") { name = "Starts in"; text = Podium.formatCountdown(start - now); }
    else if (phase === "open") { name = "Ends in"; text = Podium.formatCountdown(end - now); }
    else { name = "Ranking"; text = phase === "settled" ? "final" : "final, points being paid…"; }
    dd.previousElementSibling.textContent = name;
    if (dd.textContent !== text) dd.textContent = text;
  }

  function paint(def) {
    const t = def.tournament;
    const st = status;
    const state = section.querySelector('[data-fact="state"] .state');
    state.textContent = STATE[st.state] || st.state;
    state.dataset.state = st.state;
    let p;
    if (t.max_participants > 0) p = st.participants + " / " + t.max_participants;
    else if (t.join_required) p = st.participants + " joined";
    else p = String(st.entries) + " ranked";
    section.querySelector('[data-fact="participants"]').textContent = p;
    countdown(def);
    const run = st.settlement ? st.settlement.runs : 0;
    if (st.state !== "settled" || run === payoutsRun) return;
    getJSON("/v1/tournaments/" + encodeURIComponent(board) + "/payouts?limit=100").then((body) => {
      payoutsRun = run;
      const rows = $("payout-rows");
      rows.textContent = "";
      for (const po of body.payouts || []) {
        const tr = el("tr");
        tr.dataset.player = po.player;
        tr.dataset.rank = po.rank === null ? "" : String(po.rank);
        const rank = el("td", "col-rank");
        rank.append(el("span", "rank", po.rank === null ? "–" : String(po.rank)));
        const who = el("td", "col-player");
        const name = Podium.bdi(po.player); // the name replaces the id below
        name.className = "payee";
        who.append(name);
        tr.append(rank, who, el("td", "num", Podium.formatKey(po.points, "points")));
        rows.append(tr);
      }
      names(body.payouts || []);
      const more = body.total > (body.payouts || []).length ? " (first " + body.payouts.length + " of " + body.total + ")" : "";
      const pb = $("points-boards");
      pb.textContent = "";
      if ((st.points_boards || []).length) {
        pb.append("Credited to ");
        st.points_boards.forEach((id, i) => {
          if (i) pb.append(", ");
          const a = link(id);
          pb.append(a);
          // Named by their titles, as the index names them.
          getJSON("/v1/boards/" + encodeURIComponent(id)).then((b) => { if (b.title) a.textContent = b.title; }).catch(() => {});
        });
        pb.append("." + more);
      } else {
        pb.textContent = more ? more.trim() : "";
      }
      $("payouts").hidden = false;
    }).catch(() => {});
  }

  // names shows the payouts' players by their names, as the ranking above
  // does: one read of the board's entries for those players
  // (GET /v1/boards/{board}/entries?players=); a player no longer ranked
  // keeps their id.
  function names(payouts) {
    if (!payouts.length) return;
    const q = payouts.map((p) => p.player).join(",");
    getJSON("/v1/boards/" + encodeURIComponent(board) + "/entries?players=" + encodeURIComponent(q)).then((page) => {
      for (const e of page.entries || []) {
        const tr = $("payout-rows").querySelector('tr[data-player="' + CSS.escape(e.player) + '"]');
        if (!tr || !e.name || e.name === e.player) continue;
        const bdi = tr.querySelector(".payee");
        bdi.textContent = e.name;
        bdi.title = Podium.isolate(e.player);
      }
    }).catch(() => {}); // the ids stay
  }

  // --- points boards ---

  const KIND = {
    total: "every point the ladder's tournaments paid",
    category: "the points paid by the ladder's tournaments of one category",
    current: "the ladder's points, decaying with time",
    best: "each player's best placement in a series",
  };

  function pointsBoard(def) {
    const p = def.points;
    $("format-title").textContent = "Points";
    const text = el("p", "", "This board holds " + (KIND[p.kind] || p.kind) + " (ladder " + p.ladder +
      (p.category ? ", category " + p.category : "") + (p.series ? ", series " + p.series : "") + ")." +
      (p.kind === "current" ? " Points halve every " + p.half_life_days + " days; the page shows them as they stood at its last update (the ranking keys, in the JSON, are exact)." : ""));
    text.id = "format-text";
    section.append(text);
    section.hidden = false;
    // The ladder's tournaments: one list read, filtered here.
    getJSON("/v1/tournaments").then((body) => {
      const list = (body.tournaments || []).filter((x) => x.tournament.ladder === p.ladder &&
        (p.kind !== "category" || x.tournament.category === p.category) &&
        (p.kind !== "best" || x.tournament.series === p.series));
      if (!list.length) return;
      list.sort((a, b) => Date.parse(b.tournament.end) - Date.parse(a.tournament.end));
      const h = el("h3", "", "Tournaments of this ladder");
      const ul = el("ul", "ladder");
      ul.id = "ladder";
      for (const x of list.slice(0, 20)) {
        const li = el("li");
        li.append(link(x.board, x.title || x.board), " ", el("span", "minor-text", "ends "), when(x.tournament.end));
        ul.append(li);
      }
      section.append(h, ul);
    }).catch(() => {});
  }

  // --- aggregate and best_k boards ---

  function aggregate(def) {
    const a = def.aggregate;
    $("format-title").textContent = "How this board is computed";
    const p = el("p");
    p.id = "format-text";
    if (a.kind === "best_k_sum") {
      p.append("Each player's entry is the sum of their best results on each source, a missing one counting as a fixed value:");
    } else {
      p.append("Each player's entry is the sum of their entries on:");
    }
    const ul = el("ul", "sources");
    ul.id = "sources";
    for (const s of a.sources) {
      const li = el("li");
      if (a.kind === "best_k_sum") {
        li.append("best " + s.k + " on ", link(s.board), " (a missing one counts " + keyText(def, s.fill) + ")");
      } else {
        li.append(link(s.board));
      }
      ul.append(li);
    }
    section.append(p, ul);
    if (a.require_all) section.append(el("p", "", "Only players with an entry on every source appear."));
    section.hidden = false;
  }

  function bestK(def) {
    $("format-title").textContent = "Best results";
    const p = el("p", "", "Each player keeps their best " + def.keep + " results; the ranking uses the best one.");
    p.id = "format-text";
    section.append(p);
    section.hidden = false;
  }

  if (typeof Podium === "undefined" || typeof PodiumPage === "undefined") return;
  getJSON("/v1/boards/" + encodeURIComponent(board)).then((def) => {
    if (def.tournament) tournament(def);
    else if (def.points) pointsBoard(def);
    else if (def.aggregate) aggregate(def);
    else if (def.mode === "best_k" && def.keep) bestK(def);
  }).catch(() => {}); // board.js reports a missing board
})();
