// LiveCohort: follows a player's league cohort live over Server-Sent Events
// (GET /v1/leagues/{board}/players/{player}/cohort/stream, docs/API.md
// "Leagues", Live). The stream sends whole snapshots only, without ids, so
// there is nothing to resume or resync: a reconnect starts with a snapshot,
// which replaces the state. It is much simpler than LiveBoard's window, and
// SSE only, as the server offers it.

import type { PodiumClient } from "./client.js";
import { operationPath } from "./client.js";
import { PodiumError, errorFromAnswer } from "./errors.js";
import { backoff } from "./retry.js";
import { readEvents } from "./sse.js";
import type { LeagueCohort, StreamError } from "./generated/schemas.js";

/** A snapshot of the cohort stream: the cohort read's document with `player` and `total` (its members). */
export type CohortSnapshot = LeagueCohort & { type: "snapshot"; player: string; total: number };

/** Options of {@link Leagues.follow}. */
export interface CohortOptions {
  /** Reconnect backoff bounds in ms (1000 and 30000), as LiveBoard's. */
  minDelayMs?: number;
  maxDelayMs?: number;
  /** A connection silent this long (the server's heartbeat is every 15 s) is dropped (45000 ms). */
  idleTimeoutMs?: number;
  /** Called with every snapshot: the whole cohort, never one equal to the last. */
  onUpdate?: (cohort: CohortSnapshot) => void;
  /** Called when the follower stops for good (an error retrying cannot mend). */
  onError?: (err: PodiumError) => void;
  /** Closes the follower when aborted. */
  signal?: AbortSignal;
}

// Answers and error events after which retrying cannot help.
const FATAL_STATUS = [400, 401, 403, 404, 410];
const FATAL = new Set(["board_not_found", "not_found", "unauthenticated", "forbidden", "invalid_argument"]);

/**
 * Follows a player's cohort in the current period. A player who has not
 * played the period is 404 `not_found` (the follower stops: `ready`
 * rejects); when the period ends the server keeps sending the ended
 * period's cohort until the player's first score of the next one.
 *
 * ```ts
 * const live = podium.leagues.follow("xp", "amy", { onUpdate: (c) => draw(c.entries) });
 * await live.ready;
 * live.close();
 * ```
 */
export class LiveCohort {
  readonly board: string;
  readonly player: string;
  /** Resolves with the first snapshot; rejects if the follower stops before it. */
  readonly ready: Promise<CohortSnapshot>;

  private readonly client: PodiumClient;
  private readonly o: Required<Pick<CohortOptions, "minDelayMs" | "maxDelayMs" | "idleTimeoutMs">>;
  private readonly onUpdate: (c: CohortSnapshot) => void;
  private readonly onError: (e: PodiumError) => void;
  private st: CohortSnapshot | null = null;
  private err: PodiumError | null = null;
  private attempt = 0;
  private gen = 0; // connection generation: events of an older connection are ignored
  private ctl: AbortController | null = null;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private stopped = false;
  private waiters = new Set<{ check: () => void; reject: (e: unknown) => void }>();
  private readyResolve!: (c: CohortSnapshot) => void;
  private readyReject!: (e: unknown) => void;

  /** @internal use {@link Leagues.follow}. */
  constructor(client: PodiumClient, board: string, player: string, opts: CohortOptions = {}) {
    if (!board || !player) throw new TypeError("podium: follow needs a board and a player");
    this.client = client;
    this.board = String(board);
    this.player = String(player);
    const minDelayMs = Math.max(1, opts.minDelayMs ?? 1000);
    this.o = { minDelayMs, maxDelayMs: Math.max(minDelayMs, opts.maxDelayMs ?? 30000), idleTimeoutMs: Math.max(1, opts.idleTimeoutMs ?? 45000) };
    this.onUpdate = opts.onUpdate || (() => {});
    this.onError = opts.onError || (() => {});
    this.ready = new Promise((res, rej) => {
      this.readyResolve = res;
      this.readyReject = rej;
    });
    this.ready.catch(() => {}); // a rejection nobody awaits is not unhandled
    if (opts.signal) {
      if (opts.signal.aborted) queueMicrotask(() => this.close());
      else opts.signal.addEventListener("abort", () => this.close(), { once: true });
    }
    queueMicrotask(() => void this.connect());
  }

  /** The last snapshot, or null before the first. */
  get cohort(): CohortSnapshot | null {
    return this.st;
  }

