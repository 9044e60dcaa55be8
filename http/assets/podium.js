/*
 * podium client: live leaderboards in the browser, with no dependencies.
 * Served by every podium server at /v1/client.js; documented in docs/CLIENT.md.
 *
 *   const lb = Podium.watch({board: "ms:expert", onUpdate(state, info) {...}});
 *   lb.close();
 *
 * The client keeps the top `limit` entries of a board from its snapshot and
 * delta events, checks that every delta follows the state it holds (same
 * snapshot_id, prev_seq equal to the last seq) and takes a fresh snapshot
 * when one does not, and reconnects on its own with exponential backoff and
 * full jitter, resuming from the last event it applied.
 */
(function (root) {
  "use strict";

  // Error codes after which retrying cannot help: the watcher stops.
  const FATAL = new Set(["board_not_found", "not_found", "unauthenticated", "forbidden",
    "invalid_argument", "invalid_json"]);

  // The server this script was loaded from is the default server: a page
  // that includes https://podium.example/v1/client.js talks to
  // https://podium.example (also behind a path prefix).
  const scriptBase = (function () {
    try {
      const s = typeof document !== "undefined" && document.currentScript;
      if (s && s.src) {
        const u = new URL(s.src);
        const m = /^(.*?)\/(?:v1\/client|assets\/podium)\.js$/.exec(u.pathname);
        return u.origin + (m ? m[1] : "");
      }
    } catch (_) { /* fall through */ }
    return typeof location !== "undefined" ? location.origin : "";
  })();

  const noop = function () {};

  function intOption(v, def, lo, hi) {
    const n = Number(v);
    if (v === undefined || v === null || v === "" || !Number.isFinite(n)) return def;
    return Math.min(hi, Math.max(lo, Math.trunc(n)));
  }

  function sameKeys(a, b) {
    if (!a || !b || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
    return true;
  }

  // entry copies the fields of a ranked entry, leaving out the delta-only
  // prev_rank so that entries in a state all look alike.
  // A best_k board's entries also carry results (the kept results, best
  // first), a current points board's value (the decayed points) and a
  // board with rank_style shared rank_shared (1, 2, 2, 4).
  function entry(e) {
    const out = { rank: e.rank, player: e.player, name: e.name, keys: e.keys || [], at: e.at, meta: e.meta };
    if (e.results) out.results = e.results;
    if (e.value !== undefined) out.value = e.value;
    if (e.rank_shared !== undefined) out.rank_shared = e.rank_shared;
    return out;
  }

  /**
   * percentile is the share of the total entries strictly behind the one at
   * rank, in percent, rounded down to 2 decimals: the REST reads' percentile
   * (docs/API.md). Events carry rank and total, not the percentile, which
   * moves for every entry whenever the total does.
   */
  function percentile(rank, total) {
    if (!(total >= 1) || !(rank >= 1) || rank > total) return 0;
    return Math.floor(10000 * (total - rank) / total) / 100;
  }

  // withPercentiles sets each entry's percentile from the state's total.
  function withPercentiles(state) {
    for (const e of state.entries) e.percentile = percentile(e.rank, state.total);
    return state;
  }

  // Watcher follows one board. Create it with Podium.watch.
  class Watcher {
    constructor(opts) {
      if (!opts || !opts.board) throw new TypeError("Podium.watch: the board option is required");
      this.board = String(opts.board);
      this.url = String(opts.url || scriptBase).replace(/\/+$/, "");
      this.limit = intOption(opts.limit, 50, 1, 1000);
      this.key = opts.key ? String(opts.key) : "";
      this.transport = opts.transport || (this.key ? "ws" : "sse");
      if (this.transport !== "sse" && this.transport !== "ws") {
        throw new TypeError('Podium.watch: transport must be "sse" or "ws"');
      }
      // collection "contests" follows a CTF contest's public standings
      // (GET /v1/contests/{id}/stream, SSE only) instead of a board.
      this.collection = opts.collection === "contests" ? "contests" : "boards";
      if (this.collection === "contests" && this.transport !== "sse") {
        throw new TypeError('Podium.watch: contests stream over "sse" only');
      }
      if (this.transport === "sse" && this.key) {
        throw new TypeError('Podium.watch: EventSource cannot send an API key; use transport "ws" for private boards');
      }
      this.minDelay = intOption(opts.minDelay, 1000, 1, 3600e3);
      this.maxDelay = Math.max(this.minDelay, intOption(opts.maxDelay, 30000, 1, 3600e3));
      this.healthyAfter = intOption(opts.healthyAfter, 5000, 0, 3600e3);
      this.pingEvery = intOption(opts.pingEvery, 20000, 1000, 3600e3);
      this.onUpdate = opts.onUpdate || noop;
      this.onStatus = opts.onStatus || noop;

      this._state = null;    // the last complete state handed to onUpdate
      this._base = null;     // {snapshotId, seq} the next delta must follow; null while a snapshot is awaited
      this._lastId = "";     // id of the last applied event, sent back to resume
      this._prevPeriod = ""; // set by a period event, reported with the snapshot that follows
      this._attempt = 0;     // consecutive failed connections
      this._gen = 0;         // connection generation: events of an older connection are ignored
      this._conn = null;
      this._timer = 0;
      this._opened = false;
      this._liveSince = 0;
      this._lastResync = 0;
      this._closed = false;
      this._status = { state: "connecting", transport: this.transport, attempt: 0, retry_at: null, delay: 0, error: null };

      this._onOnline = () => {
        if (this._timer && !this._closed) { // waiting to retry: the network is back, try now
          clearTimeout(this._timer);
          this._timer = 0;
          this._connect();
        }
      };
      if (typeof addEventListener === "function") addEventListener("online", this._onOnline);
      this._emitStatus();
      this._connect();
    }

    /** The last state (see onUpdate), or null before the first snapshot. */
    get state() { return this._state; }

    /** The current connection status (see onStatus). */
    get status() { return Object.assign({}, this._status); }

    /** Reconnects now, skipping any backoff wait (e.g. on a "retry now" button). */
    reconnect() {
      if (this._closed) return;
      clearTimeout(this._timer);
      this._timer = 0;
      this._disconnect();
      this._setStatus({ state: "reconnecting", retry_at: null, delay: 0 });
      this._connect();
    }

    /** Stops watching: closes the connection and cancels any retry. */
    close() {
      if (this._closed) return;
      this._closed = true;
      clearTimeout(this._timer);
      this._timer = 0;
      this._disconnect();
      if (typeof removeEventListener === "function") removeEventListener("online", this._onOnline);
      this._setStatus({ state: "closed", retry_at: null });
    }

    // --- connections ---

    _connect() {
      if (this._closed) return;
      this._disconnect();
      const gen = ++this._gen;
      this._opened = false;
      try {
        if (this.transport === "ws") this._openWS(gen);
        else this._openSSE(gen);
      } catch (err) { // a malformed url: retrying cannot help
        this._fail("invalid_argument", String(err && err.message || err));
      }
    }

    _disconnect() {
      this._gen++;
      if (this._conn) {
        const c = this._conn;
        this._conn = null;
        c.close();
      }
    }

    _streamURL() {
      let u = this.url + "/v1/" + this.collection + "/" + encodeURIComponent(this.board) + "/stream?limit=" + this.limit;
      if (this._lastId) u += "&last_event_id=" + encodeURIComponent(this._lastId);
      return u;
    }

    _openSSE(gen) {
      const u = this._streamURL();
      // The native auto-retry has no backoff or jitter: every error closes
      // the EventSource and the watcher decides when to come back.
      const es = new EventSource(u);
      this._conn = { close() { es.close(); }, send: null };
      const on = (type, fn) => es.addEventListener(type, (e) => { if (gen === this._gen) fn(e); });
      on("open", () => this._connected());
      on("snapshot", (e) => this._message(e.data));
      on("delta", (e) => this._message(e.data));
      on("period", (e) => this._message(e.data));
      on("error", (e) => {
        if (typeof e.data === "string") { // the server's "error" event, not a failed connection
          this._message(e.data);
          return;
        }
        es.close();
        this._dropped();
      });
    }

    _openWS(gen) {
      let u = this.url.replace(/^http/, "ws") + "/v1/stream";
      if (this.key) u += "?key=" + encodeURIComponent(this.key);
      const ws = new WebSocket(u);
      let ping = 0;
      let heard = Date.now();
      const send = (msg) => { if (ws.readyState === 1) ws.send(JSON.stringify(msg)); };
      const stop = () => { clearInterval(ping); ping = 0; };
      this._conn = {
        close() { stop(); ws.onclose = null; try { ws.close(1000); } catch (_) { /* already closed */ } },
        send,
      };
      ws.onopen = () => {
        if (gen !== this._gen) return;
        this._connected();
        const sub = { op: "subscribe", board: this.board, limit: this.limit, id: "subscribe" };
        if (this._lastId) sub.last_event_id = this._lastId;
        send(sub);
        // Browsers hide WebSocket ping frames, so the watcher pings itself
        // and gives up on a connection that stays silent.
        ping = setInterval(() => {
          if (Date.now() - heard > 2.5 * this.pingEvery) {
            stop();
            ws.onclose = null;
            ws.close();
            if (gen === this._gen) this._dropped();
            return;
          }
          send({ op: "ping" });
        }, this.pingEvery);
      };
      ws.onmessage = (e) => {
        if (gen !== this._gen) return;
        heard = Date.now();
        this._message(e.data);
      };
      ws.onerror = noop; // onclose follows
      ws.onclose = () => {
        stop();
        if (gen === this._gen) this._dropped();
      };
    }

    // _connected runs when the transport is open. The watcher is live at
    // once when it resumes a state it holds (the server sends only what was
    // missed, possibly nothing); otherwise when the snapshot arrives.
    _connected() {
      this._opened = true;
      if (this._base) this._live();
      else this._setStatus({ state: this._state ? "reconnecting" : "connecting", retry_at: null, delay: 0 });
    }

    _live() {
      if (this._status.state !== "live") {
        this._liveSince = Date.now();
        this._setStatus({ state: "live", retry_at: null, delay: 0, error: null });
      }
    }

    // _dropped runs when a connection ends without the watcher asking:
    // schedule the next attempt with exponential backoff and full jitter.
    _dropped() {
      if (this._closed) return;
      const opened = this._opened;
      this._disconnect();
      if (this._liveSince && Date.now() - this._liveSince >= this.healthyAfter) {
        this._attempt = 0; // it was a healthy connection: start the backoff over
      }
      this._liveSince = 0;
      const ceiling = Math.min(this.maxDelay, this.minDelay * Math.pow(2, this._attempt));
      const delay = Math.max(50, Math.round(Math.random() * ceiling));
      this._attempt++;
      this._timer = setTimeout(() => {
        this._timer = 0;
        this._setStatus({ state: "reconnecting", retry_at: null, delay: 0 });
        this._connect();
      }, delay);
      this._setStatus({ state: "reconnecting", retry_at: Date.now() + delay, delay });
      // EventSource does not tell why it failed. When it never opened, ask
      // again with fetch, which sees the status: a deleted board, a refused
      // key or a bad limit is final.
      if (!opened && this.transport === "sse") this._probe();
    }

    _probe() {
      if (typeof fetch !== "function") return;
      const gen = this._gen;
      const ctl = typeof AbortController === "function" ? new AbortController() : null;
      fetch(this._streamURL(), { headers: { Accept: "text/event-stream" }, cache: "no-store", signal: ctl ? ctl.signal : undefined })
        .then((res) => {
          if (res.status !== 400 && res.status !== 401 && res.status !== 403 && res.status !== 404 && res.status !== 410) {
            if (ctl) ctl.abort(); // a stream, or a failure worth retrying (429, 503): back to the backoff
            return;
          }
          return res.json().catch(() => ({})).then((body) => {
            if (gen !== this._gen || this._closed) return;
            const e = (body && body.error) || {};
            this._fail(e.code || (res.status === 404 ? "board_not_found" : "invalid_argument"),
              e.message || "the board cannot be read (HTTP " + res.status + ")");
          });
        })
        .catch(noop); // the server is unreachable: keep backing off
    }

    // _resync drops the state's continuity and asks for a fresh snapshot.
    _resync() {
      this._base = null;
      this._lastId = "";
      const now = Date.now();
      const again = now - this._lastResync < 2000;
      this._lastResync = now;
      if (this._conn && this._conn.send && !again) {
        // WebSocket: resubscribe on the same connection; deltas are ignored
        // until the snapshot arrives.
        this._conn.send({ op: "unsubscribe", board: this.board, id: "unsubscribe" });
        this._conn.send({ op: "subscribe", board: this.board, limit: this.limit, id: "subscribe" });
      } else if (again) {
        this._dropped(); // gaps in a row: back off instead of spinning
      } else {
        this._connect();
      }
    }

    _fail(code, message) {
      clearTimeout(this._timer);
      this._timer = 0;
      this._disconnect();
      this._closed = true;
      if (typeof removeEventListener === "function") removeEventListener("online", this._onOnline);
      this._setStatus({ state: "error", retry_at: null, delay: 0, error: { code, message } });
    }

    // --- events ---

    _message(data) {
      let msg;
      try { msg = JSON.parse(data); } catch (_) { return; }
      if (!msg || typeof msg !== "object") return;
      if (msg.board && msg.board !== this.board) return;
      switch (msg.type) {
        case "snapshot": this._snapshot(msg); break;
        case "delta": this._delta(msg); break;
        case "period":
          // A snapshot of the new period follows; deltas wait for it.
          if (this._state && !this._prevPeriod) this._prevPeriod = msg.previous || this._state.period;
          this._base = null;
          break;
        case "subscribed":
          if (this._base) this._live();
          break;
        case "error":
          if (msg.id === "unsubscribe") break; // the resync's unsubscribe found nothing to end: harmless
          if (FATAL.has(msg.code)) this._fail(msg.code, msg.message || msg.code);
          else this._dropped();
          break;
        default: // pong, unsubscribed, and types added later
      }
    }

    _snapshot(m) {
      const old = this._state;
      const state = {
        board: m.board, title: m.title, keys: m.keys || [], period: m.period, next_reset: m.next_reset || null,
        seq: m.seq, snapshot_id: m.snapshot_id, limit: m.limit || this.limit, total: m.total,
        entries: (m.entries || []).map(entry),
      };
      const info = { type: "snapshot", initial: !old, moved: [], entered: [], left: [], changed: [], previous_period: null };
      if (this._prevPeriod || (old && old.period !== state.period)) {
        info.previous_period = this._prevPeriod || old.period;
      } else if (old) {
        // A snapshot after a reconnect or a gap: report what changed while
        // the watcher was not following, like a delta would.
        const before = new Map(old.entries.map((e) => [e.player, e]));
        for (const e of state.entries) {
          const o = before.get(e.player);
          before.delete(e.player);
          if (!o) { info.entered.push(e); info.changed.push(Object.assign({ prev_rank: null }, e)); continue; }
          if (o.rank !== e.rank || !sameKeys(o.keys, e.keys) || o.name !== e.name || o.rank_shared !== e.rank_shared ||
              JSON.stringify(o.results) !== JSON.stringify(e.results)) {
            info.changed.push(Object.assign({ prev_rank: o.rank }, e));
          }
          if (o.rank !== e.rank) info.moved.push({ player: e.player, name: e.name, rank: e.rank, prev_rank: o.rank });
        }
        for (const o of before.values()) info.left.push({ player: o.player, prev_rank: o.rank });
      }
      this._prevPeriod = "";
      this._base = { snapshotId: m.snapshot_id, seq: m.seq };
      this._lastId = m.snapshot_id + "." + m.seq;
      this._state = withPercentiles(state);
      this._live();
      this._emitUpdate(state, info);
    }

    _delta(m) {
      const base = this._base;
      const old = this._state;
      if (!base || !old) return; // waiting for a snapshot
      if (m.snapshot_id !== base.snapshotId || m.prev_seq !== base.seq) {
        this._resync(); // a gap: this delta does not follow the state held
        return;
      }
      // A delta lists every entry that is new to the window or whose rank,
      // keys, name or meta changed, at its new rank, and the players that
      // left. Any rank it leaves free is filled by the entries it did not
      // mention, in their old order (their keys did not change, so neither
      // did their order among themselves).
      const info = { type: "delta", initial: false, moved: [], entered: [], left: [], changed: [], previous_period: null };
      const gone = new Set();
      for (const r of m.removed || []) {
        gone.add(r.player);
        info.left.push({ player: r.player, prev_rank: r.prev_rank });
      }
      const changes = m.changes || [];
      for (const c of changes) gone.add(c.player);
      const rest = old.entries.filter((e) => !gone.has(e.player));
      const entries = new Array(rest.length + changes.length);
      for (const c of changes) {
        const e = entry(c);
        if (!(c.rank >= 1 && c.rank <= entries.length) || entries[c.rank - 1]) {
          this._resync(); // ranks that cannot fit: an event was lost
          return;
        }
        entries[c.rank - 1] = e;
        const prev = c.prev_rank === undefined ? null : c.prev_rank;
        info.changed.push(Object.assign({ prev_rank: prev }, e));
        if (prev === null) info.entered.push(e);
        else if (prev !== c.rank) info.moved.push({ player: c.player, name: c.name, rank: c.rank, prev_rank: prev });
      }
      for (let i = 0, j = 0; i < entries.length; i++) {
        if (entries[i]) continue;
        const o = rest[j++];
        entries[i] = Object.assign({}, o, { rank: i + 1 });
        if (o.rank !== i + 1) info.moved.push({ player: o.player, name: o.name, rank: i + 1, prev_rank: o.rank });
      }
      if (entries.length > old.limit) {
        this._resync();
        return;
      }
      const state = Object.assign({}, old, {
        period: m.period || old.period, seq: m.seq, snapshot_id: m.snapshot_id,
        total: m.total === undefined ? old.total : m.total, entries,
      });
      this._base = { snapshotId: m.snapshot_id, seq: m.seq };
      this._lastId = m.snapshot_id + "." + m.seq;
      this._state = withPercentiles(state);
      this._live();
      this._emitUpdate(state, info);
    }

    // --- callbacks ---

    _setStatus(patch) {
      const s = Object.assign({}, this._status, patch, { transport: this.transport, attempt: this._attempt });
      const same = s.state === this._status.state && s.retry_at === this._status.retry_at &&
        s.error === this._status.error;
      this._status = s;
      if (!same) this._emitStatus();
    }

    _emitStatus() {
      try { this.onStatus(Object.assign({}, this._status)); } catch (err) { report(err); }
    }

    _emitUpdate(state, info) {
      try { this.onUpdate(state, info); } catch (err) { report(err); }
    }
  }

  // report surfaces an exception thrown by a callback without letting it
  // break the watcher's bookkeeping.
  function report(err) {
    setTimeout(() => { throw err; }, 0);
  }

  function group(n) {
    const s = String(Math.abs(Math.trunc(n)));
    return (n < 0 ? "-" : "") + s.replace(/\B(?=(\d{3})+(?!\d))/g, ",");
  }

  function pad2(n) { return n < 10 ? "0" + n : String(n); }

  /**
   * formatKey shows a key value the way its board says: key is the key's
   * definition from the board ({name, order, label, format}) or only its
   * name. Formats:
   *   duration_ms  milliseconds: 41234 -> "41.234 s", 125000 -> "2:05.000"
   *   seconds      a duration: 125 -> "2:05" (h:mm:ss from an hour)
   *   points       1234 -> "1,234 pts"
   *   timestamp    Unix seconds, as a local date and time with its zone
   *   integer      1234567 -> "1,234,567"
   * Without a format the name decides: a _ms suffix reads as duration_ms,
   * _s as seconds, anything else as integer.
   */
  function formatKey(value, key) {
    if (value === null || value === undefined || value === "") return "\u2014";
    const v = Number(value);
    if (!Number.isFinite(v)) return String(value);
    const def = typeof key === "object" && key ? key : { name: key };
    let format = def.format;
    if (!format) {
      const name = String(def.name || "").toLowerCase();
      format = name.endsWith("_ms") ? "duration_ms" : name.endsWith("_s") ? "seconds" : "integer";
    }
    const sign = v < 0 ? "-" : "";
    const a = Math.abs(Math.round(v));
    switch (format) {
      case "duration_ms": {
        const ms = String(a % 1000).padStart(3, "0");
        const s = Math.floor(a / 1000);
        if (s < 60) return sign + s + "." + ms + " s";
        const h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60);
        return sign + (h ? h + ":" + pad2(m) : m) + ":" + pad2(s % 60) + "." + ms;
      }
      case "seconds": {
        const h = Math.floor(a / 3600), m = Math.floor((a % 3600) / 60), s = a % 60;
        return sign + (h ? h + ":" + pad2(m) + ":" + pad2(s) : m + ":" + pad2(s));
      }
      case "points":
        return group(v) + " pts";
      case "timestamp": {
        const d = new Date(v * 1000);
        return Number.isFinite(d.getTime()) ? d.toLocaleString(undefined, { timeZoneName: "short" }) : group(v);
      }
      default:
        return group(v);
    }
  }

  /**
   * orderRule says in words how a board with these keys ranks, e.g.
   * "Time (lower is better), then 3BV (higher is better); an exact tie
   * goes to whoever reached it first."
   */
  function orderRule(keys) {
    const parts = (keys || []).map((k) => keyLabel(k) + (k.order === "asc" ? " (lower is better)" : " (higher is better)"));
    if (!parts.length) return "";
    return "Ranked by " + parts.join(", then ") + "; an exact tie goes to whoever reached it first.";
  }

  /** keyLabel is what a page calls a key: its label, or its name. */
  function keyLabel(key) {
    return (key && (key.label || key.name)) || "";
  }

  /**
   * isolate wraps text that someone else chose (a player's name or id, a
   * team's name) in U+2068 FIRST STRONG ISOLATE ... U+2069 POP DIRECTIONAL
   * ISOLATE, the plain-text form of <bdi>, for a string that holds more
   * than the name (a sentence, a tooltip): bidi controls in the name then
   * cannot reorder the text around it (docs/API.md, "Look-alike ids").
   */
  function isolate(text) {
    return "\u2068" + String(text) + "\u2069";
  }

  /** bdi returns a <bdi> element holding text: a name shown on its own. */
  function bdi(text) {
    const b = document.createElement("bdi");
    b.textContent = String(text);
    return b;
  }

  /**
   * formatCountdown shows a duration in milliseconds the way a reset
   * countdown reads: "2d 4h", "3h 12m", "12m 5s", "45s".
   */
  function formatCountdown(ms) {
    let s = Math.max(0, Math.floor(ms / 1000));
    const d = Math.floor(s / 86400); s -= d * 86400;
    const h = Math.floor(s / 3600); s -= h * 3600;
    const m = Math.floor(s / 60); s -= m * 60;
    if (d) return d + "d " + h + "h";
    if (h) return h + "h " + m + "m";
    if (m) return m + "m " + s + "s";
    return s + "s";
  }

  /**
   * watch follows a board live and returns a Watcher (close() to stop).
   * Options: board (required), url, limit, transport ("sse" | "ws"), key,
   * onUpdate(state, info), onStatus(status), minDelay, maxDelay,
   * healthyAfter, pingEvery. See docs/CLIENT.md.
   */
  function watch(opts) { return new Watcher(opts); }

  const Podium = { watch, formatKey, keyLabel, orderRule, formatCountdown, isolate, bdi, percentile, Watcher, version: "1" };
  root.Podium = Podium;
  if (typeof module === "object" && module && module.exports) module.exports = Podium;
})(typeof globalThis !== "undefined" ? globalThis : this);
