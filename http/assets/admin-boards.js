// Console tab "Boards": the list with entry counts, the editor (every
// setting, with the ordering rule in words), deleting a board, and a
// board's entries, paged, with deleting an entry and hiding a player.
(function () {
  "use strict";
  const A = window.PodiumAdmin;
  const { el, api, enc, field } = A;
  const FORMATS = ["", "integer", "duration_ms", "seconds", "points", "timestamp"];
  const MODES = ["best", "latest", "sum", "best_k", "aggregate"];
  const PAGE = 50;

  let panel, listBox, listError, editor, entriesBox;

  function init(p) {
    panel = p;
    listError = A.errorBox();
    listBox = el("div", { class: "list" });
    editor = el("section", { class: "card", hidden: true, "aria-labelledby": "board-form-title" });
    entriesBox = el("section", { class: "card", hidden: true, "aria-labelledby": "entries-title" });
    panel.append(
      el("h2", {}, "Boards"),
      el("div", { class: "row toolbar" },
        el("button", { type: "button", id: "board-new", onclick: () => openEditor(null) }, "New board"),
        el("button", { type: "button", class: "secondary", onclick: () => openEditor(null, tournamentTemplate()) }, "New tournament"),
        el("button", { type: "button", class: "secondary", onclick: () => openEditor(null, leagueTemplate()) }, "New league"),
        el("button", { type: "button", class: "secondary", onclick: load }, "Refresh")),
      listError, listBox, editor, entriesBox);
  }

  // --- the list ---

  // The list comes a page at a time (GET /v1/boards?cursor=&limit=): the
  // first page, then "More boards" appends the next one.
  const LIST_PAGE = 100;
  let listTable = null, moreButton = null;

  function load() {
    listBox.textContent = "";
    listTable = moreButton = null;
    return loadPage("");
  }

  async function loadPage(cursor) {
    A.clearError(listError);
    let data;
    try {
      data = await api("GET", "/v1/boards?limit=" + LIST_PAGE + (cursor ? "&cursor=" + encodeURIComponent(cursor) : ""));
    } catch (err) {
      A.showError(listError, err);
      return;
    }
    const boards = data.boards || [];
    if (moreButton) moreButton.remove();
    moreButton = null;
    if (!listTable && !boards.length && !data.next_cursor) {
      listBox.append(el("p", { class: "empty" }, "No boards yet. Create one with \u201cNew board\u201d."));
      return;
    }
    if (!listTable) {
      listTable = A.table("Boards", ["Board", "Title", "Kind", "Resets", "Public", "Entries", "Actions"]);
      listTable.table.id = "boards-table";
      listBox.append(listTable.wrap);
    }
    const counts = [];
    for (const b of boards) {
      const count = el("td", { class: "num", dataset: { col: "entries" } }, "\u2026");
      counts.push([b, count]);
      listTable.tbody.append(el("tr", { dataset: { board: b.id } },
        el("th", { scope: "row" }, el("a", { href: "/boards/" + enc(b.id), title: "Live page" }, b.id)),
        el("td", {}, b.title || ""),
        el("td", {}, kind(b)),
        el("td", {}, b.reset && b.reset.every && b.reset.every !== "none" ? b.reset.every + " (" + (b.reset.tz || "UTC") + ")" : "never"),
        el("td", {}, b.public ? "yes" : "no"),
        count,
        el("td", { class: "actions" },
          el("button", { type: "button", class: "small", "aria-label": "Edit " + b.id, onclick: () => openEditor(b) }, "Edit"),
          el("button", { type: "button", class: "small secondary", "aria-label": "Entries of " + b.id, onclick: () => openEntries(b, 0, "", true) }, "Entries"),
          el("button", { type: "button", class: "small danger", "aria-label": "Delete " + b.id, onclick: () => deleteBoard(b) }, "Delete"))));
    }
    if (data.next_cursor) {
      const next = data.next_cursor;
      moreButton = el("button", { type: "button", class: "secondary", id: "boards-more", onclick: () => loadPage(next) }, "More boards");
      listBox.append(moreButton);
    }
    // Counts: entries?limit=1 gives the current period's total, four at a time.
    let i = 0;
    const worker = async () => {
      while (i < counts.length) {
        const [b, cell] = counts[i++];
        try {
          const r = await api("GET", "/v1/boards/" + enc(b.id) + "/entries?limit=1");
          cell.textContent = String(r.total);
        } catch (err) {
          cell.textContent = "?";
          cell.title = String(err);
        }
      }
    };
    await Promise.all([worker(), worker(), worker(), worker()]);
  }

  function kind(b) {
    const parts = [b.mode || "best"];
    if (b.mode === "best_k" && b.keep) parts[0] += " (keep " + b.keep + ")";
    if (b.tournament) parts.push("tournament");
    if (b.league) parts.push("league");
    if (b.points) parts.push("points: " + b.points.kind);
    if (b.player_submit) parts.push("player submit");
    if (b.rank_style === "shared") parts.push("shared ranks");
    return parts.join(", ");
  }

  async function deleteBoard(b) {
    if (!(await A.confirm("Delete board \u201c" + b.id + "\u201d with all its entries and its log? This cannot be undone.", "Delete board"))) return;
    try {
      await api("DELETE", "/v1/boards/" + enc(b.id));
      A.notify("Board " + b.id + " deleted.");
      if (entriesBox.dataset.board === b.id) entriesBox.hidden = true;
      load();
    } catch (err) {
      A.notify("Could not delete " + b.id + ": " + err, true);
    }
  }

  // --- the editor ---

  function tournamentTemplate() {
    const start = new Date(Date.now() + 3600e3), end = new Date(start.getTime() + 7 * 86400e3);
    return {
      keys: [{ name: "score", order: "desc" }], public: true,
      tournament: { start: start.toISOString(), end: end.toISOString(), join_required: false, max_participants: 0, weight: 1000 },
    };
  }

  function leagueTemplate() {
    return {
      keys: [{ name: "xp", order: "desc" }], mode: "sum", public: true, reset: { every: "week", tz: "UTC" },
      league: { cohort_size: 30, absent: "keep", tiers: [{ name: "bronze", promote: 5 }, { name: "silver", promote: 5, relegate: 5 }, { name: "gold", relegate: 5 }] },
    };
  }

  function json(v) {
    return v === undefined || v === null ? "" : JSON.stringify(v, null, 2);
  }

  function keyRow(k, rows, preview) {
    const name = el("input", { type: "text", value: k.name || "", required: true, autocomplete: "off", spellcheck: false, class: "k-name" });
    const order = el("select", { class: "k-order" },
      el("option", { value: "asc" }, "asc: lower is better"),
      el("option", { value: "desc" }, "desc: higher is better"));
    order.value = k.order || "desc";
    const label = el("input", { type: "text", value: k.label || "", class: "k-label", autocomplete: "off" });
    const format = el("select", { class: "k-format" }, FORMATS.map((f) => el("option", { value: f }, f || "(by name)")));
    format.value = k.format || "";
    // Bounds (min, max) are int64: kept as the text typed and sent as
    // such, so no value loses precision in a JavaScript number.
    const bound = (v, cls) => el("input", { type: "text", inputMode: "numeric", value: v === undefined || v === null ? "" : String(v), class: cls, autocomplete: "off", placeholder: "none" });
    const min = bound(k.min, "k-min"), max = bound(k.max, "k-max");
    const row = el("div", { class: "key-row" });
    const remove = el("button", { type: "button", class: "small secondary", onclick: () => { row.remove(); preview(); } }, "Remove");
    row.append(field("Name", name), field("Order", order), field("Label", label), field("Format", format),
      field("Min", min), field("Max", max), el("div", { class: "field end" }, remove));
    for (const c of [name, order, label, format]) c.addEventListener("input", preview);
    rows.append(row);
    return row;
  }

  function readKeys(rows) {
    return Array.from(rows.querySelectorAll(".key-row"), (r) => {
      const k = { name: r.querySelector(".k-name").value.trim(), order: r.querySelector(".k-order").value };
      const label = r.querySelector(".k-label").value.trim();
      const format = r.querySelector(".k-format").value;
      if (label) k.label = label;
      if (format) k.format = format;
      return k;
    });
  }

  // keysJSON is the keys as JSON text, bounds spliced as typed. A bound
  // that is not an integer is named (the body could not be built).
  function keysJSON(rows) {
    const defs = readKeys(rows);
    const out = [];
    for (const [i, r] of Array.from(rows.querySelectorAll(".key-row")).entries()) {
      let text = JSON.stringify(defs[i]);
      for (const b of ["min", "max"]) {
        const input = r.querySelector(".k-" + b);
        const v = input.value.trim();
        if (!v) continue;
        if (!/^-?[0-9]+$/.test(v)) return { error: "key " + (i + 1) + ": " + b + " must be an integer", input };
        text = text.slice(0, -1) + "," + JSON.stringify(b) + ":" + v + "}";
      }
      out.push(text);
    }
    return { text: "[" + out.join(",") + "]" };
  }

  // openEditor shows the form for board b (null: a new board, with the
  // settings of tmpl if given).
  function openEditor(b, tmpl) {
    const src = b || tmpl || { keys: [{ name: "score", order: "desc" }], public: true };
    const isNew = !b;
    editor.textContent = "";
    editor.hidden = false;
    const err = A.errorBox();
    const id = el("input", { type: "text", value: b ? b.id : "", required: true, autocomplete: "off", spellcheck: false, readOnly: !isNew, id: "board-id" });
    const title = el("input", { type: "text", value: src.title || "", id: "board-title" });
    const rows = el("div", { class: "key-rows", id: "board-keys" });
    const previewEl = el("p", { class: "order-rule", id: "order-preview", "aria-live": "polite" });
    const preview = () => { previewEl.textContent = Podium.orderRule(readKeys(rows).filter((k) => k.name)) || "Add a key to see the ordering rule."; };
    for (const k of src.keys || []) keyRow(k, rows, preview);
    const addKey = el("button", { type: "button", class: "small secondary", onclick: () => {
      if (rows.children.length >= 4) { A.notify("A board has at most 4 keys.", true); return; }
      keyRow({ order: "desc" }, rows, preview).querySelector("input").focus();
      preview();
    } }, "Add key");
    const mode = el("select", { id: "board-mode" }, MODES.map((m) => el("option", { value: m }, m)));
    mode.value = src.mode || "best";
    const keep = el("input", { type: "number", min: 1, max: 100, value: src.keep || "", id: "board-keep" });
    const keepField = field("Keep (best_k: results kept per player)", keep);
    const syncMode = () => { keepField.hidden = mode.value !== "best_k"; };
    mode.addEventListener("change", syncMode);
    syncMode();
    const every = el("select", { id: "board-every" }, ["none", "day", "week", "month"].map((v) => el("option", { value: v }, v)));
    every.value = (src.reset && src.reset.every) || "none";
    const tz = el("input", { type: "text", value: (src.reset && src.reset.tz) || "", placeholder: "UTC", list: "tz-list", autocomplete: "off", id: "board-tz" });
    tz.setAttribute("list", "tz-list");
    const keepPeriods = el("input", { type: "number", min: 0, max: 3660, value: src.keep_periods || "", placeholder: "all", id: "board-keep-periods" });
    const pub = el("input", { type: "checkbox", checked: !!src.public, id: "board-public" });
    const ps = el("input", { type: "checkbox", checked: !!src.player_submit, id: "board-player-submit" });
    const shared = el("input", { type: "checkbox", checked: src.rank_style === "shared", id: "board-rank-shared" });
    const meta = el("textarea", { rows: 2, id: "board-meta", spellcheck: false }, src.meta && Object.keys(src.meta).length ? json(src.meta) : "");
    const raw = {};
    const rawField = (name, help) => {
      raw[name] = el("textarea", { rows: 4, id: "board-" + name, spellcheck: false, class: "code" }, json(src[name]));
      return field(name[0].toUpperCase() + name.slice(1) + " (JSON)", raw[name], help);
    };
    const advanced = el("details", { open: !!(src.tournament || src.points || src.aggregate || src.quota || src.evidence || src.review || src.league || src.group_set || src.group_board) },
      el("summary", {}, "Review, quota, evidence, tournament, points, league, aggregate and group settings"),
      rawField("review", "{\"hold\": \"all\" | \"top\" | \"threshold\" | \"none\", \"top\": N, \"threshold\": [...]}: which submissions wait for a moderator."),
      rawField("quota", "{\"max\": N}: score submissions per player and period; {\"max\": 0} removes it."),
      rawField("evidence", "max_bytes, max_inflated_bytes, max_events, max_line_bytes, ttl_seconds, retention_seconds, public."),
      rawField("tournament", "start, end, join_required, max_participants, weight, category, series, ladder (docs/API.md, Tournaments)."),
      rawField("points", "ladder, kind (total, category, current, best), category, half_life_days, series, by."),
      rawField("league", "tiers [{name, promote, relegate}] lowest first, cohort_size, absent (keep, drop); the board must reset (docs/API.md, Leagues)."),
      rawField("aggregate", "kind (sum_of_bests, best_k_sum), require_all, sources [{board, k, fill}]."),
      rawField("group_set", "{\"max_members\": N, \"max_per_player\": N, \"max_groups\": N}: the board is a set of groups (mode latest, one key: members). Fixed when made."),
      rawField("group_board", "{\"set\": ID, \"source\": ID, \"rule\": \"sum\" | \"avg\" | \"best\", \"k\": N}: the board ranks the set's groups by their members on source (mode latest, the source's keys). Fixed when made."),
      el("p", { class: "help" }, "Left empty, a setting is not sent: a new board has none, an existing one keeps its own."));
    const save = el("button", { type: "submit", id: "board-save" }, isNew ? "Create board" : "Save board");
    const form = el("form", { class: "stack", novalidate: true, id: "board-form" },
      el("h2", { id: "board-form-title" }, isNew ? "New board" : "Edit board " + b.id),
      field("Board id", id, isNew ? "[a-z0-9][a-z0-9_.:-]{0,127}; it cannot change later." : "The id cannot change."),
      field("Title", title),
      el("fieldset", {}, el("legend", {}, "Keys, in ranking order (1 to 4)"), rows, addKey, previewEl),
      field("Mode", mode), keepField,
      el("fieldset", { class: "row" }, el("legend", {}, "Reset"), field("Every", every), field("Time zone", tz),
        field("Past periods kept", keepPeriods, "keep_periods: older periods are deleted; empty keeps them all. Lowering it deletes for good.")),
      el("div", { class: "checks" },
        el("label", {}, pub, " Public (anyone may read it)"),
        el("label", {}, ps, " Players may submit with a session (player_submit)"),
        el("label", {}, shared, " Also report shared ranks, 1, 2, 2, 4, for entries equal on every key (rank_style shared)")),
      field("Meta (JSON object)", meta),
      advanced, err,
      el("div", { class: "row" }, save,
        el("button", { type: "button", class: "secondary", onclick: () => { editor.hidden = true; document.getElementById("board-new").focus(); } }, "Cancel")));
    form.addEventListener("submit", async (ev) => {
      ev.preventDefault();
      A.clearError(err);
      const boardId = id.value.trim();
      if (!boardId) { A.showError(err, "The board needs an id."); id.focus(); return; }
      // The body is spliced as text so that the JSON fields reach the
      // server exactly as typed: the server, not the page, judges them.
      const parts = [];
      const put = (k, v) => parts.push(JSON.stringify(k) + ":" + v);
      put("title", JSON.stringify(title.value));
      const keysOut = keysJSON(rows);
      if (keysOut.error) { A.showError(err, keysOut.error); keysOut.input.focus(); return; }
      put("keys", keysOut.text);
      // A group set or group board has mode latest (its entries are
      // written by podium).
      const grouped = raw.group_set.value.trim() || raw.group_board.value.trim();
      put("mode", JSON.stringify(grouped ? "latest" : mode.value));
      if (mode.value === "best_k") put("keep", keep.value.trim() === "" ? "null" : keep.value.trim());
      const reset = { every: every.value };
      if (tz.value.trim()) reset.tz = tz.value.trim();
      put("reset", JSON.stringify(reset));
      const kp = keepPeriods.value.trim();
      if (kp !== "" || !isNew) put("keep_periods", kp === "" ? "0" : kp);
      put("public", String(pub.checked));
      put("player_submit", String(ps.checked));
      put("rank_style", JSON.stringify(shared.checked ? "shared" : "unique"));
      const fields = [["meta", meta], ...Object.entries(raw)];
      for (const [name, area] of fields) {
        const text = area.value.trim();
        if (!text) {
          if (name === "meta" && !isNew) put("meta", "null");
          continue;
        }
        try { JSON.parse(text); } catch (e) {
          A.showError(err, name + ": not JSON (" + e.message + ")");
          area.focus();
          return;
        }
        put(name, text);
      }
      await A.busy(save, async () => {
        try {
          const out = await api("PUT", "/v1/boards/" + enc(boardId), "{" + parts.join(",") + "}");
          A.notify("Board " + out.id + (isNew ? " created." : " saved."));
          editor.hidden = true;
          load();
        } catch (e) {
          A.showError(err, e);
          err.focus();
        }
      });
    });
    editor.append(form, tzList());
    preview();
    (isNew ? id : title).focus();
  }

  let tzCache = null;
  function tzList() {
    if (!tzCache) {
      let zones = [];
      try { zones = Intl.supportedValuesOf("timeZone"); } catch (e) { zones = ["UTC"]; }
      tzCache = el("datalist", { id: "tz-list" }, zones.map((z) => el("option", { value: z })));
    }
    return tzCache;
  }

  // --- entries ---

  // openEntries shows a page of b's entries; focus moves to its heading
  // when the admin opened it from the list.
  async function openEntries(b, offset, period, focus) {
    entriesBox.hidden = false;
    entriesBox.dataset.board = b.id;
    entriesBox.textContent = "";
    const err = A.errorBox();
    const heading = el("h2", { id: "entries-title", tabIndex: -1 }, "Entries of " + b.id);
    entriesBox.append(heading, el("p", {}, el("a", { href: "/boards/" + enc(b.id) }, "Live page")), err);
    let data, periods = null;
    try {
      const q = "?include_hidden=true&limit=" + PAGE + "&offset=" + offset + (period ? "&period=" + enc(period) : "");
      [data, periods] = await Promise.all([
        api("GET", "/v1/boards/" + enc(b.id) + "/entries" + q),
        api("GET", "/v1/boards/" + enc(b.id) + "/periods").catch(() => null)]);
    } catch (e) {
      A.showError(err, e);
      return;
    }
    if (periods && periods.periods && periods.periods.length > 1) {
      const sel = el("select", { id: "entries-period" }, periods.periods.map((p) => el("option", { value: p.id }, p.id + " (" + p.entries + ")")));
      sel.value = data.period;
      sel.addEventListener("change", () => openEntries(b, 0, sel.value));
      entriesBox.append(field("Period", sel));
    }
    const keys = b.keys || [];
    const t = A.table("Entries of " + b.id + ", period " + data.period,
      ["Rank", "Player", "Name", ...keys.map((k) => Podium.keyLabel(k)), "When", "Actions"]);
    t.table.id = "entries-table";
    for (const e of data.entries || []) {
      const hideBtn = el("button", { type: "button", class: "small secondary", onclick: () => hide(e.player, !e.hidden) },
        e.hidden ? "Unhide" : "Hide");
      hideBtn.setAttribute("aria-label", (e.hidden ? "Unhide " : "Hide ") + e.player);
      t.tbody.append(el("tr", { dataset: { player: e.player, hidden: e.hidden ? "true" : "false" } },
        el("td", { class: "num" }, e.rank == null ? "\u2014" : String(e.rank)),
        el("th", { scope: "row" }, Podium.bdi(e.player), e.hidden ? el("span", { class: "badge" }, "hidden") : null),
        el("td", {}, Podium.bdi(e.name || "")),
        keys.map((k, i) => el("td", { class: "num", title: String(e.keys[i]) }, Podium.formatKey(e.keys[i], k))),
        el("td", {}, A.fmtTime(e.at)),
        el("td", { class: "actions" },
          el("button", { type: "button", class: "small danger", "aria-label": "Delete the entry of " + e.player,
            onclick: () => deleteEntry(e.player) }, "Delete entry"),
          hideBtn,
          el("button", { type: "button", class: "small secondary", "aria-label": "Evidence of " + e.player, onclick: () => evidence(e.player) }, "Evidence"))));
    }
    if (!(data.entries || []).length) t.tbody.append(el("tr", {}, el("td", { colSpan: keys.length + 5, class: "empty" }, "No entries in this period.")));
    const shown = (data.entries || []).length;
    const pager = el("div", { class: "row pager" },
      el("button", { type: "button", class: "small secondary", disabled: offset === 0, onclick: () => openEntries(b, Math.max(0, offset - PAGE), period) }, "Previous"),
      el("span", { id: "entries-range" }, shown ? (offset + 1) + "\u2013" + (offset + shown) + " of " + data.total : "0 of " + data.total),
      el("button", { type: "button", class: "small secondary", disabled: shown < PAGE, onclick: () => openEntries(b, offset + PAGE, period) }, "Next"));
    entriesBox.append(el("p", { class: "order-rule" }, Podium.orderRule(keys)), t.wrap, pager);
    if (b.group_set) entriesBox.append(groupPanel(b));
    if (focus) heading.focus();

    async function deleteEntry(player) {
      if (!(await A.confirm("Delete the entry of \u201c" + player + "\u201d in period " + data.period + " of " + b.id + "?", "Delete entry"))) return;
      try {
        await api("DELETE", "/v1/boards/" + enc(b.id) + "/entries/" + enc(player) + "?period=" + enc(data.period));
        A.notify("Entry of " + player + " deleted.");
        openEntries(b, offset, period);
        load();
      } catch (e) {
        A.showError(err, e);
      }
    }
    // evidence downloads the entry's evidence (a replay), if any.
    async function evidence(player) {
      try {
        await A.download("/v1/boards/" + enc(b.id) + "/entries/" + enc(player) + "/evidence",
          b.id.replace(/[^a-z0-9_.-]/g, "_") + "-" + player.replace(/[^A-Za-z0-9_.-]/g, "_") + ".jsonl.gz");
        A.notify("Evidence of " + player + " downloaded.");
      } catch (e) {
        if (e.status === 404) A.notify("No evidence for the entry of " + player + " (none uploaded, or expired).", true);
        else A.showError(err, e);
      }
    }
    async function hide(player, hidden) {
      try {
        await A.setHidden(player, hidden);
        A.notify(player + (hidden ? " is hidden from public rankings." : " is shown again."));
        openEntries(b, offset, period);
      } catch (e) {
        A.showError(err, e);
      }
    }
  }

  // groupPanel manages the members of one group of set b: list them
  // (paged by the server, shown 100 at a time), add and remove a player.
  function groupPanel(b) {
    const err = A.errorBox();
    const grp = el("input", { type: "text", id: "group-id", autocomplete: "off", spellcheck: false, required: true });
    const player = el("input", { type: "text", id: "group-player", autocomplete: "off", spellcheck: false });
    const list = el("div", { id: "group-members" });
    const path = () => "/v1/groups/" + enc(b.id) + "/" + enc(grp.value.trim()) + "/members";
    async function show() {
      A.clearError(err);
      list.textContent = "";
      if (!grp.value.trim()) { A.showError(err, "Give a group id."); grp.focus(); return; }
      try {
        const out = await api("GET", path() + "?limit=100");
        const t = A.table("Members of " + out.group + " (" + out.total + ")", ["Player", "Joined", "Actions"]);
        t.table.id = "group-members-table";
        for (const m of out.members) {
          t.tbody.append(el("tr", { dataset: { player: m.player } },
            el("th", { scope: "row" }, Podium.bdi(m.player)),
            el("td", {}, A.fmtTime(m.joined_at)),
            el("td", { class: "actions" }, el("button", { type: "button", class: "small danger", "aria-label": "Remove " + m.player,
              onclick: () => change("DELETE", m.player) }, "Remove"))));
        }
        if (!out.members.length) t.tbody.append(el("tr", {}, el("td", { colSpan: 3, class: "empty" }, "No members: the group does not exist.")));
        list.append(t.wrap);
      } catch (e) {
        A.showError(err, e);
      }
    }
    async function change(method, who) {
      A.clearError(err);
      if (!grp.value.trim() || !who) { A.showError(err, "Give a group id and a player."); return; }
      try {
        await api(method, path() + "/" + enc(who));
        A.notify(method === "PUT" ? who + " joined " + grp.value.trim() + "." : who + " left " + grp.value.trim() + ".");
        await show();
      } catch (e) {
        A.showError(err, e);
      }
    }
    const form = el("form", { class: "stack", id: "group-form", novalidate: true },
      el("h3", {}, "Group members"),
      el("div", { class: "row" }, field("Group id", grp), field("Player", player)),
      el("div", { class: "row" },
        el("button", { type: "submit", class: "small" }, "Show members"),
        el("button", { type: "button", class: "small secondary", id: "group-join", onclick: () => change("PUT", player.value.trim()) }, "Add player")),
      err, list);
    form.addEventListener("submit", (ev) => { ev.preventDefault(); show(); });
    return form;
  }

  A.tab({ id: "boards", title: "Boards", init, show: load });
})();
