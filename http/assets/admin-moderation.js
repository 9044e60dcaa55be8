// Console tab "Moderation": the review queue (GET /v1/review) with each
// item's entry now, the player's recent history, meta and evidence;
// approve and reject with a reason (a rejection needs one: the server
// says so). Written against the moderation contract
// (GET /v1/review?status=&board=&cursor=&limit= -> {"items", "next_cursor"};
// POST /v1/review/{id}/approve|reject {"reason"}), and feature-detected:
// the tab stays hidden while the server answers GET /v1/review with 404,
// so this console runs unchanged on servers without moderation.
//
// To extend the console, a tab is one file like this one: call
// PodiumAdmin.tab({id, title, init(panel), show(), detect()}) and add a
// <script> line to admin.html. docs/CONSOLE.md says more.
(function () {
  "use strict";
  const A = window.PodiumAdmin;
  const { el, api, enc, field } = A;
  const PAGE = 50;

  let listBox, listError, status, board;

  // detect: a server without moderation has no such route (404). Any
  // other answer, even an error, means the endpoint exists.
  async function detect() {
    try {
      await api("GET", "/v1/review?limit=1", undefined, { noSignOut: true });
      return true;
    } catch (e) {
      return e.status !== 404 && e.status !== 0;
    }
  }

  function init(panel) {
    listError = A.errorBox();
    listBox = el("div", { class: "list" });
    status = el("select", { id: "review-status" }, ["pending", "approved", "rejected", "all"].map((s) => el("option", { value: s }, s)));
    board = el("input", { type: "text", id: "review-board", autocomplete: "off", spellcheck: false });
    const form = el("form", { class: "row", novalidate: true, role: "search" },
      field("Status", status), field("Board (optional)", board),
      el("div", { class: "field end" }, el("button", { type: "submit" }, "Show")));
    form.addEventListener("submit", (ev) => { ev.preventDefault(); load(""); });
    panel.append(el("h2", {}, "Moderation queue"), form, listError, listBox);
  }

  async function load(cursor) {
    A.clearError(listError);
    let q = "?limit=" + PAGE + "&status=" + enc(status.value);
    if (board.value.trim()) q += "&board=" + enc(board.value.trim());
    if (cursor) q += "&cursor=" + enc(cursor);
    let data;
    try {
      data = await api("GET", "/v1/review" + q);
    } catch (e) {
      A.showError(listError, e);
      return;
    }
    listBox.textContent = "";
    const items = data.items || [];
    if (!items.length) {
      listBox.append(el("p", { class: "empty" }, "Nothing to review."));
      return;
    }
    const t = A.table("Review queue", ["Submitted", "Board", "Player", "Keys", "Reason", "Status", "Entry now", "Recent history", "Evidence and meta", "Actions"]);
    t.table.id = "review-table";
    for (const it of items) {
      const note = el("input", { type: "text", class: "small-input", autocomplete: "off", "aria-label": "Reason for the decision on " + it.id });
      const decide = (what) => async () => {
        try {
          await api("POST", "/v1/review/" + enc(it.id) + "/" + what, { reason: note.value });
          A.notify(Podium.isolate(it.player) + " on " + it.board + ": " + (what === "approve" ? "approved." : "rejected."));
          load(cursor);
        } catch (e) {
          A.showError(listError, e);
        }
      };
      t.tbody.append(el("tr", { dataset: { review: it.id } },
        el("td", {}, A.fmtTime(it.submitted_at)),
        el("td", {}, el("a", { href: "/boards/" + enc(it.board) }, it.board)),
        el("th", { scope: "row" }, Podium.bdi(it.player)),
        el("td", {}, (it.keys || []).join(" \u00b7 ")),
        el("td", {}, it.reason || ""),
        el("td", {}, it.status + (it.decision && it.decision.reason ? " (" + it.decision.reason + ")" : "")),
        el("td", {}, it.entry ? "#" + it.entry.rank + ": " + (it.entry.keys || []).join(" \u00b7 ") : "none"),
        el("td", {}, (it.history || []).length ? el("ul", { class: "plain" }, it.history.map((h) =>
          el("li", {}, h.kind + " " + (h.keys || []).join(" \u00b7 ") + " (" + h.period + ", " + A.fmtTime(h.at) + ")"))) : "none"),
        el("td", {}, el("code", { class: "meta-json" }, JSON.stringify(it.meta || {})),
          evidencePath(it) ? el("button", { type: "button", class: "small secondary",
            onclick: () => A.download(evidencePath(it), it.id + ".jsonl.gz").catch((e) => A.showError(listError, e)) },
            "Evidence (" + it.evidence.events + " events, " + Math.max(1, Math.round(it.evidence.bytes / 1024)) + " KiB)") : null),
        el("td", { class: "actions" }, it.status === "pending" ? [note,
          el("button", { type: "button", class: "small", onclick: decide("approve") }, "Approve"),
          el("button", { type: "button", class: "small danger", onclick: decide("reject") }, "Reject")] : null)));
    }
    listBox.append(t.wrap);
    if (data.next_cursor) {
      listBox.append(el("div", { class: "row pager" },
        el("button", { type: "button", class: "small secondary", onclick: () => load(data.next_cursor) }, "Next page")));
    }
  }

  // evidencePath is where an item's evidence downloads from: the path the
  // server gives (pending items: by review id), else the approved seq's.
  function evidencePath(it) {
    const ev = it.evidence;
    if (!ev) return "";
    if (ev.download) return ev.download;
    if (it.decision && it.decision.seq) return "/v1/boards/" + enc(it.board) + "/entries/" + enc(it.player) + "/evidence?seq=" + it.decision.seq;
    return "";
  }

  A.tab({ id: "moderation", title: "Moderation", init, show: () => load(""), detect });
})();
