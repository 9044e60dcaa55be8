// PodiumClient: typed calls for podium's game-facing API, with retries that
// are safe (a write carries an Idempotency-Key that its retries reuse), as
// the Go client does (client/client.go, client/retry.go).
//
// Every method goes through call(), which takes the operation's method and
// path from the spec (src/generated/operations.ts) and types its
// parameters, query and body from it: a spec change that the client does
// not follow fails `npm run check:types`.

import { PodiumError, PodiumNetworkError, errorFromAnswer } from "./errors.js";
import { type RequestKind, type RetryPolicy, newIdempotencyKey, nextRetry, retryPolicy, sleep } from "./retry.js";
import { type BytesLike, evidenceHashes, toBytes } from "./evidence.js";
import { type OperationId, type Operations, operations } from "./generated/operations.js";
import type * as S from "./generated/schemas.js";
import { LiveBoard, type SubscribeOptions } from "./live.js";
import { Leagues } from "./leagues.js";
import { Groups } from "./groups.js";

/** The version of this package, sent in the User-Agent from Node. */
export const version = "0.1.0";

/** Options of a PodiumClient. */
export interface ClientOptions {
  /** The server's base URL, e.g. `https://podium.example` (a path prefix is kept). */
  baseUrl: string;
  /** An API key, or a player session token (`pds_...`), sent as `Authorization: Bearer`. */
  key?: string;
  /** The retry policy (default {@link defaultRetry}); `{maxAttempts: 1}` disables retries. */
  retry?: Partial<RetryPolicy>;
  /** The fetch to use (default: the global one). */
  fetch?: typeof fetch;
  /** A User-Agent, sent from Node only (default `podium-ts/<version>`). */
  userAgent?: string;
  /**
   * The WebSocket constructor for `transport: "ws"` subscriptions (default:
   * the global one: browsers, Node 22+; on Node 18 and 20 pass `ws`'s).
   */
  WebSocket?: WebSocketConstructor;
}

/** A constructor of standard (WHATWG) WebSockets. */
export type WebSocketConstructor = new (url: string) => WebSocket;

/** Per-call options. */
export interface CallOptions {
  /** Aborts the call, its retries and the waits between them. */
  signal?: AbortSignal;
}

/** Options of a write that carries an Idempotency-Key. */
export interface WriteOptions extends CallOptions {
  /**
   * The key to send instead of a generated one: keep it (with the body) to
   * send the write again later, after a restart of the caller, without
   * applying it twice.
   */
  idempotencyKey?: string;
}

/** What the answer to a write said beyond its body. */
export interface WriteInfo {
  /** The Idempotency-Key the write carried on every attempt. */
  idempotencyKey: string;
  /** `Idempotent-Replayed: true`: the answer is the first attempt's (or an earlier call's). */
  replayed: boolean;
  /** `Idempotent-Reconstructed: true`: rebuilt after a crash (docs/API.md, "Scores"). */
  reconstructed: boolean;
  /** Requests sent, retries included. */
  attempts: number;
}

/** The answer to {@link PodiumClient.submit}: the entry it left, or held for review. */
export type Submitted = WriteInfo & (
  | { held: false; result: S.SubmitResult }
  | { held: true; pending: S.Held });

/** A score to submit: `keys` (one per key of the board) or `score` (a one-key board). */
export type Score = S.Submission;

/** A score of a batch, naming its board. */
export type BatchScore = S.BatchItem;

/** Read options shared by the ranking reads. */
export interface ReadOptions extends CallOptions {
  /** `current` (default), `previous`, or a period id. */
  period?: string;
  /** Admin: hidden players too. */
  includeHidden?: boolean;
}

/** A contest's view: `public` (frozen until revealed) or `live` (admin). */
export type View = "public" | "live";

type Params<K extends OperationId> = Operations[K]["params"];
type Query<K extends OperationId> = { [P in keyof Operations[K]["query"]]?: string | number | boolean | undefined };
/** @internal the body of an operation's 2xx answer. */
export type Ok<K extends OperationId> = Operations[K]["responses"][keyof Operations[K]["responses"]];

