// Errors the client throws: PodiumError for an answer of the server (its
// status and error code), PodiumNetworkError when no answer came.

/**
 * The error codes podium answers today (docs/API.md, "Errors"). The server
 * may add codes: the type stays open to any string.
 */
export type PodiumErrorCode =
  | "invalid_json"
  | "invalid_argument"
  | "unauthenticated"
  | "forbidden"
  | "not_joined"
  | "board_not_found"
  | "entry_not_found"
  | "not_found"
  | "method_not_allowed"
  | "request_timeout"
  | "conflict"
  | "tournament_closed"
  | "tournament_full"
  | "points_board"
  | "too_large"
  | "unsupported_media_type"
  | "unprocessable"
  | "rate_limited"
  | "quota_exceeded"
  | "internal"
  | "unavailable"
  | "outcome_unknown"
  // eslint-disable-next-line @typescript-eslint/ban-types
  | (string & {});

/**
 * An error answer of the server, `{"error": {"code", "message"}}`, with
 * its HTTP status. A body that is not that envelope (a proxy's page) keeps
 * the status with the code `http_<status>`. A live stream's `error` event
 * has status 0.
 */
export class PodiumError extends Error {
  override readonly name = "PodiumError";
  /** The HTTP status (0 for a live stream's error event). */
  readonly status: number;
  /** The API's error code: `board_not_found`, `conflict`, `rate_limited`, ... */
  readonly code: PodiumErrorCode;
  /** Retry-After in milliseconds, 0 when absent. */
  readonly retryAfterMs: number;
  /** `quota_exceeded`: when the player may submit again (RFC 3339). */
  readonly resetsAt?: string;

  constructor(status: number, code: PodiumErrorCode, message: string, retryAfterMs = 0, resetsAt?: string) {
    super(`podium: ${status ? status + " " : ""}${code}: ${message}`);
    this.status = status;
    this.code = code;
    this.retryAfterMs = retryAfterMs;
    if (resetsAt !== undefined) this.resetsAt = resetsAt;
  }

  /** A 404 of any code (board_not_found, entry_not_found, not_found). */
  get isNotFound(): boolean {
    return this.status === 404 || (this.status === 0 && /not_found$/.test(this.code));
  }

  /** A 409 of any code (conflict, tournament_closed, tournament_full, points_board). */
  get isConflict(): boolean {
    return this.status === 409;
  }

  /** A 429 (rate_limited, quota_exceeded). */
  get isRateLimited(): boolean {
    return this.status === 429;
  }
}

/**
 * No answer: the connection failed or was cut. For a write, the server may
 * or may not have applied it; a write with an Idempotency-Key can be sent
 * again with the same key (the client does so by itself).
 */
export class PodiumNetworkError extends Error {
  override readonly name = "PodiumNetworkError";
  constructor(message: string, options?: { cause?: unknown }) {
    super(message);
    if (options && "cause" in options) (this as { cause?: unknown }).cause = options.cause;
  }
}

/** Whether err is a PodiumError with one of the codes given (any code when none is). */
export function isPodiumError(err: unknown, ...codes: PodiumErrorCode[]): err is PodiumError {
  return err instanceof PodiumError && (codes.length === 0 || codes.includes(err.code));
}

// parseRetryAfter reads Retry-After (whole seconds or an HTTP date) in ms.
export function parseRetryAfter(v: string | null): number {
  if (!v) return 0;
  if (/^\d+$/.test(v.trim())) return Number(v.trim()) * 1000;
  const t = Date.parse(v);
  return Number.isFinite(t) ? Math.max(0, t - Date.now()) : 0;
}

// errorFromAnswer turns an error answer's status, headers and body text
// into a PodiumError.
export function errorFromAnswer(status: number, headers: Headers, text: string): PodiumError {
  const retry = parseRetryAfter(headers.get("Retry-After"));
  try {
    const env = JSON.parse(text) as { error?: { code?: unknown; message?: unknown; resets_at?: unknown } };
    const e = env && env.error;
    if (e && typeof e.code === "string" && e.code) {
      return new PodiumError(status, e.code, typeof e.message === "string" ? e.message : "", retry,
        typeof e.resets_at === "string" ? e.resets_at : undefined);
    }
  } catch {
    // not the envelope
  }
  return new PodiumError(status, `http_${status}`, text.trim().slice(0, 200) || `HTTP ${status}`, retry);
}