  /** Why the follower stopped, or null while it runs (or after close()). */
  get error(): PodiumError | null {
    return this.err;
  }

  /** Stops: closes the connection and cancels any retry. */
  close(): void {
    if (this.stopped) return;
    this.stop();
    this.rejectAll(new Error("podium: the follower was closed"));
  }

  /**
   * Resolves with the cohort once pred(cohort) holds (checked now and
   * after every snapshot); rejects after timeoutMs, or when the follower
   * stops (with its PodiumError). For tests and scripts.
   */
  waitFor(pred: (c: CohortSnapshot) => boolean, timeoutMs = 10000): Promise<CohortSnapshot> {
    if (this.stopped) return Promise.reject(this.err || new Error("podium: the follower is closed"));
    if (this.st && pred(this.st)) return Promise.resolve(this.st);
    return new Promise((resolve, reject) => {
      const w = {
        check: () => {
          if (this.st && pred(this.st)) { done(); resolve(this.st); }
        },
        reject: (e: unknown) => { done(); reject(e); },
      };
      const t = setTimeout(() => w.reject(new Error(`podium: cohort not reached within ${timeoutMs} ms`)), timeoutMs);
      const done = () => { clearTimeout(t); this.waiters.delete(w); };
      this.waiters.add(w);
    });
  }

  private stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    this.gen++;
    this.ctl?.abort();
    this.ctl = null;
  }

  private rejectAll(e: unknown): void {
    for (const w of [...this.waiters]) w.reject(e);
    this.readyReject(e);
  }

  private fail(err: PodiumError): void {
    if (this.stopped) return;
    this.stop();
    this.err = err;
    this.rejectAll(err);
    this.onError(err);
  }

  // dropped schedules the next connection after a backoff with full jitter
  // (or the server's Retry-After, when longer).
  private dropped(err: unknown): void {
    if (this.stopped) return;
    this.gen++;
    this.ctl?.abort();
    this.ctl = null;
    let delay = Math.max(10, Math.round(backoff(this.attempt++, this.o.minDelayMs, this.o.maxDelayMs)));
    if (err instanceof PodiumError && err.retryAfterMs > delay) delay = err.retryAfterMs;
    this.timer = setTimeout(() => void this.connect(), delay);
  }

  private async connect(): Promise<void> {
    if (this.stopped) return;
    const gen = ++this.gen;
    const ctl = new AbortController();
    this.ctl = ctl;
    let idle: ReturnType<typeof setTimeout> | undefined;
    const arm = () => {
      clearTimeout(idle);
      idle = setTimeout(() => ctl.abort(new Error(`podium: the stream was silent for ${this.o.idleTimeoutMs} ms`)), this.o.idleTimeoutMs);
    };
    arm();
    try {
      const url = this.client.baseUrl + operationPath("leagueCohortStream", { board: this.board, player: this.player });
      const res = await this.client.fetcher(url, { headers: { Accept: "text/event-stream", ...this.client.authHeaders() }, signal: ctl.signal });
      if (gen !== this.gen) return;
      if (res.status !== 200 || !res.body) {
        const err = errorFromAnswer(res.status, res.headers, await res.text().catch(() => ""));
        if (gen !== this.gen) return;
        if (FATAL_STATUS.includes(res.status)) this.fail(err);
        else this.dropped(err);
        return;
      }
      await readEvents(res.body, () => {
        if (gen !== this.gen) return false;
        arm();
        return true;
      }, (type, data) => {
        this.message(type, data);
        return gen === this.gen;
      });
    } catch (e) {
      if (gen !== this.gen) return;
      this.dropped(ctl.signal.aborted && ctl.signal.reason instanceof Error ? ctl.signal.reason : e);
    } finally {
      clearTimeout(idle);
    }
  }

  private message(sseType: string, data: string): void {
    let m: CohortSnapshot | StreamError;
    try {
      m = JSON.parse(data);
    } catch {
      return;
    }
    if (!m || typeof m !== "object") return;
    const type = m.type || sseType;
    if (type === "error") {
      const e = m as StreamError;
      const err = new PodiumError(0, e.code, e.message || e.code);
      if (FATAL.has(e.code)) this.fail(err);
      else this.dropped(err);
      return;
    }
    if (type !== "snapshot") return; // types added later
    this.st = m as CohortSnapshot;
    this.attempt = 0; // a connection that delivers: the backoff starts over
    this.readyResolve(this.st);
    try {
      this.onUpdate(this.st);
    } finally {
      for (const w of [...this.waiters]) w.check();
    }
  }
}