/** @internal a request of one operation, as the client's methods make it. */
export interface Request<K extends OperationId> {
  params?: Params<K>;
  query?: Query<K>;
  body?: Operations[K]["body"];
  raw?: Uint8Array;
  rawType?: string;
  kind?: RequestKind;
  idempotencyKey?: string;
  signal?: AbortSignal | undefined;
  lastEventId?: string;
  binary?: boolean;
}

/** @internal a decoded answer. */
export interface Answer<T> {
  data: T;
  status: number;
  headers: Headers;
  info: WriteInfo;
}

/**
 * @internal how the method groups in other files ({@link Leagues},
 * {@link Groups}) reach the client's private call, so that they retry and
 * decode as its own methods do.
 */
export type Caller = <K extends OperationId, T = Ok<K>>(id: K, req: Request<K>) => Promise<Answer<T>>;

// A User-Agent is sent from Node only: in a browser (a page or a worker)
// it is not the client's to set, and it would make every request preflighted.
const inNode = typeof (globalThis as { process?: { versions?: { node?: string } } }).process?.versions?.node === "string";

/** Builds the path of an operation from the spec's template. */
export function operationPath(id: OperationId, params: Record<string, string | number> = {}): string {
  return operations[id].path.replace(/\{([^}]+)\}/g, (_, name: string) => {
    const v = params[name];
    if (v === undefined || v === "") throw new TypeError(`podium: ${id} needs the path parameter ${name}`);
    return encodeURIComponent(String(v));
  });
}

/** Encodes a query; undefined values are left out, booleans are "true"/"false". */
export function encodeQuery(q: Record<string, string | number | boolean | undefined> | undefined): string {
  if (!q) return "";
  const parts: string[] = [];
  for (const [k, v] of Object.entries(q)) {
    if (v === undefined) continue;
    parts.push(encodeURIComponent(k) + "=" + encodeURIComponent(String(v)));
  }
  return parts.length ? "?" + parts.join("&") : "";
}

/**
 * A client of one podium server. Safe to share: it holds no state but its
 * key.
 *
 * ```ts
 * const podium = new PodiumClient({ baseUrl: "https://podium.example", key: process.env.PODIUM_KEY });
 * const r = await podium.submit("ms:expert", { player: "alice", keys: [41234, 150] });
 * if (!r.held) console.log("rank", r.result.entry.rank);
 * ```
 */
export class PodiumClient {
  readonly baseUrl: string;
  private keyValue: string;
  private readonly retry: RetryPolicy;
  private readonly fetchFn: typeof fetch;
  private readonly userAgent: string;
  readonly WebSocket: WebSocketConstructor | undefined;

  constructor(opts: ClientOptions) {
    if (!opts || !opts.baseUrl) throw new TypeError("podium: baseUrl is required");
    this.baseUrl = String(opts.baseUrl).replace(/\/+$/, "");
    this.keyValue = opts.key || "";
    this.retry = retryPolicy(opts.retry);
    const f = opts.fetch || globalThis.fetch;
    if (typeof f !== "function") throw new TypeError("podium: no fetch; pass one in the options");
    this.fetchFn = opts.fetch ? f : (input, init) => globalThis.fetch(input, init);
    this.userAgent = opts.userAgent ?? `podium-ts/${version}`;
    this.WebSocket = opts.WebSocket ?? (globalThis as { WebSocket?: WebSocketConstructor }).WebSocket;
  }

  /** The key or session token the client sends ("" for none). */
  get key(): string {
    return this.keyValue;
  }

  /**
   * Makes the client send another key or session token from now on (a
   * token a refresh returned, say). {@link refreshSession} does it by
   * itself for a session that refreshes itself.
   */
  setKey(key: string): void {
    this.keyValue = key || "";
  }

  /** A client of the same server and options that sends another key. */
  withKey(key: string): PodiumClient {
    const c = Object.create(PodiumClient.prototype) as PodiumClient;
    Object.assign(c, this);
    c.keyValue = key || "";
    return c;
  }

