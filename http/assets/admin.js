// The admin console, /admin: a client of the public API (docs/API.md) for
// someone who holds the admin key. This file is the frame: sign-in, the
// key in sessionStorage, the API wrapper, tabs, notices and the confirm
// dialog. Each tab is its own file that calls PodiumAdmin.tab({...})
// (admin-boards.js, admin-keys.js, ...); see docs/CONSOLE.md.
(function () {
  "use strict";

  const STORE = "podium.adminKey"; // sessionStorage only: never a cookie or the URL
  const $ = (id) => document.getElementById(id);
  const tabs = [];
  let current = null;
  let noticeTimer = 0;

  // el builds an element: attrs sets properties (on*, class, dataset,
  // hidden...) or attributes (aria-*, for, role...); children are nodes
  // or text.
  function el(tag, attrs, ...children) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === undefined || v === null || v === false) continue;
      if (k === "class") e.className = v;
      else if (k === "dataset") Object.assign(e.dataset, v);
      else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
      else if (k in e && !k.includes("-") && k !== "list" && k !== "form") e[k] = v;
      else e.setAttribute(k, v === true ? "" : String(v));
    }
    for (const c of children.flat()) {
      if (c === undefined || c === null || c === false) continue;
      e.append(c instanceof Node ? c : String(c));
    }
    return e;
  }

  // ApiError is an error answer of the API, with its status, code and
  // message (or a network failure: status 0).
  class ApiError extends Error {
    constructor(status, code, message) {
      super(message);
      this.status = status;
      this.code = code;
    }
    toString() {
      return this.status ? this.status + " " + this.code + ": " + this.message : this.message;
    }
  }

  function key() {
    try { return sessionStorage.getItem(STORE) || ""; } catch (e) { return ""; }
  }

  // api calls the API with the admin key. body: an object (sent as JSON),
  // a string (sent as it is: raw JSON typed by the admin, which the server
  // judges), or undefined. Resolves to the parsed answer (null for 204);
  // rejects with an ApiError carrying the server's message. A 401 or 403
  // signs out: the key is no longer an admin key.
  async function api(method, path, body, opts) {
    const headers = { Authorization: "Bearer " + key() };
    let payload;
    if (body !== undefined) {
      headers["Content-Type"] = "application/json";
      payload = typeof body === "string" ? body : JSON.stringify(body);
    }
    let res;
    try {
      res = await fetch(path, { method, headers, body: payload, cache: "no-store", credentials: "omit", referrerPolicy: "no-referrer" });
    } catch (err) {
      throw new ApiError(0, "network", "Could not reach the server (" + err.message + ").");
    }
    const text = await res.text();
    let data = null;
    if (text) {
      try { data = JSON.parse(text); } catch (e) { data = null; }
    }
    if (res.ok) return data;
    const e = data && data.error ? data.error : {};
    const err = new ApiError(res.status, e.code || "http_" + res.status, e.message || res.statusText || "request failed");
    // 403 codes other than forbidden (not_joined...) are about the
    // request, not the key.
    if ((res.status === 401 || (res.status === 403 && err.code === "forbidden")) && !(opts && opts.noSignOut)) {
      signOut("The server refused the admin key (" + err + "). Sign in again.");
    }
    throw err;
  }

  // download fetches a file with the key (a plain link could not carry
  // it) and saves it under name; errors as for api.
  async function download(path, name) {
    let res;
    try {
      res = await fetch(path, { headers: { Authorization: "Bearer " + key() }, cache: "no-store", credentials: "omit", referrerPolicy: "no-referrer" });
    } catch (err) {
      throw new ApiError(0, "network", "Could not reach the server (" + err.message + ").");
    }
    if (!res.ok) {
      const data = await res.json().catch(() => null);
      const e = data && data.error ? data.error : {};
      const err = new ApiError(res.status, e.code || "http_" + res.status, e.message || res.statusText);
      if (res.status === 401 || (res.status === 403 && err.code === "forbidden")) signOut("The server refused the admin key (" + err + "). Sign in again.");
      throw err;
    }
    const url = URL.createObjectURL(await res.blob());
    const a = el("a", { href: url, download: name, hidden: true });
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 60000);
  }

  function showError(target, err) {
    target.textContent = err instanceof ApiError ? String(err) : (err && err.message) || String(err);
    target.hidden = false;
  }

  function clearError(target) {
    target.textContent = "";
    target.hidden = true;
  }

  // notify shows a short message at the top (role=status: read out).
  function notify(text, bad) {
    const n = $("notice");
    clearTimeout(noticeTimer);
    n.textContent = text;
    n.classList.toggle("bad", !!bad);
    n.hidden = false;
    if (!bad) noticeTimer = setTimeout(() => { n.hidden = true; }, 6000);
  }

  // confirm asks in a modal dialog; resolves true when confirmed. Escape
  // and Cancel say no; focus returns to where it was.
  function confirm(text, okLabel) {
    const d = $("confirm");
    const back = document.activeElement;
    $("confirm-text").textContent = text;
    $("confirm-ok").textContent = okLabel || "Confirm";
    return new Promise((resolve) => {
      const done = (v) => {
        d.removeEventListener("close", onClose);
        $("confirm-ok").onclick = $("confirm-cancel").onclick = null;
        if (d.open) d.close();
        if (back && back.focus) back.focus();
        resolve(v);
      };
      const onClose = () => done(false);
      d.addEventListener("close", onClose);
      $("confirm-ok").onclick = () => done(true);
      $("confirm-cancel").onclick = () => done(false);
      d.showModal();
      $("confirm-cancel").focus();
    });
  }

  function fmtTime(iso) {
    if (!iso) return "\u2014";
    const d = new Date(iso);
    return Number.isFinite(d.getTime()) ? d.toLocaleString(undefined, { timeZoneName: "short" }) : String(iso); // with its zone
  }

  // field wraps a control with its label (and help text, linked by
  // aria-describedby).
  let uid = 0;
  function field(label, control, help) {
    if (!control.id) control.id = "f" + (++uid);
    const wrap = el("div", { class: "field" }, el("label", { for: control.id }, label), control);
    if (help) {
      const h = el("p", { class: "help", id: control.id + "-help" }, help);
      control.setAttribute("aria-describedby", h.id);
      wrap.append(h);
    }
    return wrap;
  }

  // errorBox is the place next to a form where the server's answer goes.
  function errorBox() {
    return el("p", { class: "error", role: "alert", tabIndex: -1, hidden: true });
  }

  // table builds a table with a caption (for screen readers) and headers;
  // the body is returned for rows.
  function table(caption, headers) {
    const tbody = el("tbody");
    const t = el("table", { class: "grid" },
      el("caption", { class: "visually-hidden" }, caption),
      el("thead", {}, el("tr", {}, headers.map((h) => el("th", { scope: "col" }, h)))), tbody);
    // On a phone each row is a card: its cells name their column.
    new MutationObserver(() => {
      for (const tr of tbody.rows) {
        Array.from(tr.cells).forEach((c, i) => {
          if (c.tagName === "TD" && headers[i] && !c.dataset.label && c.colSpan === 1) c.dataset.label = headers[i];
        });
      }
    }).observe(tbody, { childList: true });
    return { wrap: el("div", { class: "table-wrap" }, t), tbody, table: t };
  }

  // busy disables a button while a request runs.
  async function busy(button, fn) {
    button.disabled = true;
    try { return await fn(); } finally { button.disabled = false; }
  }

  const enc = encodeURIComponent;

  // setHidden hides or shows a player in public rankings. PUT replaces the
  // whole player, so its name and meta are read first and sent back; a
  // player never seen (404) has neither.
  async function setHidden(player, hidden) {
    let p = { name: "", meta: {} };
    try {
      p = await api("GET", "/v1/players/" + enc(player));
    } catch (err) {
      if (err.status !== 404) throw err;
    }
    return api("PUT", "/v1/players/" + enc(player), { name: p.name === player ? "" : p.name || "", hidden, meta: p.meta || {} });
  }

  // --- tabs ---

  // tab registers a section. def: {id, title, init(panel), show(),
  // detect()}: init builds the panel once; show runs each time the tab is
  // chosen; detect (optional) resolves false to leave the tab out, e.g.
  // when the server lacks its endpoints.
  function tab(def) {
    tabs.push(def);
  }

  function buildTabs() {
    const list = $("tabs"), panels = $("panels");
    list.textContent = "";
    panels.textContent = "";
    for (const t of tabs) {
      t.button = el("button", {
        type: "button", role: "tab", id: "tab-" + t.id, "aria-controls": "panel-" + t.id,
        "aria-selected": "false", tabIndex: -1, onclick: () => select(t, true),
      }, t.title);
      t.panel = el("section", { role: "tabpanel", id: "panel-" + t.id, "aria-labelledby": "tab-" + t.id, tabIndex: 0, hidden: true, class: "panel" });
      t.built = false;
      list.append(t.button);
      panels.append(t.panel);
      if (t.detect) {
        t.button.hidden = true;
        Promise.resolve().then(() => t.detect()).then((ok) => { t.button.hidden = !ok; }, () => { t.button.hidden = true; });
      }
    }
    list.onkeydown = (ev) => {
      const shown = tabs.filter((t) => !t.button.hidden);
      const i = shown.indexOf(current);
      let next = null;
      if (ev.key === "ArrowRight") next = shown[(i + 1) % shown.length];
      else if (ev.key === "ArrowLeft") next = shown[(i - 1 + shown.length) % shown.length];
      else if (ev.key === "Home") next = shown[0];
      else if (ev.key === "End") next = shown[shown.length - 1];
      if (next) {
        ev.preventDefault();
        select(next, true);
      }
    };
  }

  function select(t, focus) {
    for (const o of tabs) {
      const on = o === t;
      o.button.setAttribute("aria-selected", String(on));
      o.button.tabIndex = on ? 0 : -1;
      o.panel.hidden = !on;
    }
    current = t;
    try { sessionStorage.setItem("podium.adminTab", t.id); } catch (e) { /* private mode */ }
    if (focus) t.button.focus();
    if (!t.built) {
      t.built = true;
      t.init(t.panel);
    }
    if (t.show) t.show();
  }

  // --- sign-in ---

  function showConsole() {
    $("signin").hidden = true;
    $("console").hidden = false;
    $("signout").hidden = false;
    buildTabs();
    let id = "";
    try { id = sessionStorage.getItem("podium.adminTab") || ""; } catch (e) { /* ignore */ }
    select(tabs.find((t) => t.id === id && !t.detect) || tabs[0], false);
  }

  function signOut(message) {
    try {
      sessionStorage.removeItem(STORE);
      sessionStorage.removeItem("podium.adminTab");
    } catch (e) { /* ignore */ }
    $("console").hidden = true;
    $("signout").hidden = true;
    $("panels").textContent = "";
    $("tabs").textContent = "";
    $("signin").hidden = false;
    $("notice").hidden = true;
    const err = $("signin-error");
    if (message) showError(err, message); else clearError(err);
    $("signin-key").value = "";
    $("signin-key").focus();
  }

  async function signIn(ev) {
    ev.preventDefault();
    const input = $("signin-key"), err = $("signin-error");
    const k = input.value.trim();
    if (!k) {
      showError(err, "Paste the admin key first.");
      input.focus();
      return;
    }
    clearError(err);
    const button = ev.target.querySelector("button[type=submit]");
    await busy(button, async () => {
      // GET /v1/keys needs an admin key without board prefixes: the key
      // that can use every part of the console.
      try {
        const res = await fetch("/v1/keys", { headers: { Authorization: "Bearer " + k }, cache: "no-store", credentials: "omit" });
        if (res.ok) {
          sessionStorage.setItem(STORE, k);
          input.value = "";
          showConsole();
          return;
        }
        const data = await res.json().catch(() => ({}));
        const e = (data && data.error) || {};
        const why = res.status === 403
          ? "This key is valid but is not a global admin key (it lacks the admin scope or is limited to board prefixes)."
          : res.status === 401 ? "The server does not know this key (or it was revoked)." : "The server could not check the key.";
        showError(err, why + " (" + res.status + " " + (e.code || "") + ": " + (e.message || res.statusText) + ")");
      } catch (e) {
        showError(err, "Could not reach the server (" + e.message + ").");
      }
      input.focus();
    });
  }

  function start() {
    $("signin-form").addEventListener("submit", signIn);
    $("signout").addEventListener("click", () => signOut("Signed out. The key was removed from this tab."));
    if (key()) showConsole(); else $("signin-key").focus();
  }

  window.PodiumAdmin = { api, el, tab, notify, confirm, showError, clearError, fmtTime, field, errorBox, table, busy, enc, ApiError, signOut, setHidden, download };
  document.addEventListener("DOMContentLoaded", start);
})();
