// LiveBoard: a live subscriber of a board's (or a contest's) top N over
// Server-Sent Events or the WebSocket, as docs/API.md "Live updates" and
// docs/CLIENT.md describe: resume with the last applied event id, resync
// with a fresh snapshot after a gap, reconnect with exponential backoff and
// full jitter, and stop for good on an error that retrying cannot mend.
//
// SSE is read with fetch (not EventSource), so that a key can be sent in the
// Authorization header, from browsers and Node alike; the WebSocket sends
// it as ?key= (browsers cannot set headers on one).

import type { PodiumClient, WebSocketConstructor } from "./client.js";
import { encodeQuery, operationPath } from "./client.js";
import { PodiumError, errorFromAnswer } from "./errors.js";
import { backoff } from "./retry.js";
import { readEvents } from "./sse.js";
import type * as S from "./generated/schemas.js";
import { type LiveState, type LiveUpdate, applyDelta, applySnapshot, eventId } from "./window.js";

/** Error codes after which retrying cannot help: the subscriber stops. */
const FATAL = new Set(["board_not_found", "not_found", "unauthenticated", "forbidden", "invalid_argument", "invalid_json"]);

/** Options of {@link PodiumClient.subscribe}. */
export interface SubscribeOptions {
  /** The board id (the contest id with `collection: "contests"`). */
  board: string;
  /** `contests` follows a CTF contest's public standings (SSE only). Default `boards`. */
  collection?: "boards" | "contests";
  /** How many top entries to follow, 1 to 1000 (default 50). */
  limit?: number;
  /** `sse` (default) or `ws`. */
  transport?: "sse" | "ws";
  /** Resume from the `lastEventId` of an earlier subscription: the server sends what was missed, or a snapshot. */
  lastEventId?: string;
  /** Reconnect backoff bounds in ms (1000 and 30000): attempt n waits a random time in [0, min(max, min × 2^n)]. */
  minDelayMs?: number;
  maxDelayMs?: number;
  /** How long a connection must stay live for the backoff to start over (5000 ms). */
  healthyAfterMs?: number;
  /** A connection silent this long (the server pings every 15 s) is dropped (45000 ms). */
  idleTimeoutMs?: number;
  /** WebSocket: ms between the client's pings (20000). */
  pingEveryMs?: number;
  /** Called after every snapshot and every applied delta. */
  onUpdate?: (state: LiveState, update: LiveUpdate) => void;
  /** Called when the connection's status changes. */
  onStatus?: (status: LiveStatus) => void;
  /** Closes the subscription when aborted. */
  signal?: AbortSignal;
}

/** The state of a subscription's connection. */
export interface LiveStatus {
  /**
   * `connecting` (first connection), `live` (connected, state current),
   * `reconnecting` (lost; `retryAt` says when the next attempt starts,
   * null while one is under way), `error` (stopped for good: `error`),
   * `closed` (close() was called).
   */
  state: "connecting" | "live" | "reconnecting" | "error" | "closed";
  transport: "sse" | "ws";
  /** Consecutive failed connections. */
  attempt: number;
  /** ms since the epoch of the next attempt, or null. */
  retryAt: number | null;
  /** The wait before the next attempt, ms. */
  delayMs: number;
  /** `error`: why it stopped; `reconnecting`: why the last connection ended. */
  error: PodiumError | Error | null;
}

interface Conn {
  close(): void;
  send: ((msg: S.WSClientMessage) => void) | null;
}

/**
 * Follows a board's top N live. Create it with {@link PodiumClient.subscribe}.
 *
 * ```ts
 * const live = podium.subscribe("ms:expert", { limit: 10, onUpdate: (s) => draw(s.entries) });
 * await live.ready;          // the first snapshot
 * live.close();
 * ```
 */
export class LiveBoard {
  readonly board: string;
  readonly limit: number;
  readonly transport: "sse" | "ws";
  readonly collection: "boards" | "contests";
  /** Resolves with the first state; rejects if the subscription stops before it. */
  readonly ready: Promise<LiveState>;

