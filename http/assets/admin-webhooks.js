// Console tab "Webhooks": register an endpoint (its secret is shown once),
// list the endpoints, disable or enable, rotate the secret, delete, and read
// an endpoint's delivery log with the redelivery of one event. Every value
// the server or a receiver gave (URLs, errors) is shown as text, never HTML.
(function () {
  "use strict";
  const A = window.PodiumAdmin;
  const { el, api, enc, field } = A;
  // The event types of docs/API.md ("Webhooks"); the server refuses one
  // it does not know, and says so.
  const TYPES = [
    ["leader.changed", "leader.changed: a new #1"],
    ["personal_best", "personal_best: a player's better entry (high volume)"],
    ["period.ended", "period.ended: a period ended, with its top N"],
    ["tournament.settled", "tournament.settled: the payouts"],
    ["league.settled", "league.settled: a league period's outcomes"],
    ["review.held", "review.held: a score held for review"],
    ["review.decided", "review.decided: a held score approved or rejected"],
    ["contest.frozen", "contest.frozen"],
    ["contest.ended", "contest.ended"],
    ["board.created", "board.created"],
    ["board.deleted", "board.deleted"],
  ];

  let listBox, listError, secretBox, logBox;

  // detect: shown when the server keeps webhooks (GET /v1/webhooks
  // answers; a server without them answers 404 or 503).
  async function detect() {
    try {
      await api("GET", "/v1/webhooks", undefined, { noSignOut: true });
      return true;
    } catch (e) {
      return e.status !== 404 && e.status !== 503 && e.status !== 0;
    }
  }

  function init(panel) {
    listError = A.errorBox();
    listBox = el("div", { class: "list" });
    logBox = el("div", { class: "card", id: "wh-log", hidden: true, role: "region", "aria-label": "Delivery log" });
    secretBox = el("div", { class: "secret card", hidden: true, id: "wh-secret-box", role: "region", "aria-label": "Endpoint secret" });
    const err = A.errorBox();
    const url = el("input", { type: "url", required: true, autocomplete: "off", spellcheck: false, id: "wh-url", placeholder: "https://game.example/podium-hook" });
    const types = TYPES.map(([t, label]) => el("label", {}, el("input", { type: "checkbox", value: t, class: "wh-type", id: "wh-type-" + t }), " " + label));
    const prefix = el("input", { type: "text", autocomplete: "off", spellcheck: false, id: "wh-prefix", placeholder: "weekly:" });
    const create = el("button", { type: "submit", id: "wh-create" }, "Create endpoint");
    const form = el("form", { class: "stack card", novalidate: true, id: "wh-form" },
      el("h3", {}, "New endpoint"),
      field("URL", url, "Where podium POSTs the signed events (http or https)."),
      el("fieldset", { class: "checks" }, el("legend", {}, "Event types"), types),
      field("Board or contest prefix", prefix, "Only events of boards or contests whose id starts with it; empty: all."),
      err, el("div", {}, create));
    form.addEventListener("submit", async (ev) => {
      ev.preventDefault();
      A.clearError(err);
      if (!url.value.trim()) { A.showError(err, "The endpoint needs a URL."); url.focus(); return; }
      const body = {
        url: url.value.trim(),
        types: Array.from(form.querySelectorAll(".wh-type:checked"), (c) => c.value),
        prefix: prefix.value.trim(),
      };
      await A.busy(create, async () => {
        try {
          showSecret(await api("POST", "/v1/webhooks", body), "created");
          form.reset();
          load();
        } catch (e) {
          A.showError(err, e);
          err.focus();
        }
      });
    });
    panel.append(el("h2", {}, "Webhooks"), secretBox, form,
      el("h3", {}, "Endpoints"), el("div", { class: "row toolbar" }, el("button", { type: "button", class: "secondary", onclick: load }, "Refresh")),
      listError, listBox, logBox);
  }

  // showSecret shows an endpoint's secret after a create or a rotation:
  // the only times the server gives it.
  function showSecret(ep, what) {
    secretBox.textContent = "";
    const code = el("code", { id: "wh-secret" }, ep.secret);
    const done = el("button", { type: "button", class: "small secondary", onclick: () => {
      secretBox.hidden = true;
      secretBox.textContent = "";
      document.getElementById("wh-url").focus();
    } }, "Done: I have stored it");
    secretBox.append(
      el("h3", { tabIndex: -1 }, "Endpoint " + ep.id + " " + what),
      el("p", {}, "This secret signs the deliveries (webhook-signature) and is shown once. Store it in the receiver now."),
      el("p", { class: "row" }, code), done);
    secretBox.hidden = false;
    secretBox.querySelector("h3").focus();
  }

  async function load() {
    A.clearError(listError);
    let data;
    try {
      data = await api("GET", "/v1/webhooks");
    } catch (e) {
      A.showError(listError, e);
      return;
    }
    listBox.textContent = "";
    const eps = data.webhooks || [];
    if (!eps.length) {
      listBox.append(el("p", { class: "empty" }, "No webhook endpoints."));
      return;
    }
    const t = A.table("Webhook endpoints", ["Id", "URL", "Types", "Prefix", "State", "Actions"]);
    t.table.id = "wh-table";
    for (const ep of eps) {
      const b = (label, cls, fn) => el("button", { type: "button", class: "small " + cls, "aria-label": label + " " + ep.id, onclick: fn }, label);
      t.tbody.append(el("tr", { dataset: { endpoint: ep.id } },
        el("th", { scope: "row" }, el("code", {}, ep.id)),
        el("td", {}, el("code", { class: "wh-url" }, ep.url)),
        el("td", {}, (ep.types || []).join(", ")),
        el("td", {}, ep.prefix || "all"),
        el("td", {}, ep.disabled ? "disabled" : "enabled"),
        el("td", { class: "actions" },
          b("Deliveries", "secondary", () => showLog(ep, 0)),
          b(ep.disabled ? "Enable" : "Disable", "secondary", () => setDisabled(ep, !ep.disabled)),
          b("Rotate", "secondary", () => rotate(ep)),
          b("Delete", "danger", () => remove(ep)))));
    }
    listBox.append(t.wrap);
  }

  async function setDisabled(ep, disabled) {
    try {
      await api("PATCH", "/v1/webhooks/" + enc(ep.id), { disabled });
      A.notify("Endpoint " + ep.id + (disabled ? " disabled." : " enabled."));
      load();
    } catch (e) {
      A.showError(listError, e);
    }
  }

  async function rotate(ep) {
    if (!(await A.confirm("Rotate the secret of endpoint " + ep.id + "? Deliveries are signed with the old and the new secret for a while, then with the new one only.", "Rotate"))) return;
    try {
      showSecret(await api("POST", "/v1/webhooks/" + enc(ep.id) + "/rotate"), "rotated");
    } catch (e) {
      A.showError(listError, e);
    }
  }

  async function remove(ep) {
    if (!(await A.confirm("Delete endpoint " + ep.id + "? Its pending deliveries and its log go with it.", "Delete endpoint"))) return;
    try {
      await api("DELETE", "/v1/webhooks/" + enc(ep.id));
      A.notify("Endpoint " + ep.id + " deleted.");
      if (logBox.dataset.endpoint === ep.id) logBox.hidden = true;
      load();
    } catch (e) {
      A.showError(listError, e);
    }
  }

  // showLog shows the endpoint's delivery log, newest first, 50 at a time
  // from before (0: the newest).
  async function showLog(ep, before) {
    const err = A.errorBox();
    const status = el("select", { id: "wh-log-status" }, ["", "pending", "delivered", "failed"].map((s) => el("option", { value: s }, s || "all")));
    status.value = logBox.dataset.endpoint === ep.id ? (logBox.dataset.status || "") : "";
    status.addEventListener("change", () => { logBox.dataset.status = status.value; showLog(ep, 0); });
    logBox.dataset.endpoint = ep.id;
    logBox.textContent = "";
    logBox.hidden = false;
    logBox.append(el("h3", { tabIndex: -1, id: "wh-log-title" }, "Deliveries to " + ep.id),
      el("p", { class: "help" }, el("code", {}, ep.url)),
      el("div", { class: "row toolbar" }, field("Status", status), el("button", { type: "button", class: "secondary", onclick: () => showLog(ep, 0) }, "Refresh")),
      err);
    let q = "?limit=50";
    if (status.value) q += "&status=" + enc(status.value);
    if (before) q += "&before=" + before;
    let data;
    try {
      data = await api("GET", "/v1/webhooks/" + enc(ep.id) + "/deliveries" + q);
    } catch (e) {
      A.showError(err, e);
      return;
    }
    const ds = data.deliveries || [];
    if (!ds.length) {
      logBox.append(el("p", { class: "empty" }, "No deliveries."));
      return;
    }
    const t = A.table("Deliveries to " + ep.id, ["Event", "Type", "Board", "Status", "Attempts", "Last answer", "Last error", "Latency", "Updated", "Actions"]);
    t.table.id = "wh-log-table";
    for (const d of ds) {
      const ev = d.event || {};
      const state = d.status === "pending" && d.next_attempt_at ? "pending (next " + A.fmtTime(d.next_attempt_at) + ")" : d.status;
      t.tbody.append(el("tr", { dataset: { event: ev.id } },
        el("th", { scope: "row" }, el("code", {}, ev.id)),
        el("td", {}, ev.type),
        el("td", {}, ev.board || ""),
        el("td", {}, state),
        el("td", {}, String(d.attempts)),
        el("td", {}, d.last_status ? String(d.last_status) : ""),
        el("td", { class: "wh-error" }, d.last_error || ""),
        el("td", {}, d.attempts ? d.latency_ms + " ms" : ""),
        el("td", {}, A.fmtTime(d.updated_at)),
        el("td", { class: "actions" }, el("button", { type: "button", class: "small secondary", "aria-label": "Redeliver " + ev.id,
          onclick: () => redeliver(ep, ev.id, err) }, "Redeliver"))));
    }
    logBox.append(t.wrap);
    if (data.next_before) {
      logBox.append(el("div", { class: "row pager" },
        el("button", { type: "button", class: "small secondary", onclick: () => showLog(ep, data.next_before) }, "Older")));
    }
  }

  async function redeliver(ep, id, err) {
    A.clearError(err);
    try {
      await api("POST", "/v1/webhooks/" + enc(ep.id) + "/redeliver", { event: id });
      A.notify("Event " + id + " queued for redelivery to " + ep.id + ".");
      showLog(ep, 0);
    } catch (e) {
      A.showError(err, e);
    }
  }

  A.tab({ id: "webhooks", title: "Webhooks", init, show: load, detect });
})();