  /** The headers every request of this client carries. */
  authHeaders(): Record<string, string> {
    const h: Record<string, string> = {};
    if (this.keyValue) h["Authorization"] = "Bearer " + this.keyValue;
    if (inNode && this.userAgent) h["User-Agent"] = this.userAgent;
    return h;
  }

  /** @internal the fetch this client uses. */
  get fetcher(): typeof fetch {
    return this.fetchFn;
  }

  /**
   * Calls any operation of the spec by its operationId, typed from the
   * spec: an escape hatch for what has no method here (admin calls). GET is
   * retried as a read, PUT and DELETE as idempotent writes, a POST only
   * when the server says nothing was applied, unless it carries an
   * idempotencyKey: then it is retried as a submission is.
   */
  async request<K extends OperationId>(id: K, req: {
    params?: Params<K>; query?: Query<K>; body?: Operations[K]["body"];
  } & WriteOptions = {}): Promise<Ok<K>> {
    const m = operations[id].method as string;
    const kind: RequestKind = m === "GET" ? "read" : m === "PUT" || m === "DELETE" ? "idempotent" : req.idempotencyKey ? "keyed" : "once";
    return (await this.call(id, { ...req, kind })).data;
  }

  // call sends a request with retries and decodes its answer.
  private async call<K extends OperationId, T = Ok<K>>(id: K, req: Request<K>): Promise<Answer<T>> {
    const op = operations[id];
    const kind = req.kind || (op.method === "GET" ? "read" : "once");
    let idem = req.idempotencyKey || "";
    if (kind === "keyed" && !idem) idem = await newIdempotencyKey();
    const url = this.baseUrl + operationPath(id, req.params as Record<string, string>) +
      encodeQuery(req.query as Record<string, string | number | boolean | undefined>);
    const headers: Record<string, string> = { Accept: req.binary ? "*/*" : "application/json", ...this.authHeaders() };
    let body: BodyInit | undefined;
    if (req.raw) {
      body = req.raw as BodyInit;
      headers["Content-Type"] = req.rawType || "application/octet-stream";
    } else if (req.body !== undefined) {
      body = JSON.stringify(req.body);
      headers["Content-Type"] = "application/json";
    }
    if (idem) headers["Idempotency-Key"] = idem;
    const info: WriteInfo = { idempotencyKey: idem, replayed: false, reconstructed: false, attempts: 0 };
    for (let attempt = 0; ; attempt++) {
      info.attempts = attempt + 1;
      let err: unknown;
      try {
        const res = await this.fetchFn(url, { method: op.method, headers, body, signal: req.signal ?? null });
        info.replayed = res.headers.get("Idempotent-Replayed") === "true";
        info.reconstructed = res.headers.get("Idempotent-Reconstructed") === "true";
        if (res.status < 300) {
          let data: unknown;
          if (req.binary) {
            data = new Uint8Array(await res.arrayBuffer());
          } else {
            const text = await res.text();
            try {
              data = text ? JSON.parse(text) : undefined;
            } catch (e) {
              throw new PodiumError(res.status, "invalid_answer", `the answer of ${op.method} ${url} is not JSON`);
            }
          }
          return { data: data as T, status: res.status, headers: res.headers, info };
        }
        err = errorFromAnswer(res.status, res.headers, await res.text().catch(() => ""));
      } catch (e) {
        if (e instanceof PodiumError) throw e;
        if (req.signal?.aborted) throw req.signal.reason ?? e;
        err = new PodiumNetworkError(`podium: ${op.method} ${url}: ${(e as Error)?.message || e}`, { cause: e });
      }
      const wait = nextRetry(this.retry, kind, attempt, err);
      if (wait === undefined) throw err;
      await sleep(wait, req.signal);
    }
  }

  // --- boards ---

  /** Lists the public boards and those the key may read, in id order, following every page. */
  async listBoards(opts: CallOptions = {}): Promise<S.Board[]> {
    const all: S.Board[] = [];
    let cursor: string | undefined;
    for (;;) {
      const page = await this.boardsPage({ ...opts, cursor });
      all.push(...page.boards);
      if (page.next_cursor === null) return all;
      cursor = page.next_cursor;
    }
  }