  private readonly client: PodiumClient;
  private readonly o: Required<Pick<SubscribeOptions, "minDelayMs" | "maxDelayMs" | "healthyAfterMs" | "idleTimeoutMs" | "pingEveryMs">>;
  private readonly onUpdate: (state: LiveState, update: LiveUpdate) => void;
  private readonly onStatus: (status: LiveStatus) => void;
  private readonly WS: WebSocketConstructor | undefined;

  private st: LiveState | null = null;
  private following = false; // the next delta may follow st; false while a snapshot is awaited
  private lastId: string;
  private prevPeriod = "";
  private attempt = 0;
  private gen = 0; // connection generation: events of an older connection are ignored
  private conn: Conn | null = null;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private liveSince = 0;
  private lastResync = 0;
  private stopped = false;
  private stat: LiveStatus;
  private waiters = new Set<{ check: () => boolean; reject: (e: unknown) => void }>();
  private readyResolve!: (s: LiveState) => void;
  private readyReject!: (e: unknown) => void;
  private readonly onOnline = () => {
    if (this.timer !== undefined && !this.stopped) { // waiting to retry: the network is back, try now
      clearTimeout(this.timer);
      this.timer = undefined;
      this.connect();
    }
  };

  constructor(client: PodiumClient, opts: SubscribeOptions) {
    if (!opts || !opts.board) throw new TypeError("podium: subscribe needs a board");
    this.client = client;
    this.board = String(opts.board);
    this.limit = Math.min(1000, Math.max(1, Math.trunc(opts.limit ?? 50)));
    this.collection = opts.collection === "contests" ? "contests" : "boards";
    this.transport = opts.transport === "ws" ? "ws" : "sse";
    if (this.collection === "contests" && this.transport === "ws") throw new TypeError('podium: contests stream over "sse" only');
    this.WS = client.WebSocket;
    if (this.transport === "ws" && !this.WS) {
      throw new TypeError("podium: no WebSocket here (Node before 22): pass one in the client's options, or use transport \"sse\"");
    }
    const minDelayMs = Math.max(1, opts.minDelayMs ?? 1000);
    this.o = {
      minDelayMs,
      maxDelayMs: Math.max(minDelayMs, opts.maxDelayMs ?? 30000),
      healthyAfterMs: Math.max(0, opts.healthyAfterMs ?? 5000),
      idleTimeoutMs: Math.max(1, opts.idleTimeoutMs ?? 45000),
      pingEveryMs: Math.max(10, opts.pingEveryMs ?? 20000),
    };
    this.onUpdate = opts.onUpdate || (() => {});
    this.onStatus = opts.onStatus || (() => {});
    this.lastId = opts.lastEventId || "";
    this.stat = { state: "connecting", transport: this.transport, attempt: 0, retryAt: null, delayMs: 0, error: null };
    this.ready = new Promise((res, rej) => {
      this.readyResolve = res;
      this.readyReject = rej;
    });
    this.ready.catch(() => {}); // a rejection nobody awaits is not unhandled
    if (opts.signal) {
      if (opts.signal.aborted) queueMicrotask(() => this.close());
      else opts.signal.addEventListener("abort", () => this.close(), { once: true });
    }
    if (typeof addEventListener === "function") addEventListener("online", this.onOnline);
    queueMicrotask(() => this.connect());
  }

  /** The last state, or null before the first snapshot. */
  get state(): LiveState | null {
    return this.st;
  }

  /** The current connection status. */
  get status(): LiveStatus {
    return { ...this.stat };
  }

  /**
   * The id of the last event applied (`<snapshot_id>.<seq>`): pass it as
   * `lastEventId` to resume in another subscription (after a page reload).
   */
  get lastEventId(): string {
    return this.lastId;
  }

  /** Reconnects now, skipping any backoff wait (a "retry now" button). */
  reconnect(): void {
    if (this.stopped) return;
    clearTimeout(this.timer);
    this.timer = undefined;
    this.disconnect();
    this.setStatus({ state: "reconnecting", retryAt: null, delayMs: 0 });
    this.connect();
  }

