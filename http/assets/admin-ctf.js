// The contest manager of the Contests tab (admin-contests.js opens it):
// one contest's countdown, freeze and reveal, challenges (create, edit,
// hide, delete), solve grid and filtered attempt log. A client of the
// public API only (docs/API.md, "CTF contests"); every string from the
// server goes in as text.
(function () {
  "use strict";
  const A = window.PodiumAdmin;
  const { el, api, enc, field } = A;

  const FUNCS = {
    static: [],
    ctfd_linear: ["minimum", "decay"],
    ctfd_logarithmic: ["minimum", "decay"],
    rctf: ["minimum"],
    gzctf: ["min_rate", "difficulty"],
  };
  const PARAMS = ["minimum", "decay", "min_rate", "difficulty"];

  // duration renders ms as "1d 2h", "2h 05m", "4m 09s".
  function duration(ms) {
    const s = Math.max(0, Math.floor(ms / 1000));
    const d = Math.floor(s / 86400), h = Math.floor((s % 86400) / 3600), m = Math.floor((s % 3600) / 60), sec = s % 60;
    const two = (n) => String(n).padStart(2, "0");
    if (d) return d + "d " + h + "h";
    if (h) return h + "h " + two(m) + "m";
    return m + "m " + two(sec) + "s";
  }

  // phase says where the freeze is: none (no freeze), pending (ahead),
  // frozen (running, frozen), ended (over, still frozen), early (revealed
  // before the end), final (revealed, or over without a freeze).
  function phase(c, now) {
    const end = Date.parse(c.end), freeze = c.freeze ? Date.parse(c.freeze) : null;
    if (c.revealed) return now < end ? "early" : "final";
    if (freeze === null) return now < end ? "none" : "final";
    if (now < freeze) return "pending";
    return now < end ? "frozen" : "ended";
  }

  function scoringText(sc) {
    const parts = [sc.function + " " + sc.value];
    for (const p of PARAMS) if (sc[p]) parts.push(p + " " + sc[p]);
    return parts.join(", ");
  }

  // Manager shows one contest in box; close() stops its clock.
  function open(box, id, onChange) {
    let contest = null, timer = 0, challenges = [], after = 0;
    const err = A.errorBox();
    const title = el("h2", { id: "ctf-title" }, id);
    const clock = el("p", { id: "ctf-countdown", class: "countdown", "aria-live": "off" });
    const freezeStatus = el("p", { id: "freeze-status" });
    const freezeActions = el("div", { class: "row", id: "freeze-actions" });
    const chalBox = el("div", { id: "ctf-challenges" });
    const gridBox = el("div", { id: "ctf-grid" });
    const logBox = el("div", { id: "ctf-log" });
    const chalErr = A.errorBox(), gridErr = A.errorBox(), logErr = A.errorBox();
    err.id = "ctf-error";
    chalErr.id = "ctf-challenges-error";
    const form = challengeForm();
    const logFilters = attemptFilters();
    box.textContent = "";
    box.append(el("section", { class: "card", id: "ctf-manager", "aria-labelledby": "ctf-title" },
      el("div", { class: "row toolbar" }, title,
        el("a", { class: "button small secondary", href: "/contests/" + enc(id) }, "Live page"),
        el("button", { type: "button", class: "small secondary", id: "ctf-refresh", onclick: () => load() }, "Refresh"),
        el("button", { type: "button", class: "small secondary", onclick: close }, "Close")),
      err, clock,
      el("h3", {}, "Freeze and reveal"), freezeStatus, freezeActions,
      el("h3", {}, "Challenges"), chalErr, chalBox, form.node,
      el("h3", {}, "Solves"), el("p", { class: "help" }, "Live view: every solve, now. 1, 2, 3 mark first bloods; hidden teams are marked."),
      gridErr, gridBox,
      el("h3", {}, "Attempt log"), logFilters.node, logErr, logBox));

    function close() {
      clearInterval(timer);
      box.textContent = "";
    }

    async function load() {
      A.clearError(err);
      try {
        contest = await api("GET", "/v1/contests/" + enc(id));
      } catch (e) {
        A.showError(err, e);
        return;
      }
      title.textContent = contest.title ? contest.title + " (" + contest.id + ")" : contest.id;
      tick();
      clearInterval(timer);
      timer = setInterval(tick, 1000);
      loadChallenges().then(loadGrid);
      logFilters.reset();
      loadLog(true);
    }

    // tick redraws the countdown and, when the phase moves, the freeze
    // control.
    let shown = "";
    function tick() {
      if (!box.isConnected) { clearInterval(timer); return; }
      const now = Date.now(), c = contest;
      const start = Date.parse(c.start), end = Date.parse(c.end), freeze = c.freeze ? Date.parse(c.freeze) : null;
      const parts = [];
      if (now < start) parts.push("Starts in " + duration(start - now));
      if (freeze !== null && now < freeze) parts.push("freeze in " + duration(freeze - now));
      if (now < end) parts.push("ends in " + duration(end - now));
      else parts.push("ended " + A.fmtTime(c.end));
      const text = parts.join(" \u00b7 ");
      clock.textContent = text.charAt(0).toUpperCase() + text.slice(1);
      const p = phase(c, now);
      if (p !== shown) {
        shown = p;
        freezeControl(p);
      }
    }

    function freezeControl(p) {
      const c = contest;
      freezeStatus.dataset.phase = p;
      freezeActions.textContent = "";
      const button = (label, cls, fn) => el("button", { type: "button", class: cls, id: "freeze-action", onclick: fn }, label);
      switch (p) {
        case "none":
          freezeStatus.textContent = "No freeze: the public standings are the live ones. Set a freeze time by saving the contest with one.";
          break;
        case "pending":
          freezeStatus.textContent = "Freeze pending: the public standings stop moving at " + A.fmtTime(c.freeze) + ".";
          break;
        case "frozen":
          freezeStatus.textContent = "Frozen since " + A.fmtTime(c.freeze) + ": the public sees the standings as they were then.";
          freezeActions.append(button("Reveal now (before the end)", "danger", () => reveal(true)));
          break;
        case "ended":
          freezeStatus.textContent = "Ended, still frozen: reveal the final standings when you are ready.";
          freezeActions.append(button("Reveal final standings", "", () => reveal(false)));
          break;
        case "early":
          freezeStatus.textContent = "Revealed before the end: the public sees the live standings.";
          freezeActions.append(button("Re-freeze", "", refreeze));
          break;
        default:
          freezeStatus.textContent = c.freeze ? "Revealed: the public sees the final standings." : "Over: the public sees the final standings.";
      }
    }

    async function reveal(force) {
      const text = force
        ? "Reveal the live standings of " + id + " now? Teams still play and will see the live board; you can re-freeze until the end."
        : "Reveal the final standings of " + id + "? The public views become the live ones, for good.";
      if (!(await A.confirm(text, "Reveal"))) return;
      await act(() => api("POST", "/v1/contests/" + enc(id) + "/unfreeze", force ? { force: true } : undefined), "revealed");
    }

    async function refreeze() {
      if (!(await A.confirm("Freeze the public standings of " + id + " again?", "Re-freeze"))) return;
      await act(() => api("POST", "/v1/contests/" + enc(id) + "/refreeze"), "frozen again");
    }

    async function act(fn, what) {
      A.clearError(err);
      try {
        contest = await fn();
        A.notify("Contest " + id + " " + what + ".");
        shown = "";
        tick();
        if (onChange) onChange();
      } catch (e) {
        A.showError(err, e);
        err.focus();
      }
    }

    // --- challenges ---

    async function loadChallenges() {
      A.clearError(chalErr);
      try {
        const data = await api("GET", "/v1/contests/" + enc(id) + "/challenges?view=live");
        challenges = data.challenges || [];
      } catch (e) {
        A.showError(chalErr, e);
        return;
      }
      chalBox.textContent = "";
      logFilters.challenges(challenges);
      if (!challenges.length) {
        chalBox.append(el("p", { class: "empty" }, "No challenges yet: add one below."));
        return;
      }
      const t = A.table("Challenges", ["Challenge", "Name", "Category", "Order", "Scoring", "Value", "Solves", "Shown", "Actions"]);
      t.table.id = "challenges-table";
      for (const ch of challenges) {
        t.tbody.append(el("tr", { dataset: { challenge: ch.id, hidden: String(ch.hidden) } },
          el("th", { scope: "row" }, ch.id),
          el("td", {}, ch.name),
          el("td", {}, ch.category || ""),
          el("td", { class: "num" }, String(ch.order)),
          el("td", {}, scoringText(ch.scoring)),
          el("td", { class: "num" }, String(ch.value)),
          el("td", { class: "num" }, String(ch.solves)),
          el("td", {}, ch.hidden ? "hidden" : "shown"),
          el("td", { class: "actions" },
            el("button", { type: "button", class: "small secondary", "aria-label": "Edit " + ch.id, onclick: () => form.edit(ch) }, "Edit"),
            el("button", { type: "button", class: "small secondary", "aria-label": (ch.hidden ? "Show " : "Hide ") + ch.id,
              onclick: () => save(ch.id, { hidden: !ch.hidden }, chalErr) }, ch.hidden ? "Show" : "Hide"),
            el("button", { type: "button", class: "small danger", "aria-label": "Delete " + ch.id, onclick: () => remove(ch) }, "Delete"))));
      }
      chalBox.append(t.wrap);
    }

    // save PUTs a challenge change. A change that moves the standings
    // (409) is previewed and applied only once confirmed. Resolves true
    // when saved.
    async function save(chID, body, errBox) {
      A.clearError(errBox);
      const path = "/v1/contests/" + enc(id) + "/challenges/" + enc(chID);
      try {
        await api("PUT", path, body);
      } catch (e) {
        if (e.code !== "conflict") {
          A.showError(errBox, e);
          errBox.focus();
          return false;
        }
        let p;
        try {
          p = await api("PUT", path + "?preview=true", body);
        } catch (e2) {
          A.showError(errBox, e2);
          errBox.focus();
          return false;
        }
        if (!(await A.confirm(previewText(p), "Apply"))) {
          A.showError(errBox, "Not applied: " + e.message);
          return false;
        }
        try {
          await api("PUT", path + "?confirm=true", body);
        } catch (e3) {
          A.showError(errBox, e3);
          errBox.focus();
          return false;
        }
      }
      A.notify("Challenge " + chID + " saved.");
      await loadChallenges();
      loadGrid();
      return true;
    }

    function previewText(p) {
      const v = (x) => (x === null || x === undefined ? "nothing (hidden)" : String(x));
      const lines = ["Values are retroactive. This change of " + p.new.id + " (" + p.solves + " solves) moves the standings:"];
      if (p.old && p.old.hidden !== p.new.hidden) lines.push(p.new.hidden ? "Hiding it takes its points from every solver." : "Showing it gives its points to every solver.");
      else lines.push("Value: " + v(p.value.old) + " \u2192 " + v(p.value.new) + " for every solver.");
      const teams = p.teams || [];
      lines.push(teams.length + " team(s) change:");
      for (const t of teams.slice(0, 8)) {
        const r = (x) => (x === null ? "-" : "#" + x);
        lines.push("\u2022 " + t.name + ": " + t.old_score + " \u2192 " + t.new_score + " (" + r(t.old_rank) + " \u2192 " + r(t.new_rank) + ")");
      }
      if (teams.length > 8) lines.push("\u2026 and " + (teams.length - 8) + " more.");
      lines.push("Apply it?");
      return lines.join("\n");
    }

    async function remove(ch) {
      if (!(await A.confirm("Delete challenge " + ch.id + "? Only a challenge nobody solved can be deleted; hide a solved one instead.", "Delete"))) return;
      A.clearError(chalErr);
      try {
        await api("DELETE", "/v1/contests/" + enc(id) + "/challenges/" + enc(ch.id));
        A.notify("Challenge " + ch.id + " deleted.");
        await loadChallenges();
        loadGrid();
      } catch (e) {
        A.showError(chalErr, e);
        chalErr.focus();
      }
    }

    function challengeForm() {
      const ferr = A.errorBox();
      const cid = el("input", { type: "text", id: "challenge-id", required: true, autocomplete: "off", spellcheck: false });
      const name = el("input", { type: "text", id: "challenge-name" });
      const cat = el("input", { type: "text", id: "challenge-category" });
      const order = el("input", { type: "number", id: "challenge-order", step: 1, defaultValue: "0" });
      const fn = el("select", { id: "challenge-function" }, Object.keys(FUNCS).map((f) => el("option", { value: f }, f)));
      const value = el("input", { type: "number", id: "challenge-value", min: 0, step: 1, defaultValue: "100" });
      const params = {};
      for (const p of PARAMS) params[p] = el("input", { type: "number", id: "challenge-" + p.replace("_", "-"), min: 0, step: p === "min_rate" ? "0.01" : p === "difficulty" ? "any" : 1 });
      const paramFields = {};
      for (const p of PARAMS) paramFields[p] = field(p.replace("_", " "), params[p]);
      const hidden = el("input", { type: "checkbox", id: "challenge-hidden" });
      const heading = el("h3", {}, "New challenge");
      const save_ = el("button", { type: "submit", id: "challenge-save" }, "Save challenge");
      const cancel = el("button", { type: "button", class: "secondary", hidden: true, onclick: () => reset() }, "New instead");
      const node = el("form", { class: "stack card", novalidate: true, id: "challenge-form" },
        heading,
        el("div", { class: "row" }, field("Challenge id", cid, "[a-z0-9][a-z0-9_.:-]; an existing id is changed."), field("Name", name), field("Category", cat), field("Order", order)),
        el("div", { class: "row" }, field("Scoring function", fn), field("Value", value), PARAMS.map((p) => paramFields[p])),
        el("label", {}, hidden, " Hidden (out of the public listings and the standings)"),
        ferr, el("div", { class: "row" }, save_, cancel));
      const showParams = () => {
        for (const p of PARAMS) paramFields[p].hidden = !FUNCS[fn.value].includes(p);
      };
      fn.addEventListener("change", showParams);
      showParams();
      function reset() {
        node.reset();
        cid.readOnly = false;
        heading.textContent = "New challenge";
        cancel.hidden = true;
        showParams();
      }
      function edit(ch) {
        reset();
        cid.value = ch.id;
        cid.readOnly = true;
        name.value = ch.name;
        cat.value = ch.category || "";
        order.value = String(ch.order);
        fn.value = ch.scoring.function;
        value.value = String(ch.scoring.value);
        for (const p of PARAMS) params[p].value = ch.scoring[p] ? String(ch.scoring[p]) : "";
        hidden.checked = ch.hidden;
        heading.textContent = "Edit challenge " + ch.id;
        cancel.hidden = false;
        showParams();
        node.scrollIntoView({ block: "nearest" });
        name.focus();
      }
      node.addEventListener("submit", async (ev) => {
        ev.preventDefault();
        A.clearError(ferr);
        const chID = cid.value.trim();
        if (!chID) { A.showError(ferr, "The challenge needs an id."); cid.focus(); return; }
        // Numbers go as typed, so the server judges them (and int64
        // values keep their digits).
        const num = (input) => input.value.trim();
        const sc = ['"function":' + JSON.stringify(fn.value), '"value":' + (num(value) || "0")];
        for (const p of FUNCS[fn.value]) if (num(params[p])) sc.push(JSON.stringify(p) + ":" + num(params[p]));
        const body = '{"name":' + JSON.stringify(name.value) + ',"category":' + JSON.stringify(cat.value) +
          ',"order":' + (num(order) || "0") + ',"hidden":' + hidden.checked + ',"scoring":{' + sc.join(",") + "}}";
        await A.busy(save_, async () => {
          if (await save(chID, body, ferr)) reset();
        });
      });
      return { node, edit };
    }

    // --- solve grid ---

    async function loadGrid() {
      A.clearError(gridErr);
      let data;
      try {
        data = await api("GET", "/v1/contests/" + enc(id) + "/standings?view=live&include_hidden=true&solves=true&limit=1000");
      } catch (e) {
        A.showError(gridErr, e);
        return;
      }
      gridBox.textContent = "";
      const cols = challenges.filter((c) => !c.hidden);
      const teams = data.standings || [];
      if (!teams.length || !cols.length) {
        gridBox.append(el("p", { class: "empty" }, cols.length ? "No solves yet." : "No challenges shown."));
        return;
      }
      const head = el("tr", {}, el("th", { scope: "col" }, "#"), el("th", { scope: "col" }, "Team"), el("th", { scope: "col", class: "num" }, "Score"),
        cols.map((c) => el("th", { scope: "col", title: c.name }, c.id)));
      const body = el("tbody");
      for (const t of teams) {
        const by = {};
        for (const s of t.solves || []) by[s.challenge] = s;
        body.append(el("tr", { dataset: { team: t.team, hidden: String(!!t.hidden) } },
          el("td", { class: "num" }, t.rank === null ? "\u2013" : String(t.rank)),
          el("th", { scope: "row" }, t.name + (t.hidden ? " (hidden)" : "")),
          el("td", { class: "num" }, String(t.score)),
          cols.map((c) => {
            const s = by[c.id];
            if (!s) return el("td", { class: "cell", dataset: { challenge: c.id } }, "");
            return el("td", { class: "cell solved", dataset: { challenge: c.id, blood: String(s.first_blood || 0) },
              title: t.name + " solved " + c.id + " at " + A.fmtTime(s.at) + ": " + s.points + " points" },
            s.first_blood ? String(s.first_blood) : "\u2713");
          })));
      }
      gridBox.append(el("div", { class: "scroll-x", tabIndex: 0, role: "region", "aria-label": "Solve grid, scrolls sideways" },
        el("table", { class: "solve-grid", id: "solve-grid" },
          el("caption", { class: "visually-hidden" }, "Solves: teams by challenges"),
          el("thead", {}, head), body)));
      if (data.total > teams.length) gridBox.append(el("p", { class: "help" }, "The first " + teams.length + " of " + data.total + " teams."));
    }

    // --- attempt log ---

    function attemptFilters() {
      const team = el("input", { type: "text", id: "log-team", autocomplete: "off", spellcheck: false });
      const chal = el("select", { id: "log-challenge" }, el("option", { value: "" }, "every challenge"));
      const verdict = el("select", { id: "log-verdict" },
        el("option", { value: "" }, "every verdict"), el("option", { value: "true" }, "correct"), el("option", { value: "false" }, "incorrect"));
      const apply = el("button", { type: "submit", class: "secondary", id: "log-apply" }, "Filter");
      const node = el("form", { class: "row toolbar", novalidate: true, id: "log-filters" },
        field("Team", team), field("Challenge", chal), field("Verdict", verdict), el("div", { class: "field end" }, apply));
      node.addEventListener("submit", (ev) => { ev.preventDefault(); loadLog(true); });
      return {
        node,
        reset() { node.reset(); },
        query() {
          const q = new URLSearchParams();
          if (team.value.trim()) q.set("team", team.value.trim());
          if (chal.value) q.set("challenge", chal.value);
          if (verdict.value) q.set("correct", verdict.value);
          return q;
        },
        challenges(list) {
          const keep = chal.value;
          chal.textContent = "";
          chal.append(el("option", { value: "" }, "every challenge"), list.map((c) => el("option", { value: c.id }, c.id)));
          chal.value = list.some((c) => c.id === keep) ? keep : "";
        },
      };
    }

    let logBody = null, more = null;
    async function loadLog(fresh) {
      A.clearError(logErr);
      if (fresh) {
        after = 0;
        logBox.textContent = "";
        const t = A.table("Attempts", ["#", "Time", "Team", "Challenge", "Verdict", "Result", "Key"]);
        t.table.id = "attempts-table";
        logBody = t.tbody;
        more = el("button", { type: "button", class: "secondary", id: "log-more", hidden: true, onclick: () => loadLog(false) }, "More attempts");
        logBox.append(t.wrap, el("div", { class: "row pager" }, more));
      }
      const q = logFilters.query();
      q.set("after", String(after));
      q.set("limit", "100");
      let data;
      try {
        data = await api("GET", "/v1/contests/" + enc(id) + "/attempts?" + q.toString());
      } catch (e) {
        A.showError(logErr, e);
        return;
      }
      for (const a of data.attempts) {
        logBody.append(el("tr", { dataset: { result: a.result } },
          el("td", { class: "num" }, String(a.id)),
          el("td", {}, A.fmtTime(a.at)),
          el("td", {}, a.team),
          el("td", {}, a.challenge),
          el("td", {}, a.correct ? "correct" : "incorrect"),
          el("td", {}, a.result),
          el("td", {}, a.key)));
      }
      // The log is read to its end when next_after stops moving.
      const moved = data.next_after !== after;
      after = data.next_after;
      more.hidden = !moved || (data.attempts.length < 100 && !q.has("team") && !q.has("challenge") && !q.has("correct"));
      if (!logBody.rows.length && !moved) logBody.append(el("tr", {}, el("td", { colSpan: 7, class: "empty" }, "No attempts match.")));
    }

    load();
    return { close, reload: load };
  }

  A.ctf = { open };
})();