  /** One page of the board list: `cursor` from the previous page's `next_cursor`. */
  async boardsPage(opts: CallOptions & { cursor?: string | undefined; limit?: number } = {}): Promise<Ok<"listBoards">> {
    return (await this.call("listBoards", { query: { cursor: opts.cursor || undefined, limit: opts.limit }, signal: opts.signal })).data;
  }

  /** Reads a board (404 `board_not_found`). */
  async getBoard(board: string, opts: CallOptions = {}): Promise<S.Board> {
    return (await this.call("getBoard", { params: { board }, signal: opts.signal })).data;
  }

  /**
   * Creates or updates a board (admin). `created` is true for a new board
   * (201). Changing keys, mode or cadence of a board with entries is 409.
   */
  async putBoard(board: string, spec: S.BoardPut, opts: CallOptions = {}): Promise<{ board: S.Board; created: boolean }> {
    const a = await this.call("putBoard", { params: { board }, body: spec, kind: "idempotent", signal: opts.signal });
    return { board: a.data, created: a.status === 201 };
  }

  /** Deletes a board with its entries and log (admin). */
  async deleteBoard(board: string, opts: CallOptions = {}): Promise<void> {
    await this.call("deleteBoard", { params: { board }, kind: "idempotent", signal: opts.signal });
  }

  // --- scores ---

  /**
   * Submits one score (submit scope, or a player session on a board with
   * `player_submit`). It carries an Idempotency-Key, the same on every
   * retry (network errors, 429, 503 and `outcome_unknown`), so it is
   * applied at most once; `replayed` says the answer came from an earlier
   * attempt. A board that holds it for review answers `held: true`.
   */
  async submit(board: string, score: Score, opts: WriteOptions = {}): Promise<Submitted> {
    const a = await this.call<"submit", S.SubmitResult | S.Held>("submit", {
      params: { board }, body: score, kind: "keyed", idempotencyKey: opts.idempotencyKey, signal: opts.signal,
    });
    if (a.status === 202) return { ...a.info, held: true, pending: a.data as S.Held };
    return { ...a.info, held: false, result: a.data as S.SubmitResult };
  }

  /**
   * Submits up to 10,000 scores, each naming its board, in one request with
   * one Idempotency-Key. Results are in the order of the scores; an item
   * refused alone has `error` in its place.
   */
  async submitBatch(scores: BatchScore[], opts: WriteOptions = {}): Promise<WriteInfo & Ok<"submitBatch">> {
    const a = await this.call("submitBatch", { body: { scores }, kind: "keyed", idempotencyKey: opts.idempotencyKey, signal: opts.signal });
    return { ...a.info, ...a.data };
  }

  // --- reads ---

  /**
   * Reads ranks offset+1 to offset+limit of a board (limit 1 to 1000,
   * default 100). `total` counts every entry, for paging. `topPercent`
   * (above 0, at most 100, 2 decimals) ends the page at the top that many
   * percent: the answer's `top_count` entries (page on with offset).
   */
  async top(board: string, opts: ReadOptions & { offset?: number; limit?: number; topPercent?: number } = {}): Promise<S.Page> {
    return (await this.call("entries", {
      params: { board },
      query: { period: opts.period, offset: opts.offset, limit: opts.limit, include_hidden: opts.includeHidden || undefined,
        top_percent: opts.topPercent },
      signal: opts.signal,
    })).data;
  }

  /** Reads the entries of some players (at most 1,000) in board order; players without one are left out. */
  async entries(board: string, players: string[], opts: ReadOptions = {}): Promise<S.Page> {
    return (await this.call("entries", {
      params: { board },
      query: { period: opts.period, players: players.join(","), include_hidden: opts.includeHidden || undefined },
      signal: opts.signal,
    })).data;
  }

  /** Reads one player's entry and rank (404 `entry_not_found`). */
  async entry(board: string, player: string, opts: ReadOptions = {}): Promise<S.EntryAnswer> {
    return (await this.call("entry", {
      params: { board, player },
      query: { period: opts.period, include_hidden: opts.includeHidden || undefined },
      signal: opts.signal,
    })).data;
  }