  /** Stops: closes the connection and cancels any retry. Only a final `closed` status follows. */
  close(): void {
    if (this.stopped) return;
    this.stop();
    this.setStatus({ state: "closed", retryAt: null });
    this.rejectWaiters(new Error("podium: the subscription was closed"));
  }

  /**
   * Resolves with the state once pred(state) holds (checked now and after
   * every update); rejects after timeoutMs, or when the subscription has
   * stopped (with its PodiumError). For tests and scripts.
   */
  waitFor(pred: (s: LiveState) => boolean, timeoutMs = 10000): Promise<LiveState> {
    return this.wait(() => (this.st && pred(this.st) ? this.st : undefined), timeoutMs, "state");
  }

  /** Resolves once the status satisfies pred (checked now and at every change); rejects after timeoutMs. */
  waitForStatus(pred: (s: LiveStatus) => boolean, timeoutMs = 10000): Promise<LiveStatus> {
    return this.wait(() => (pred(this.stat) ? this.status : undefined), timeoutMs, "status", true);
  }

  private wait<T>(get: () => T | undefined, timeoutMs: number, what: string, evenStopped = false): Promise<T> {
    if (this.stopped && !evenStopped) return Promise.reject(this.stat.error || new Error("podium: the subscription is closed"));
    const now = get();
    if (now !== undefined) return Promise.resolve(now);
    return new Promise<T>((resolve, reject) => {
      const w = {
        check: () => {
          const v = get();
          if (v === undefined) return false;
          done();
          resolve(v);
          return true;
        },
        reject: (e: unknown) => {
          done();
          reject(e);
        },
      };
      const t = setTimeout(() => w.reject(new Error(`podium: ${what} not reached within ${timeoutMs} ms`)), timeoutMs);
      const done = () => {
        clearTimeout(t);
        this.waiters.delete(w);
      };
      this.waiters.add(w);
    });
  }

  private checkWaiters(): void {
    for (const w of [...this.waiters]) w.check();
  }

  private rejectWaiters(e: unknown): void {
    for (const w of [...this.waiters]) w.reject(e);
    this.readyReject(e);
  }

