// Console tab "Leagues": each league's tiers in the current period (members,
// cohorts, promotion and relegation counts), its settlement runs, and a
// settle button. A league is a board with a "league" setting: "New league"
// on the Boards tab creates one (docs/API.md, "Leagues").
(function () {
  "use strict";
  const A = window.PodiumAdmin;
  const { el, api, enc } = A;

  let box, error;

  function init(panel) {
    error = A.errorBox();
    box = el("div", { class: "list", id: "leagues-list" });
    panel.append(
      el("h2", {}, "Leagues"),
      el("p", { class: "help" }, "A league is a board with league settings: players are placed in cohorts of their tier each period and promoted or relegated at its end."),
      el("div", { class: "row toolbar" }, el("button", { type: "button", class: "secondary", onclick: show }, "Refresh")),
      error, box);
  }

  async function show() {
    A.clearError(error);
    box.textContent = "";
    let data;
    try {
      data = await api("GET", "/v1/leagues");
    } catch (e) {
      A.showError(error, e);
      return;
    }
    const list = data.leagues || [];
    if (!list.length) {
      box.append(el("p", { class: "empty" }, "No leagues yet."));
      return;
    }
    for (const x of list) box.append(await league(x));
  }

  async function league(x) {
    const card = el("section", { class: "card stack", dataset: { league: x.board } },
      el("h3", {}, el("a", { href: "/boards/" + enc(x.board) }, x.title || x.board), " \u00b7 period " + x.period));
    let s;
    try {
      s = await api("GET", "/v1/leagues/" + enc(x.board));
    } catch (e) {
      card.append(el("p", { class: "error" }, String(e)));
      return card;
    }
    const tiers = A.table("Tiers of " + x.board, ["Tier", "Members", "Cohorts", "Promote", "Relegate"]);
    tiers.table.classList.add("league-tiers");
    for (const t of s.tiers.slice().reverse()) {
      tiers.tbody.append(el("tr", {},
        el("th", { scope: "row" }, t.tier),
        el("td", { class: "num" }, String(t.members)),
        el("td", { class: "num" }, String(t.cohorts)),
        el("td", { class: "num" }, String(t.promote)),
        el("td", { class: "num" }, String(t.relegate))));
    }
    const runs = A.table("Settlement runs of " + x.board, ["Period", "Settled", "Players", "Promoted", "Relegated", "Node, epoch"]);
    runs.table.classList.add("league-runs");
    for (const p of s.periods) {
      const st = p.settlement;
      runs.tbody.append(el("tr", {},
        el("th", { scope: "row" }, p.period),
        el("td", {}, st ? A.fmtTime(st.settled_at) : "not yet"),
        el("td", { class: "num" }, st ? String(st.players) : ""),
        el("td", { class: "num" }, st ? String(st.promoted) : ""),
        el("td", { class: "num" }, st ? String(st.relegated) : ""),
        el("td", {}, st ? st.node + ", " + st.epoch : "")));
    }
    card.append(tiers.wrap, runs.wrap,
      el("div", { class: "row" },
        el("button", { type: "button", class: "small", "aria-label": "Settle " + x.board, onclick: () => settle(x) }, "Settle ended periods")));
    return card;
  }

  async function settle(x) {
    if (!(await A.confirm("Settle the ended periods of " + x.board + " now? A settled period is never settled again.", "Settle"))) return;
    try {
      const r = await api("POST", "/v1/leagues/" + enc(x.board) + "/settle", {});
      const n = r.settled.length;
      A.notify(n ? "Settled " + r.settled.map((p) => p.period + " (" + p.promoted + " up, " + p.relegated + " down)").join(", ") : "Nothing was due.");
      show();
    } catch (e) {
      A.showError(error, e);
    }
  }

  A.tab({ id: "leagues", title: "Leagues", init, show });
})();