  /** Reads one player's rank, or null when the player has no entry. */
  async rank(board: string, player: string, opts: ReadOptions = {}): Promise<number | null> {
    try {
      return (await this.entry(board, player, opts)).rank;
    } catch (e) {
      if (e instanceof PodiumError && e.code === "entry_not_found") return null;
      throw e;
    }
  }

  /** Reads the entries from the player's rank-radius to rank+radius (radius 0-500, default 5). */
  async around(board: string, player: string, opts: ReadOptions & { radius?: number } = {}): Promise<S.Page> {
    return (await this.call("around", {
      params: { board, player },
      query: { period: opts.period, radius: opts.radius, include_hidden: opts.includeHidden || undefined },
      signal: opts.signal,
    })).data;
  }

  /** Lists the periods of a board that have entries, newest first. */
  async periods(board: string, opts: CallOptions = {}): Promise<Ok<"periods">> {
    return (await this.call("periods", { params: { board }, signal: opts.signal })).data;
  }

  /** A player's logged submissions on a board, newest first; follow `next_cursor` until null. */
  async history(board: string, player: string, opts: CallOptions & { cursor?: string | number; limit?: number } = {}): Promise<Ok<"history">> {
    return (await this.call("history", {
      params: { board, player }, query: { cursor: opts.cursor, limit: opts.limit }, signal: opts.signal,
    })).data;
  }

  /** The newest activity-feed events of one board (or of every board the caller may read). */
  async feed(opts: CallOptions & { board?: string; limit?: number } = {}): Promise<Ok<"feed">> {
    return (await this.call("feed", { query: { board: opts.board, limit: opts.limit }, signal: opts.signal })).data;
  }

  // --- players ---

  /** Reads a player (read scope; 404 `not_found`). */
  async getPlayer(player: string, opts: CallOptions = {}): Promise<S.Player> {
    return (await this.call("getPlayer", { params: { player }, signal: opts.signal })).data;
  }

  /** Names, hides or shows a player (admin). */
  async putPlayer(player: string, spec: S.PlayerPut, opts: CallOptions = {}): Promise<S.Player> {
    return (await this.call("putPlayer", { params: { player }, body: spec, kind: "idempotent", signal: opts.signal })).data;
  }

  // --- sessions ---

  /**
   * Issues a player session (sessions scope; the game's login service).
   * Its `token` is shown only here. It carries an Idempotency-Key, but the
   * server answers a repeated key with 409 naming the session (the token
   * cannot be shown twice), so it is retried only when the server says
   * nothing was applied, never after a network error.
   */
  async issueSession(player: string, spec: { device: string; ttl_seconds?: number }, opts: WriteOptions = {}): Promise<S.SessionWithToken> {
    const idempotencyKey = opts.idempotencyKey || await newIdempotencyKey();
    return (await this.call("issueSession", {
      params: { player }, body: spec, kind: "once", idempotencyKey, signal: opts.signal,
    })).data;
  }

  /** Lists a player's unexpired sessions, oldest first, without tokens. */
  async listSessions(player: string, opts: CallOptions = {}): Promise<S.Session[]> {
    return (await this.call("listSessions", { params: { player }, signal: opts.signal })).data.sessions;
  }

  /** Ends one session at once (404 `not_found`). */
  async revokeSession(player: string, id: string, opts: CallOptions = {}): Promise<void> {
    await this.call("revokeSession", { params: { player, id }, kind: "idempotent", signal: opts.signal });
  }

  /** Ends every session of a player ("log out everywhere") and says how many. */
  async revokeSessions(player: string, opts: CallOptions = {}): Promise<number> {
    return (await this.call("revokeSessions", { params: { player }, kind: "idempotent", signal: opts.signal })).data.revoked;
  }

