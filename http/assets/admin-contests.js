// Console tab "Contests": CTF contests (list, create from a form or as
// JSON, reveal, follow on their live pages, manage one: admin-ctf.js) and
// tournaments (list with their state, settle, follow). A tournament is a board with a
// "tournament" setting: "New tournament" on the Boards tab creates one.
(function () {
  "use strict";
  const A = window.PodiumAdmin;
  const { el, api, enc, field } = A;

  let contestsBox, contestsError, tourBox, tourError, managerBox, manager = null, managed = "";

  function init(panel) {
    contestsError = A.errorBox();
    contestsBox = el("div", { class: "list" });
    tourError = A.errorBox();
    tourBox = el("div", { class: "list" });
    managerBox = el("div", { id: "contest-manager" });
    panel.append(
      el("h2", {}, "Contests"),
      el("div", { class: "row toolbar" }, el("button", { type: "button", class: "secondary", onclick: show }, "Refresh")),
      contestsError, contestsBox, managerBox, contestForm(),
      el("h2", {}, "Tournaments"),
      el("p", { class: "help" }, "A tournament is a board with tournament settings: create one with \u201cNew tournament\u201d on the Boards tab."),
      tourError, tourBox);
  }

  function show() {
    loadContests();
    loadTournaments();
  }

  // localInput turns a datetime-local value (the viewer's zone) into
  // RFC 3339 UTC; empty stays empty.
  function localInput(v) {
    if (!v) return "";
    const d = new Date(v);
    return Number.isFinite(d.getTime()) ? d.toISOString() : v;
  }

  function contestForm() {
    const err = A.errorBox();
    const id = el("input", { type: "text", required: true, autocomplete: "off", spellcheck: false, id: "contest-id" });
    const title = el("input", { type: "text", id: "contest-title" });
    const start = el("input", { type: "datetime-local", id: "contest-start", required: true });
    const end = el("input", { type: "datetime-local", id: "contest-end", required: true });
    const freeze = el("input", { type: "datetime-local", id: "contest-freeze" });
    const fb = el("input", { type: "text", id: "contest-first-blood", placeholder: "10, 5, 3", autocomplete: "off" });
    const rule = el("select", { id: "contest-blood-rule" },
      el("option", { value: "auto" }, "auto: GZCTF's on gzctf challenges, percent on the others"),
      el("option", { value: "percent" }, "percent: exact, rounded half to even"),
      el("option", { value: "gzctf" }, "gzctf: GZCTF's float32 rule"));
    const pub = el("input", { type: "checkbox", id: "contest-public" });
    const raw = el("textarea", { rows: 6, class: "code", spellcheck: false, id: "contest-json",
      placeholder: '{"title": "Finals", "start": "2026-12-01T11:00:00Z", "end": "2026-12-01T13:00:00Z", "public": true}' });
    const save = el("button", { type: "submit", id: "contest-save" }, "Create or replace contest");
    const form = el("form", { class: "stack card", novalidate: true, id: "contest-form" },
      el("h3", {}, "New contest"),
      field("Contest id", id, "Like a board id; an existing id is replaced."),
      field("Title", title),
      el("div", { class: "row" }, field("Start (your time zone)", start), field("End", end), field("Freeze (optional)", freeze)),
      field("First-blood bonus, percent of the 1st, 2nd, 3rd solve (optional)", fb),
      field("First-blood rule", rule),
      el("label", {}, pub, " Public"),
      el("details", {}, el("summary", {}, "Or the whole body as JSON"),
        field("Body (JSON; used instead of the fields above when not empty)", raw)),
      err, el("div", {}, save));
    form.addEventListener("submit", async (ev) => {
      ev.preventDefault();
      A.clearError(err);
      const cid = id.value.trim();
      if (!cid) { A.showError(err, "The contest needs an id."); id.focus(); return; }
      let body = raw.value.trim();
      if (body) {
        try { JSON.parse(body); } catch (e) { A.showError(err, "Body: not JSON (" + e.message + ")"); raw.focus(); return; }
      } else {
        const b = { title: title.value, start: localInput(start.value), end: localInput(end.value), public: pub.checked };
        if (freeze.value) b.freeze = localInput(freeze.value);
        if (fb.value.trim()) b.first_blood = fb.value.split(",").map((s) => Number(s.trim()));
        b.blood_rule = rule.value;
        body = JSON.stringify(b);
      }
      await A.busy(save, async () => {
        try {
          const c = await api("PUT", "/v1/contests/" + enc(cid), body);
          A.notify("Contest " + c.id + " saved.");
          form.reset();
          loadContests();
        } catch (e) {
          A.showError(err, e);
          err.focus();
        }
      });
    });
    return form;
  }

  async function loadContests() {
    A.clearError(contestsError);
    contestsBox.textContent = "";
    let data;
    try {
      data = await api("GET", "/v1/contests");
    } catch (e) {
      if (e.status === 404) {
        contestsBox.append(el("p", { class: "empty" }, "Contests are not enabled on this server."));
        return;
      }
      A.showError(contestsError, e);
      return;
    }
    const list = data.contests || [];
    if (!list.length) {
      contestsBox.append(el("p", { class: "empty" }, "No contests yet."));
      return;
    }
    const t = A.table("Contests", ["Contest", "Title", "State", "Start", "End", "Freeze", "Actions"]);
    t.table.id = "contests-table";
    for (const c of list) {
      // The reveal button follows the state: the final reveal once the
      // contest ended frozen, a re-freeze after an early reveal; the rest
      // (an early reveal) is in the contest's manager.
      const running = c.state === "running" || c.state === "frozen" || c.state === "upcoming";
      t.tbody.append(el("tr", { dataset: { contest: c.id } },
        el("th", { scope: "row" }, el("a", { href: "/contests/" + enc(c.id) }, c.id)),
        el("td", {}, c.title || ""),
        el("td", {}, el("span", { class: "badge", dataset: { state: c.state } }, c.state)),
        el("td", {}, A.fmtTime(c.start)),
        el("td", {}, A.fmtTime(c.end)),
        el("td", {}, c.freeze ? A.fmtTime(c.freeze) + (c.revealed ? " (revealed)" : "") : "none"),
        el("td", { class: "actions" },
          el("button", { type: "button", class: "small", "aria-label": "Manage " + c.id, onclick: () => manage(c.id) }, "Manage"),
          el("a", { class: "button small secondary", href: "/contests/" + enc(c.id) }, "Follow"),
          c.state === "ended" ? el("button", { type: "button", class: "small", "aria-label": "Unfreeze " + c.id, onclick: () => unfreeze(c) }, "Reveal") : null,
          c.revealed && running ? el("button", { type: "button", class: "small secondary", "aria-label": "Re-freeze " + c.id, onclick: () => refreeze(c) }, "Re-freeze") : null)));
    }
    contestsBox.append(t.wrap);
    if (managed && manager && managerBox.firstChild) manager.reload();
  }

  // manage opens the contest manager (admin-ctf.js) for one contest.
  function manage(id) {
    if (manager) manager.close();
    managed = id;
    manager = A.ctf.open(managerBox, id, loadContests);
    managerBox.scrollIntoView({ block: "start" });
  }

  async function unfreeze(c) {
    if (!(await A.confirm("Reveal the final standings of " + c.id + "? The public views become the live ones.", "Reveal"))) return;
    try {
      await api("POST", "/v1/contests/" + enc(c.id) + "/unfreeze");
      A.notify("Contest " + c.id + " revealed.");
      loadContests();
    } catch (e) {
      A.showError(contestsError, e);
    }
  }

  async function refreeze(c) {
    if (!(await A.confirm("Freeze the public standings of " + c.id + " again?", "Re-freeze"))) return;
    try {
      await api("POST", "/v1/contests/" + enc(c.id) + "/refreeze");
      A.notify("Contest " + c.id + " frozen again.");
      loadContests();
    } catch (e) {
      A.showError(contestsError, e);
    }
  }

  async function loadTournaments() {
    A.clearError(tourError);
    tourBox.textContent = "";
    let data;
    try {
      data = await api("GET", "/v1/tournaments");
    } catch (e) {
      A.showError(tourError, e);
      return;
    }
    const list = data.tournaments || [];
    if (!list.length) {
      tourBox.append(el("p", { class: "empty" }, "No tournaments yet."));
      return;
    }
    const t = A.table("Tournaments", ["Board", "Title", "State", "Start", "End", "Entries", "Settlement", "Actions"]);
    t.table.id = "tournaments-table";
    for (const x of list) {
      const state = el("td", {}, "\u2026"), entries = el("td", { class: "num" }, ""), settled = el("td", {}, "");
      t.tbody.append(el("tr", { dataset: { board: x.board } },
        el("th", { scope: "row" }, el("a", { href: "/boards/" + enc(x.board) }, x.board)),
        el("td", {}, x.title || ""), state,
        el("td", {}, A.fmtTime(x.tournament.start)),
        el("td", {}, A.fmtTime(x.tournament.end)),
        entries, settled,
        el("td", { class: "actions" },
          el("a", { class: "button small secondary", href: "/boards/" + enc(x.board) }, "Follow"),
          el("button", { type: "button", class: "small", "aria-label": "Settle " + x.board, onclick: () => settle(x) }, "Settle"))));
      api("GET", "/v1/tournaments/" + enc(x.board)).then((s) => {
        state.textContent = s.state;
        entries.textContent = String(s.entries);
        settled.textContent = s.settlement ? "run " + s.settlement.runs + ", " + s.settlement.paid + " points paid" : "not yet";
      }, (e) => { state.textContent = "?"; state.title = String(e); });
    }
    tourBox.append(t.wrap);
  }

  async function settle(x) {
    if (!(await A.confirm("Settle " + x.board + " now? Each run pays only the difference to earlier runs.", "Settle"))) return;
    try {
      const r = await api("POST", "/v1/tournaments/" + enc(x.board) + "/settle", {});
      A.notify("Settled " + x.board + ": run " + r.run + ", " + r.players + " players, " + r.paid + " points paid, " + r.changed + " payouts changed.");
      loadTournaments();
    } catch (e) {
      A.showError(tourError, e);
    }
  }

  A.tab({ id: "contests", title: "Contests & tournaments", init, show });
})();
