// The board list, /: the public boards (GET /v1/boards), each linking to
// its live page, with tournaments, points and aggregate boards marked;
// and the contests (GET /v1/contests), each linking to /contests/{id}.
(function () {
  "use strict";

  const $ = (id) => document.getElementById(id);
  const el = (tag, cls, text) => {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  };

  const EVERY = { day: "daily", week: "weekly, on Monday", month: "monthly" };

  // A card says what a player wants to know of a board: its title and
  // kind, who leads with what, how many are ranked, how it ranks, and when
  // it resets (or a tournament ends); ids and settings are for the console.
  function pair(dl, name, value, fact) {
    const div = el("div", "pair");
    const dd = el("dd");
    if (fact) dd.dataset.fact = fact;
    if (value instanceof Node) dd.append(value); else dd.textContent = value;
    div.append(el("dt", "", name), dd);
    dl.append(div);
    return dd;
  }

  // countdown is "in 3h 12m" until t, kept current by tick().
  function countdown(t) {
    const s = el("span", "countdown");
    s.dataset.until = String(Date.parse(t));
    paintCountdown(s);
    return s;
  }
  function paintCountdown(s) {
    const left = Number(s.dataset.until) - Date.now();
    s.textContent = left > 0 ? "in " + Podium.formatCountdown(left) : "now";
  }
  setInterval(() => document.querySelectorAll(".countdown").forEach(paintCountdown), 1000);

  // when: "in 3h 12m (Dec 7, 14:05 CET)".
  function when(t) {
    const f = document.createDocumentFragment();
    f.append(countdown(t), " (", PodiumPage.timeEl(t), ")");
    return f;
  }

  function resets(b) {
    const every = (b.reset && b.reset.every) || "none";
    if (every === "none") return "never";
    const f = document.createDocumentFragment();
    f.append((EVERY[every] || every) + (b.reset.tz ? " (" + b.reset.tz + ")" : ""));
    if (b.next_reset) f.append(", next ", countdown(b.next_reset));
    return f;
  }

  // tournamentState is its state in the API's words (docs/API.md:
  // upcoming, open, ended), from its window and the clock (the settlement
  // shows on its page).
  function tournamentState(t) {
    const now = Date.now();
    return now < Date.parse(t.start) ? "upcoming" : now < Date.parse(t.end) ? "open" : "ended";
  }

  // boardKind names a board's format for its badge.
  function boardKind(b) {
    if (b.tournament) {
      const state = tournamentState(b.tournament);
      return { kind: "tournament", state, text: "tournament \u00b7 " + state };
    }
    if (b.aggregate) return { kind: "aggregate", text: "aggregate" };
    if (b.points) return { kind: "points", text: b.points.kind === "current" ? "points \u00b7 decaying" : "points" };
    if (b.mode === "best_k") return { kind: "best_k", text: "best " + b.keep };
    return null;
  }

  // ranking says how a board ranks, shortly: "Time (lower wins), then 3BV".
  function ranking(b) {
    if (b.points) return b.points.kind === "current" ? "points, decaying (higher wins)" : "points (higher wins)";
    const keys = b.keys || [];
    if (!keys.length) return "";
    const first = Podium.keyLabel(keys[0]) + (keys[0].order === "asc" ? " (lower wins)" : " (higher wins)");
    return [first].concat(keys.slice(1).map(Podium.keyLabel)).join(", then ");
  }

  const CONTEST = { upcoming: "upcoming", running: "running", frozen: "running (frozen)", ended: "ended", final: "final" };

  function renderContests(contests) {
    const list = $("contests");
    list.textContent = "";
    for (const c of contests) {
      const li = el("li");
      li.dataset.contest = c.id;
      const h = el("h2");
      const a = el("a", "", c.title || c.id);
      a.href = "/contests/" + encodeURIComponent(c.id);
      const badge = el("span", "badge", CONTEST[c.state] || c.state);
      badge.dataset.state = c.state;
      h.append(a, badge);
      const dl = el("dl");
      // The server's state says which edge is next (the browser's clock may be off).
      if (c.state === "upcoming") pair(dl, "Starts", when(c.start), "when");
      else if (c.state === "running" || c.state === "frozen") pair(dl, "Ends", when(c.end), "when");
      else pair(dl, "Ended", PodiumPage.timeEl(c.end), "when");
      li.append(h, dl);
      list.append(li);
    }
    $("contests-section").hidden = contests.length === 0;
  }

  function loadContests() {
    fetch("/v1/contests", { headers: { Accept: "application/json" } })
      .then((res) => (res.ok ? res.json() : { contests: [] }))
      .then((body) => renderContests(body.contests || []))
      .catch(() => {}); // the boards say whether the server answers
  }

  // render shows boards: in place of the list, or after it (append).
  function render(boards, append) {
    const list = $("boards");
    if (!append) list.textContent = "";
    for (const b of boards) {
      const li = el("li");
      li.dataset.board = b.id;
      const h = el("h2");
      const a = el("a", "", b.title || b.id);
      a.href = "/boards/" + encodeURIComponent(b.id);
      h.append(a);
      const kind = boardKind(b);
      if (kind) {
        const badge = el("span", "badge", kind.text);
        badge.dataset.kind = kind.kind;
        if (kind.state) badge.dataset.state = kind.state;
        h.append(badge);
      }
      const dl = el("dl");
      pair(dl, "Leader", el("span", "leader", "\u2026"), "leader-slot");
      pair(dl, "Entries", "\u2026", "entries-slot");
      if (b.tournament) {
        const state = tournamentState(b.tournament);
        if (state === "upcoming") pair(dl, "Starts", when(b.tournament.start), "when");
        else if (state === "open") pair(dl, "Ends", when(b.tournament.end), "when");
        else pair(dl, "Ended", PodiumPage.timeEl(b.tournament.end), "when");
      } else {
        pair(dl, "Resets", resets(b), "resets");
      }
      if (b.aggregate) pair(dl, "Sums", b.aggregate.sources.map((s) => s.board).join(" + "), "sums");
      const rule = el("p", "ranking", "Ranked by " + ranking(b));
      li.append(h, dl, rule);
      list.append(li);
    }
    boards.slice(0, MAX_LEADERS).forEach(leader);
    for (const b of boards.slice(MAX_LEADERS)) { // not looked up: no placeholders
      const li = list.querySelector('li[data-board="' + CSS.escape(b.id) + '"]');
      if (li) li.querySelectorAll('[data-fact$="-slot"]').forEach((dd) => dd.parentElement.remove());
    }
  }

  // MAX_LEADERS bounds the top-1 reads the list makes (one per board).
  const MAX_LEADERS = 50;

  // leader fills in a board's leader and entry count (the current
  // period's first entry, from GET /v1/boards/{board}/entries?limit=1).
  function leader(b) {
    fetch("/v1/boards/" + encodeURIComponent(b.id) + "/entries?limit=1", { headers: { Accept: "application/json" } })
      .then((res) => (res.ok ? res.json() : null))
      .then((page) => {
        const li = document.querySelector('#boards li[data-board="' + CSS.escape(b.id) + '"]');
        if (!page || !li) return;
        const top = (page.entries || [])[0];
        const who = el("span", "leader");
        who.dataset.fact = "leader";
        if (top) {
          const strong = el("strong");
          strong.append(Podium.bdi(top.name || top.player));
          who.append(strong, " \u00b7 " +
            (top.value !== undefined ? top.value.toFixed(2) + " pts" :
              top.keys.map((v, i) => Podium.formatKey(v, (b.keys || [])[i])).join(" / ")));
        } else {
          who.textContent = "nobody yet";
        }
        const count = el("span", "", (page.total || 0).toLocaleString());
        count.dataset.fact = "entries";
        li.querySelector('[data-fact="leader-slot"]').replaceChildren(who);
        li.querySelector('[data-fact="entries-slot"]').replaceChildren(count);
      })
      .catch(() => {}); // the list itself says whether the server answers
    if (!b.tournament) return;
    // The clock tells upcoming, open and ended; the server whether an
    // ended tournament is settled (GET /v1/tournaments/{board}).
    fetch("/v1/tournaments/" + encodeURIComponent(b.id), { headers: { Accept: "application/json" } })
      .then((res) => (res.ok ? res.json() : null))
      .then((st) => {
        const badge = document.querySelector('#boards li[data-board="' + CSS.escape(b.id) + '"] .badge');
        if (!st || !badge) return;
        badge.textContent = "tournament \u00b7 " + st.state;
        badge.dataset.state = st.state;
      })
      .catch(() => {});
  }

  // The list comes a page at a time (GET /v1/boards?cursor=&limit=):
  // "More boards" appends the next page, and the refresh reloads as many
  // pages as are shown.
  const LIST_PAGE = 100;
  let pages = 1;

  function fetchPage(cursor) {
    const q = "?limit=" + LIST_PAGE + (cursor ? "&cursor=" + encodeURIComponent(cursor) : "");
    return fetch("/v1/boards" + q, { headers: { Accept: "application/json" } })
      .then((res) => res.json().then((body) => {
        if (!res.ok) throw new Error((body.error && body.error.message) || "HTTP " + res.status);
        return body;
      }));
  }

  // fetchPages reads n pages from cursor, and on while they hold no public
  // board (a page may be empty and still go on; a few more at most).
  async function fetchPages(cursor, n) {
    let boards = [];
    for (let i = 0; i < n || (!boards.length && cursor && i < n + 10); i++) {
      const body = await fetchPage(cursor);
      boards = boards.concat((body.boards || []).filter((b) => b.public));
      cursor = body.next_cursor;
      if (!cursor) break;
    }
    return { boards, next: cursor || null };
  }

  function showMore(next) {
    $("boards-more-row").hidden = !next;
    $("boards-more").onclick = next ? () => {
      $("boards-more").disabled = true;
      fetchPages(next, 1)
        .then(({ boards, next }) => {
          pages++;
          render(boards, true);
          showMore(next);
        })
        .catch((err) => {
          $("notice").classList.add("bad");
          $("notice").textContent = "Could not load more boards: " + err.message;
          $("notice").hidden = false;
        })
        .finally(() => { $("boards-more").disabled = false; });
    } : null;
  }

  function load() {
    fetchPages("", pages)
      .then(({ boards, next }) => {
        $("loading").hidden = true;
        $("notice").hidden = boards.length > 0 || next !== null;
        if (!boards.length && next === null) {
          $("notice").classList.remove("bad");
          $("notice").textContent = "No public boards yet. Create one with PUT /v1/boards/{board} and \"public\": true, or start the server with --demo.";
        }
        render(boards, false);
        showMore(next);
      })
      .catch((err) => {
        $("loading").hidden = true;
        $("notice").classList.add("bad");
        $("notice").textContent = "Could not load the boards: " + err.message;
        $("notice").hidden = false;
      });
  }

  if (typeof Podium === "undefined" || typeof PodiumPage === "undefined") {
    $("loading").hidden = true;
    $("notice").textContent = "The page's scripts did not load.";
    $("notice").hidden = false;
    return;
  }
  load();
  loadContests();
  setInterval(() => { load(); loadContests(); }, 60000);
})();
