// Console tab "Players": look a player up, rename, hide or unhide; list
// the player's sessions, revoke one or all.
(function () {
  "use strict";
  const A = window.PodiumAdmin;
  const { el, api, enc, field } = A;

  let result;

  function init(panel) {
    const err = A.errorBox();
    const id = el("input", { type: "text", required: true, autocomplete: "off", spellcheck: false, id: "player-lookup" });
    const go = el("button", { type: "submit" }, "Look up");
    const form = el("form", { class: "row", novalidate: true, role: "search", id: "player-form" },
      field("Player id", id), el("div", { class: "field end" }, go));
    result = el("div", { id: "player-result" });
    form.addEventListener("submit", async (ev) => {
      ev.preventDefault();
      A.clearError(err);
      const p = id.value.trim();
      if (!p) { A.showError(err, "Type a player id."); id.focus(); return; }
      await A.busy(go, () => show(p, err));
    });
    panel.append(el("h2", {}, "Players"), form, err, result);
  }

  async function show(player, err) {
    result.textContent = "";
    let p, known = true;
    try {
      p = await api("GET", "/v1/players/" + enc(player));
    } catch (e) {
      if (e.status !== 404) { A.showError(err, e); return; }
      known = false;
      p = { id: player, name: "", hidden: false, meta: {} };
    }
    const ferr = A.errorBox();
    const name = el("input", { type: "text", value: p.name === p.id ? "" : p.name, autocomplete: "off", id: "player-name" });
    const hidden = el("input", { type: "checkbox", checked: !!p.hidden, id: "player-hidden" });
    const meta = el("textarea", { rows: 2, spellcheck: false, class: "code", id: "player-meta" }, p.meta && Object.keys(p.meta).length ? JSON.stringify(p.meta) : "");
    const save = el("button", { type: "submit", id: "player-save" }, "Save player");
    const form = el("form", { class: "stack card", novalidate: true },
      el("h3", { tabIndex: -1, id: "player-title" }, "Player ", Podium.bdi(p.id), p.hidden ? el("span", { class: "badge" }, "hidden") : null),
      known ? null : el("p", { class: "help" }, "podium has not seen this player yet; saving registers it."),
      field("Name", name, "Shown on the pages instead of the id; empty: the id."),
      el("label", {}, hidden, " Hidden: kept, but left out of public rankings (ranks close up)"),
      field("Meta (JSON object)", meta),
      ferr, el("div", {}, save));
    form.addEventListener("submit", async (ev) => {
      ev.preventDefault();
      A.clearError(ferr);
      const text = meta.value.trim() || "{}";
      try { JSON.parse(text); } catch (e) { A.showError(ferr, "meta: not JSON (" + e.message + ")"); meta.focus(); return; }
      const body = "{" + ['"name":' + JSON.stringify(name.value), '"hidden":' + hidden.checked, '"meta":' + text].join(",") + "}";
      await A.busy(save, async () => {
        try {
          await api("PUT", "/v1/players/" + enc(p.id), body);
          A.notify("Player " + Podium.isolate(p.id) + " saved.");
          show(p.id, ferr);
        } catch (e) {
          A.showError(ferr, e);
          ferr.focus();
        }
      });
    });
    result.append(form);
    await freeze(p.id);
    await sessions(p.id);
  }

  // freeze shows whether the player is frozen (every submission held for
  // review) and freezes or unfreezes; absent on servers without
  // moderation (404 for the route).
  async function freeze(player) {
    let st;
    try {
      st = await api("GET", "/v1/players/" + enc(player) + "/freeze", undefined, { noSignOut: true });
    } catch (e) {
      return; // no moderation on this server
    }
    const box = el("section", { class: "card", id: "freeze", "aria-labelledby": "freeze-title" });
    const err = A.errorBox();
    const reason = el("input", { type: "text", id: "freeze-reason", autocomplete: "off" });
    const reload = () => show(player, err);
    const act = async (what, body) => {
      try {
        await api("POST", "/v1/players/" + enc(player) + "/" + what, body);
        A.notify(Podium.isolate(player) + (what === "freeze" ? " is frozen: new submissions wait for review." : " is no longer frozen."));
        reload();
      } catch (e) {
        A.showError(err, e);
      }
    };
    box.append(el("h3", { id: "freeze-title" }, "Freeze"),
      el("p", { id: "freeze-state" }, st.frozen
        ? "Frozen since " + A.fmtTime(st.at) + " by " + st.by + (st.reason ? ": " + st.reason : "") + ". Every new submission is held for review."
        : "Not frozen."),
      st.frozen
        ? el("button", { type: "button", id: "unfreeze-player", onclick: () => act("unfreeze") }, "Unfreeze")
        : el("div", { class: "row" }, field("Reason (optional)", reason),
          el("div", { class: "field end" }, el("button", { type: "button", class: "danger", id: "freeze-player",
            onclick: () => act("freeze", { reason: reason.value }) }, "Freeze"))),
      err);
    result.append(box);
  }

  async function sessions(player) {
    const box = el("section", { class: "card", "aria-labelledby": "sessions-title", id: "sessions" });
    const err = A.errorBox();
    box.append(el("h3", { id: "sessions-title" }, "Sessions of ", Podium.bdi(player)), err);
    result.append(box);
    let data;
    try {
      data = await api("GET", "/v1/players/" + enc(player) + "/sessions");
    } catch (e) {
      A.showError(err, e);
      return;
    }
    const list = data.sessions || [];
    if (!list.length) {
      box.append(el("p", { class: "empty" }, "No open sessions."));
      return;
    }
    const t = A.table("Sessions of " + player, ["Device", "Id", "Created", "Refreshed", "Expires", "Actions"]);
    t.table.id = "sessions-table";
    for (const s of list) {
      t.tbody.append(el("tr", { dataset: { session: s.id } },
        el("th", { scope: "row" }, Podium.bdi(s.device)),
        el("td", {}, el("code", {}, s.id)),
        el("td", {}, A.fmtTime(s.created_at)),
        el("td", {}, A.fmtTime(s.refreshed_at)),
        el("td", {}, A.fmtTime(s.expires_at)),
        el("td", { class: "actions" }, el("button", { type: "button", class: "small danger", "aria-label": "Revoke the session on " + s.device,
          onclick: async () => {
            if (!(await A.confirm("Revoke the session of " + Podium.isolate(player) + " on \u201c" + Podium.isolate(s.device) + "\u201d?", "Revoke session"))) return;
            try {
              await api("DELETE", "/v1/players/" + enc(player) + "/sessions/" + enc(s.id));
              A.notify("Session revoked.");
              box.remove();
              sessions(player);
            } catch (e) { A.showError(err, e); }
          } }, "Revoke"))));
    }
    const all = el("button", { type: "button", class: "danger", id: "sessions-revoke-all", onclick: async () => {
      if (!(await A.confirm("Revoke every session of " + player + " (log out everywhere)?", "Revoke all"))) return;
      try {
        const r = await api("DELETE", "/v1/players/" + enc(player) + "/sessions");
        A.notify(r.revoked + " session(s) of " + player + " revoked.");
        box.remove();
        sessions(player);
      } catch (e) { A.showError(err, e); }
    } }, "Revoke all sessions");
    box.append(t.wrap, el("div", { class: "row" }, all));
  }

  A.tab({ id: "players", title: "Players", init });
})();
