// The board list, /: the public boards (GET /v1/boards), each linking to
// its live page.
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

  function render(boards) {
    const list = $("boards");
    list.textContent = "";
    for (const b of boards) {
      const li = el("li");
      li.dataset.board = b.id;
      const h = el("h2");
      const a = el("a", "", b.title || b.id);
      a.href = "/boards/" + encodeURIComponent(b.id);
      h.append(a);
      const dl = el("dl");
      pair(dl, "id", el("code", "", b.id));
      pair(dl, "keys", (b.keys || []).map((k) => k.name + (k.order === "asc" ? " (lower wins)" : " (higher wins)")).join(", "));
      pair(dl, "mode", b.mode);
      pair(dl, "resets", resetText(b));
      pair(dl, "period", b.period);
      li.append(h, dl);
      list.append(li);
    }
  }

  function load() {
    fetch("/v1/boards", { headers: { Accept: "application/json" } })
      .then((res) => res.json().then((body) => ({ res, body })))
      .then(({ res, body }) => {
        $("loading").hidden = true;
        if (!res.ok) throw new Error((body.error && body.error.message) || "HTTP " + res.status);
        const boards = (body.boards || []).filter((b) => b.public);
        $("notice").hidden = boards.length > 0;
        if (!boards.length) {
          $("notice").classList.remove("bad");
          $("notice").textContent = "No public boards yet. Create one with PUT /v1/boards/{board} and \"public\": true, or start the server with --demo.";
        }
        render(boards);
      })
      .catch((err) => {
        $("loading").hidden = true;
        $("notice").classList.add("bad");
        $("notice").textContent = "Could not load the boards: " + err.message;
        $("notice").hidden = false;
      });
  }

  load();
  setInterval(load, 60000);
})();
