// Console tab "API keys": create a key (its secret is shown once, with a
// copy button), list the keys, revoke one.
(function () {
  "use strict";
  const A = window.PodiumAdmin;
  const { el, api, enc, field } = A;
  const SCOPES = [
    ["read", "read: private boards and players"],
    ["submit", "submit: scores, joins, attempts"],
    ["admin", "admin: everything (implies the others)"],
    ["sessions", "sessions: issue and revoke player sessions"],
    ["review", "review: the moderation queue (approve, reject)"],
  ];

  let listBox, listError, secretBox;

  function init(panel) {
    listError = A.errorBox();
    listBox = el("div", { class: "list" });
    secretBox = el("div", { class: "secret card", hidden: true, id: "key-secret-box", role: "region", "aria-label": "New key secret" });
    const err = A.errorBox();
    const name = el("input", { type: "text", required: true, autocomplete: "off", id: "key-name" });
    const scopes = SCOPES.map(([s, label]) => el("label", {}, el("input", { type: "checkbox", value: s, class: "key-scope", id: "key-scope-" + s }), " " + label));
    const boards = el("input", { type: "text", autocomplete: "off", spellcheck: false, id: "key-boards", placeholder: "ms:, weekly:" });
    const create = el("button", { type: "submit", id: "key-create" }, "Create key");
    const form = el("form", { class: "stack card", novalidate: true, id: "key-form" },
      el("h3", {}, "New key"),
      field("Name", name, "What the key is for, e.g. game-server."),
      el("fieldset", { class: "checks" }, el("legend", {}, "Scopes"), scopes),
      field("Board prefixes", boards, "Comma-separated board id prefixes the key is limited to; empty: every board."),
      err, el("div", {}, create));
    form.addEventListener("submit", async (ev) => {
      ev.preventDefault();
      A.clearError(err);
      if (!name.value.trim()) { A.showError(err, "The key needs a name."); name.focus(); return; }
      const body = {
        name: name.value.trim(),
        scopes: Array.from(form.querySelectorAll(".key-scope:checked"), (c) => c.value),
        boards: boards.value.split(",").map((s) => s.trim()).filter(Boolean),
      };
      await A.busy(create, async () => {
        try {
          const k = await api("POST", "/v1/keys", body);
          showSecret(k);
          form.reset();
          load();
        } catch (e) {
          A.showError(err, e);
          err.focus();
        }
      });
    });
    panel.append(el("h2", {}, "API keys"), secretBox, form,
      el("h3", {}, "Keys"), el("div", { class: "row toolbar" }, el("button", { type: "button", class: "secondary", onclick: load }, "Refresh")),
      listError, listBox);
  }

  // showSecret shows a new key's secret: the only time the server gives it.
  function showSecret(k) {
    secretBox.textContent = "";
    const code = el("code", { id: "key-secret" }, k.key);
    const copy = el("button", { type: "button", class: "small", id: "key-copy", onclick: async () => {
      try {
        await navigator.clipboard.writeText(k.key);
        status.textContent = "Copied.";
      } catch (e) {
        // Without clipboard access, select the text for a manual copy.
        const r = document.createRange();
        r.selectNodeContents(code);
        const sel = getSelection();
        sel.removeAllRanges();
        sel.addRange(r);
        status.textContent = "Selected: press Ctrl+C (\u2318C) to copy.";
      }
    } }, "Copy");
    const status = el("span", { class: "help", role: "status" });
    const done = el("button", { type: "button", class: "small secondary", onclick: () => {
      secretBox.hidden = true;
      secretBox.textContent = "";
      document.getElementById("key-name").focus();
    } }, "Done: I have stored it");
    secretBox.append(
      el("h3", { tabIndex: -1, id: "key-secret-title" }, "Key \u201c" + k.name + "\u201d (" + k.id + ") created"),
      el("p", {}, "This secret is shown once: podium keeps only its hash. Store it now."),
      el("p", { class: "row" }, code, copy, status), done);
    secretBox.hidden = false;
    secretBox.querySelector("h3").focus();
  }

  async function load() {
    A.clearError(listError);
    let data;
    try {
      data = await api("GET", "/v1/keys");
    } catch (e) {
      A.showError(listError, e);
      return;
    }
    listBox.textContent = "";
    const keys = data.keys || [];
    if (!keys.length) {
      listBox.append(el("p", { class: "empty" }, "No API keys (the admin key is not listed)."));
      return;
    }
    const t = A.table("API keys", ["Id", "Name", "Scopes", "Board prefixes", "Created", "Actions"]);
    t.table.id = "keys-table";
    for (const k of keys) {
      t.tbody.append(el("tr", { dataset: { key: k.id } },
        el("th", { scope: "row" }, el("code", {}, k.id)),
        el("td", {}, k.name),
        el("td", {}, (k.scopes || []).join(", ")),
        el("td", {}, (k.boards || []).length ? k.boards.join(", ") : "all"),
        el("td", {}, A.fmtTime(k.created_at)),
        el("td", { class: "actions" }, el("button", { type: "button", class: "small danger", "aria-label": "Revoke " + k.name + " (" + k.id + ")",
          onclick: () => revoke(k) }, "Revoke"))));
    }
    listBox.append(t.wrap);
  }

  async function revoke(k) {
    if (!(await A.confirm("Revoke key \u201c" + k.name + "\u201d (" + k.id + ")? It stops working at once, and its live streams end.", "Revoke key"))) return;
    try {
      await api("DELETE", "/v1/keys/" + enc(k.id));
      A.notify("Key " + k.name + " revoked.");
      load();
    } catch (e) {
      A.showError(listError, e);
    }
  }

  A.tab({ id: "keys", title: "API keys", init, show: load });
})();