  /**
   * Gives a session a new token and a new TTL; the old token stops working
   * at once, so a refresh is never retried after a network error. A client
   * that is that session (its key is a `pds_` token) adopts the new token.
   */
  async refreshSession(player: string, id: string, opts: CallOptions = {}): Promise<S.SessionWithToken> {
    const sent = this.keyValue;
    const s = (await this.call("refreshSession", { params: { player, id }, body: {}, kind: "once", signal: opts.signal })).data;
    if (sent.startsWith("pds_") && this.keyValue === sent) this.keyValue = s.token;
    return s;
  }

  // --- evidence ---

  /**
   * Uploads a replay (one gzip member of JSON Lines; see gzipEvents) for a
   * submission: `seq` (its answer's), or `review` (a held submission's id),
   * or neither (the player's current entry). The hashes are computed here.
   * Uploading the same content again is harmless (`reused`); other content
   * for the same submission is 409.
   */
  async uploadEvidence(board: string, player: string, gz: BytesLike,
    opts: CallOptions & { seq?: number; review?: string } = {}): Promise<S.Evidence> {
    const bytes = await toBytes(gz);
    const { content, compressed } = await evidenceHashes(bytes);
    return (await this.call("putEvidence", {
      params: { board, player },
      query: { seq: opts.seq, review: opts.review, content_sha256: content, compressed_sha256: compressed },
      raw: bytes, rawType: "application/gzip", kind: "idempotent", signal: opts.signal,
    })).data as S.Evidence;
  }

  /** Downloads a submission's evidence, the gzip bytes as stored. */
  async downloadEvidence(board: string, player: string, opts: CallOptions & { seq?: number; review?: string } = {}): Promise<Uint8Array> {
    return (await this.call<"getEvidence", Uint8Array>("getEvidence", {
      params: { board, player }, query: { seq: opts.seq, review: opts.review }, binary: true, signal: opts.signal,
    })).data;
  }

  // --- tournaments ---

  /** Lists the tournaments the caller may read. */
  async listTournaments(opts: CallOptions = {}): Promise<Ok<"listTournaments">["tournaments"]> {
    return (await this.call("listTournaments", { signal: opts.signal })).data.tournaments;
  }

  /** Where a tournament stands: state, participants, settlement. */
  async getTournament(board: string, opts: CallOptions = {}): Promise<S.TournamentStatus> {
    return (await this.call("getTournament", { params: { board }, signal: opts.signal })).data;
  }

  /** Joins a player to a tournament (submit scope); joining twice answers `already: true`. */
  async join(board: string, player: string, opts: CallOptions = {}): Promise<S.JoinResult> {
    return (await this.call("join", { params: { board }, body: { player }, kind: "idempotent", signal: opts.signal })).data;
  }

  /** A page of a tournament's participants, in join order. */
  async participants(board: string, opts: CallOptions & { offset?: number; limit?: number } = {}): Promise<Ok<"participants">> {
    return (await this.call("participants", { params: { board }, query: { offset: opts.offset, limit: opts.limit }, signal: opts.signal })).data;
  }

  /** A page of a tournament's payouts, best rank first. */
  async payouts(board: string, opts: CallOptions & { offset?: number; limit?: number } = {}): Promise<Ok<"payouts">> {
    return (await this.call("payouts", { params: { board }, query: { offset: opts.offset, limit: opts.limit }, signal: opts.signal })).data;
  }

  /** Settles a tournament now (admin); a repeated run pays only differences. */
  async settle(board: string, opts: CallOptions = {}): Promise<S.SettlementRun> {
    return (await this.call("settle", { params: { board }, body: {}, kind: "idempotent", signal: opts.signal })).data;
  }

  // --- contests (CTF) ---

  /** Lists the contests the caller may read. */
  async listContests(opts: CallOptions = {}): Promise<S.Contest[]> {
    return (await this.call("listContests", { signal: opts.signal })).data.contests;
  }

  /** Reads a contest (404 `not_found`). */
  async getContest(contest: string, opts: CallOptions = {}): Promise<S.Contest> {
    return (await this.call("getContest", { params: { contest }, signal: opts.signal })).data;
  }

