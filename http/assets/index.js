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

  const EVERY = { none: "never", day: "daily", week: "weekly (Monday)", month: "monthly" };

  function pair(dl, name, value) {
    const div = el("div", "pair");
    const dd = el("dd");
    if (value instanceof Node) dd.append(value); else dd.textContent = value;
    div.append(el("dt", "", name), dd);
    dl.append(div);
  }

  function resetText(b) {
    const every = (b.reset && b.reset.every) || "none";
    if (every === "none") return "never";
    let s = EVERY[every] || every;
    if (b.reset.tz) s += " (" + b.reset.tz + ")";
    if (b.next_reset && typeof Podium !== "undefined") {
      const left = Date.parse(b.next_reset) - Date.now();
      if (left > 0) s += ", next in " + Podium.formatCountdown(left);
    }
    return s;
  }

  // boardKind names a board's format for its badge; a tournament's state
  // comes from its window and the clock (the settlement shows on its page).
  function boardKind(b) {
    if (b.tournament) {
      const now = Date.now();
      const state = now < Date.parse(b.tournament.start) ? "upcoming" : now < Date.parse(b.tournament.end) ? "open" : "ended";
      return { kind: "tournament", state, text: "tournament \u00b7 " + (state === "open" ? "running" : state) };
    }
    if (b.aggregate) return { kind: "aggregate", text: "aggregate" };
    if (b.points) return { kind: "points", text: b.points.kind === "current" ? "points \u00b7 decaying" : "points" };
    if (b.mode === "best_k") return { kind: "best_k", text: "best " + b.keep };
    return null;
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
      pair(dl, "id", el("code", "", c.id));
      pair(dl, "starts", new Date(c.start).toLocaleString());
      pair(dl, "ends", new Date(c.end).toLocaleString());
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
      pair(dl, "id", el("code", "", b.id));
      pair(dl, "keys", (b.keys || []).map((k) => Podium.keyLabel(k) + (k.order === "asc" ? " (lower wins)" : " (higher wins)")).join(", "));
      pair(dl, "mode", b.mode);
      pair(dl, "resets", resetText(b));
      pair(dl, "period", b.period);
      if (b.tournament) pair(dl, "window", new Date(b.tournament.start).toLocaleString() + " \u2013 " + new Date(b.tournament.end).toLocaleString());
      if (b.aggregate) pair(dl, "sums", b.aggregate.sources.map((s) => s.board).join(" + "));
      li.append(h, dl);
      list.append(li);
    }
    boards.slice(0, MAX_LEADERS).forEach(leader);
  }

  // MAX_LEADERS bounds the top-1 reads the list makes (one per board).
  const MAX_LEADERS = 50;

  // leader adds a board's leader and entry count (the current period's
  // first entry, from GET /v1/boards/{board}/entries?limit=1) to its item.
  function leader(b) {
    fetch("/v1/boards/" + encodeURIComponent(b.id) + "/entries?limit=1", { headers: { Accept: "application/json" } })
      .then((res) => (res.ok ? res.json() : null))
      .then((page) => {
        const li = document.querySelector('#boards li[data-board="' + CSS.escape(b.id) + '"]');
        if (!page || !li) return;
        const dl = li.querySelector("dl");
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
        const item = (name, value) => {
          const div = el("div", "pair");
          const dd = el("dd");
          dd.append(value);
          div.append(el("dt", "", name), dd);
          return div;
        };
        const after = dl.firstElementChild ? dl.firstElementChild.nextSibling : null; // after the id
        dl.insertBefore(item("leader", who), after);
        dl.insertBefore(item("entries", count), after);
      })
      .catch(() => {}); // the list itself says whether the server answers
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

  load();
  loadContests();
  setInterval(() => { load(); loadContests(); }, 60000);
})();