  private stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    this.disconnect();
    if (typeof removeEventListener === "function") removeEventListener("online", this.onOnline);
  }

  private setStatus(s: Partial<LiveStatus>): void {
    const next = { ...this.stat, ...s, attempt: this.attempt };
    const same = next.state === this.stat.state && next.attempt === this.stat.attempt && next.retryAt === this.stat.retryAt;
    this.stat = next;
    if (same) return;
    try {
      this.onStatus(this.status);
    } finally {
      this.checkWaiters();
    }
  }

  // --- connections ---

  private connect(): void {
    if (this.stopped) return;
    this.disconnect();
    const gen = ++this.gen;
    if (this.transport === "ws") this.openWS(gen);
    else void this.openSSE(gen);
  }

  private disconnect(): void {
    this.gen++;
    const c = this.conn;
    this.conn = null;
    if (c) c.close();
  }

  private streamPath(): string {
    const id = this.collection === "contests" ? "contestStream" : "boardStream";
    const params: Record<string, string> = this.collection === "contests" ? { contest: this.board } : { board: this.board };
    return operationPath(id, params) + encodeQuery({ limit: this.limit, last_event_id: this.lastId || undefined });
  }

  private async openSSE(gen: number): Promise<void> {
    const ctl = new AbortController();
    let idle: ReturnType<typeof setTimeout> | undefined;
    const arm = () => {
      clearTimeout(idle);
      idle = setTimeout(() => ctl.abort(new Error(`podium: the stream was silent for ${this.o.idleTimeoutMs} ms`)), this.o.idleTimeoutMs);
    };
    this.conn = { close: () => { clearTimeout(idle); ctl.abort(); }, send: null };
    arm();
    try {
      const res = await this.client.fetcher(this.client.baseUrl + this.streamPath(), {
        headers: { Accept: "text/event-stream", ...this.client.authHeaders() }, signal: ctl.signal,
      });
      if (gen !== this.gen) { ctl.abort(); return; }
      if (res.status !== 200 || !res.body) {
        const err = errorFromAnswer(res.status, res.headers, await res.text().catch(() => ""));
        if (gen !== this.gen) return;
        if ([400, 401, 403, 404, 410].includes(res.status)) this.fail(err);
        else this.dropped(err);
        return;
      }
      this.connected();
      // The subscriber resumes from the events it applied, not from the
      // last id seen (readEvents ignores id:).
      await readEvents(res.body, () => {
        if (gen !== this.gen) return false;
        arm();
        return true;
      }, (type, data) => {
        this.message(data, type);
        return gen === this.gen;
      });
      ctl.abort(); // stopped: a newer connection or none
    } catch (e) {
      if (gen !== this.gen) return;
      this.dropped(ctl.signal.aborted && ctl.signal.reason instanceof Error ? ctl.signal.reason : e as Error);
    } finally {
      clearTimeout(idle);
    }
  }

  private openWS(gen: number): void {
    let u = this.client.baseUrl.replace(/^http/, "ws") + operationPath("websocket");
    if (this.client.key) u += encodeQuery({ key: this.client.key });
    let ws: WebSocket;
    try {
      ws = new this.WS!(u);
    } catch (e) { // a malformed url: retrying cannot help
      this.fail(new PodiumError(0, "invalid_argument", String((e as Error)?.message || e)));
      return;
    }
    let ping: ReturnType<typeof setInterval> | undefined;
    let heard = Date.now();
    const send = (msg: S.WSClientMessage) => { if (ws.readyState === 1) ws.send(JSON.stringify(msg)); };
    const stopPing = () => { clearInterval(ping); ping = undefined; };
    this.conn = {
      close: () => {
        stopPing();
        ws.onclose = null;
        ws.onmessage = null;
        ws.onerror = null;
        try { ws.close(1000); } catch { /* closed */ }
      },
      send,
    };
    ws.onopen = () => {
      if (gen !== this.gen) return;
      this.connected();
      const sub: S.WSClientMessage = { op: "subscribe", board: this.board, limit: this.limit, id: "subscribe" };
      if (this.lastId) sub.last_event_id = this.lastId;
      send(sub);
      // Browsers hide WebSocket ping frames: ping by message, and give up on
      // a socket that stays silent.
      ping = setInterval(() => {
        if (Date.now() - heard > 2.5 * this.o.pingEveryMs) {
          stopPing();
          ws.onclose = null;
          try { ws.close(); } catch { /* closed */ }
          if (gen === this.gen) this.dropped(new Error("podium: the WebSocket went silent"));
          return;
        }
        send({ op: "ping" });
      }, this.o.pingEveryMs);
    };
    ws.onmessage = (e: MessageEvent) => {
      if (gen !== this.gen) return;
      heard = Date.now();
      if (typeof e.data === "string") this.message(e.data, "");
    };
    // onclose normally follows an error, but not always (Node 20's
    // WebSocket fires only error when the connection is refused): an error
    // ends the connection either way.
    ws.onerror = () => {
      stopPing();
      if (gen !== this.gen) return;
      this.dropped(new Error("podium: the WebSocket failed"));
    };
    ws.onclose = (e: CloseEvent) => {
      stopPing();
      if (gen !== this.gen) return;
      this.dropped(new Error(`podium: the WebSocket closed (${e.code}${e.reason ? " " + e.reason : ""})`));
    };
  }

  // connected runs when the transport is open. Resuming a state it holds,
  // the subscriber is live at once (the server sends only what was missed,
  // possibly nothing); otherwise when the snapshot arrives.
  private connected(): void {
    if (this.following) this.live();
    else this.setStatus({ state: this.st ? "reconnecting" : "connecting", retryAt: null, delayMs: 0 });
  }

  private live(): void {
    if (this.stat.state !== "live") {
      this.liveSince = Date.now();
      this.setStatus({ state: "live", retryAt: null, delayMs: 0, error: null });
    }
  }

  // dropped runs when a connection ends without the subscriber asking:
  // the next attempt comes after an exponential backoff with full jitter
  // (or the server's Retry-After, when longer).
  private dropped(err: Error | PodiumError): void {
    if (this.stopped) return;
    this.disconnect();
    if (this.liveSince && Date.now() - this.liveSince >= this.o.healthyAfterMs) this.attempt = 0;
    this.liveSince = 0;
    let delay = Math.max(10, Math.round(backoff(this.attempt, this.o.minDelayMs, this.o.maxDelayMs)));
    if (err instanceof PodiumError && err.retryAfterMs > delay) delay = err.retryAfterMs;
    this.attempt++;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.setStatus({ state: "reconnecting", retryAt: null, delayMs: 0 });
      this.connect();
    }, delay);
    this.setStatus({ state: "reconnecting", retryAt: Date.now() + delay, delayMs: delay, error: err });
  }

  // resync drops the state's continuity and asks for a fresh snapshot.
  private resync(): void {
    this.following = false;
    this.lastId = "";
    const now = Date.now();
    const again = now - this.lastResync < 2000;
    this.lastResync = now;
    if (again) {
      this.dropped(new Error("podium: gaps in a row")); // back off instead of spinning
    } else if (this.conn && this.conn.send) {
      // WebSocket: subscribe again on the same socket; deltas are ignored
      // until the snapshot arrives.
      this.conn.send({ op: "unsubscribe", board: this.board, id: "unsubscribe" });
      this.conn.send({ op: "subscribe", board: this.board, limit: this.limit, id: "subscribe" });
    } else {
      this.connect(); // SSE: a new connection without a last event id
    }
  }

  private fail(err: PodiumError): void {
    this.stop();
    this.setStatus({ state: "error", retryAt: null, delayMs: 0, error: err });
    this.rejectWaiters(err);
  }

  // --- events ---

  private message(data: string, sseType: string): void {
    let m: S.BoardStreamEvent | S.WSReply;
    try {
      m = JSON.parse(data);
    } catch {
      return;
    }
    if (!m || typeof m !== "object") return;
    if ("feed" in m && m.feed) return;
    if (m.board && m.board !== this.board && !(this.collection === "contests" && m.board === `live/${this.board}`)) return;
    switch (m.type || sseType) {
      case "snapshot":
        this.snapshot(m as S.BoardSnapshot);
        break;
      case "delta":
        this.delta(m as S.BoardDelta);
        break;
      case "period": {
        // A snapshot of the new period follows; deltas wait for it.
        const p = m as S.PeriodEvent;
        if (this.st && !this.prevPeriod) this.prevPeriod = p.previous || this.st.period;
        this.following = false;
        break;
      }
      case "subscribed":
        if (this.following) this.live();
        break;
      case "error": {
        const e = m as S.StreamError;
        if (e.id === "unsubscribe") break; // the resync's unsubscribe found nothing to end: harmless
        const err = new PodiumError(0, e.code, e.message || e.code);
        if (FATAL.has(e.code)) this.fail(err);
        else this.dropped(err);
        break;
      }
      default: // pong, unsubscribed, and types added later
    }
  }

  private snapshot(m: S.BoardSnapshot): void {
    const { state, update } = applySnapshot(this.st, m, this.prevPeriod, this.limit);
    this.prevPeriod = "";
    this.commit(state, update);
  }

  private delta(m: S.BoardDelta): void {
    if (!this.following || !this.st) return; // waiting for a snapshot
    const r = applyDelta(this.st, m);
    if (r === "gap") {
      this.resync();
      return;
    }
    this.commit(r.state, r.update);
  }

  private commit(state: LiveState, update: LiveUpdate): void {
    this.st = state;
    this.following = true;
    this.lastId = eventId(state);
    this.live();
    this.readyResolve(state);
    try {
      this.onUpdate(state, update);
    } finally {
      this.checkWaiters();
    }
  }
}