  /** The challenges with their current values, solve counts and first bloods. */
  async challenges(contest: string, opts: CallOptions & { view?: View } = {}): Promise<Ok<"contestChallenges">> {
    return (await this.call("contestChallenges", { params: { contest }, query: { view: opts.view }, signal: opts.signal })).data;
  }

  /**
   * Reports a judge's verdict on a team's attempt (submit scope), with an
   * Idempotency-Key its retries reuse: a repeated attempt is answered from
   * the first and logged once.
   */
  async attempt(contest: string, attempt: { team: string; challenge: string; correct: boolean },
    opts: WriteOptions = {}): Promise<WriteInfo & Ok<"postAttempt">> {
    const a = await this.call("postAttempt", {
      params: { contest }, body: attempt, kind: "keyed", idempotencyKey: opts.idempotencyKey, signal: opts.signal,
    });
    return { ...a.info, ...a.data };
  }

  /** A page of the standings (public: frozen until revealed; live: admin). */
  async standings(contest: string, opts: CallOptions & {
    view?: View; offset?: number; limit?: number; includeHidden?: boolean; at?: string | Date; solves?: boolean;
  } = {}): Promise<Ok<"contestStandings">> {
    const at = opts.at instanceof Date ? opts.at.toISOString() : opts.at;
    return (await this.call("contestStandings", {
      params: { contest },
      query: { view: opts.view, offset: opts.offset, limit: opts.limit, include_hidden: opts.includeHidden || undefined, at, solves: opts.solves || undefined },
      signal: opts.signal,
    })).data;
  }

  /** One team's standing with its solves (a team's own portal: a submit key of the contest reads it live). */
  async team(contest: string, team: string, opts: CallOptions & { view?: View } = {}): Promise<Ok<"contestTeam">> {
    return (await this.call("contestTeam", { params: { contest, team }, query: { view: opts.view }, signal: opts.signal })).data;
  }

  /** The first bloods of every challenge. */
  async firstBloods(contest: string, opts: CallOptions & { view?: View } = {}): Promise<Ok<"contestFirstBloods">> {
    return (await this.call("contestFirstBloods", { params: { contest }, query: { view: opts.view }, signal: opts.signal })).data;
  }

  /** The score over time of the top teams (1-50, default 10). */
  async chart(contest: string, opts: CallOptions & { view?: View; top?: number } = {}): Promise<Ok<"contestChart">> {
    return (await this.call("contestChart", { params: { contest }, query: { view: opts.view, top: opts.top }, signal: opts.signal })).data;
  }

  // --- keys (admin; for a game server's setup) ---

  /**
   * Creates an API key (admin); its `key` is shown only here. A retry could
   * create a second key, so it is retried only when nothing was applied.
   */
  async createKey(spec: Operations["createKey"]["body"], opts: CallOptions = {}): Promise<Ok<"createKey">> {
    return (await this.call("createKey", { body: spec, kind: "once", signal: opts.signal })).data;
  }

  /** Revokes an API key at once (admin); its live streams end. */
  async deleteKey(id: string, opts: CallOptions = {}): Promise<void> {
    await this.call("deleteKey", { params: { id }, kind: "idempotent", signal: opts.signal });
  }

  // --- leagues and groups (their own files: leagues.ts, groups.ts) ---

  /** The league calls (docs/API.md, "Leagues"): `podium.leagues.standing("xp", "amy")`. */
  get leagues(): Leagues {
    // A getter, not a field: withKey's copy must call with its own key.
    return new Leagues(this, (id, req) => this.call(id, req));
  }

  /** The group calls (docs/API.md, "Groups and group boards"): `podium.groups.join("clans", "red", "amy")`. */
  get groups(): Groups {
    return new Groups((id, req) => this.call(id, req));
  }

  // --- live ---

  /**
   * Follows the top `limit` entries of a board (or a contest's public
   * standings) live, over Server-Sent Events (default) or the WebSocket,
   * resuming after a cut and resyncing after a gap. See {@link LiveBoard}.
   */
  subscribe(board: string, opts: Omit<SubscribeOptions, "board"> = {}): LiveBoard {
    return new LiveBoard(this, { ...opts, board });
  }
}
