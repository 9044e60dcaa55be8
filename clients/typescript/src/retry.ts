// When a call is retried, as the Go client decides it (client/retry.go):
// by what a repetition of the request could do.

import { PodiumError } from "./errors.js";

/**
 * What a retry of a request could do:
 * - `read` changes nothing: retried after a network error, 429 and 503.
 * - `idempotent` is a write whose repetition has the effect of one (PUT,
 *   DELETE, a join): retried as a read.
 * - `keyed` carries an Idempotency-Key, the same on every attempt, so a
 *   repeated one is answered from the first: retried after a network error,
 *   429, 503 `unavailable` and 503 `outcome_unknown`.
 * - `once` would apply again (a new key, a session's refresh): retried only
 *   when the server says nothing was applied (429, 503 `unavailable`), never
 *   after a network error.
 */
export type RequestKind = "read" | "idempotent" | "keyed" | "once";

/**
 * Bounds the retries of one call. Before retry n (from 0) the client waits
 * a random time in [0, min(maxDelayMs, minDelayMs × 2^n)] (full jitter), or
 * the server's Retry-After plus up to minDelayMs of jitter. It never
 * retries a 4xx other than 429, and gives up when the server asks for a
 * wait longer than maxRetryAfterMs.
 */
export interface RetryPolicy {
  /** Attempts in all, the first included (default 4; 1: no retry). */
  maxAttempts: number;
  /** Default 100. */
  minDelayMs: number;
  /** Default 5000. */
  maxDelayMs: number;
  /** Default 30000. */
  maxRetryAfterMs: number;
}

export const defaultRetry: RetryPolicy = { maxAttempts: 4, minDelayMs: 100, maxDelayMs: 5000, maxRetryAfterMs: 30000 };

/** Sends every request once. */
export const noRetry: RetryPolicy = { ...defaultRetry, maxAttempts: 1 };

export function retryPolicy(p?: Partial<RetryPolicy>): RetryPolicy {
  const out = { ...defaultRetry, ...(p || {}) };
  if (!(out.maxAttempts >= 1)) out.maxAttempts = defaultRetry.maxAttempts;
  if (!(out.minDelayMs > 0)) out.minDelayMs = defaultRetry.minDelayMs;
  if (!(out.maxDelayMs >= out.minDelayMs)) out.maxDelayMs = Math.max(out.minDelayMs, defaultRetry.maxDelayMs);
  if (!(out.maxRetryAfterMs > 0)) out.maxRetryAfterMs = defaultRetry.maxRetryAfterMs;
  return out;
}

/** The full-jitter wait in ms before attempt n (from 0) of a backoff. */
export function backoff(n: number, minMs: number, maxMs: number): number {
  const ceil = Math.min(maxMs, minMs * Math.pow(2, Math.min(n, 30)));
  return Math.random() * ceil;
}

/**
 * Whether a request of kind k that failed with err on attempt n (from 0)
 * is retried, and after how many ms; undefined: it is not.
 */
export function nextRetry(p: RetryPolicy, k: RequestKind, n: number, err: unknown): number | undefined {
  if (n + 1 >= p.maxAttempts) return undefined;
  let wait = backoff(n, p.minDelayMs, p.maxDelayMs);
  if (!(err instanceof PodiumError)) {
    // No answer: the request may or may not have been applied.
    return k === "once" ? undefined : wait;
  }
  if (err.status === 503 && err.code === "outcome_unknown") {
    if (k !== "keyed") return undefined;
  } else if (err.status !== 429 && err.status !== 503) {
    return undefined;
  }
  if (err.retryAfterMs > 0) {
    if (err.retryAfterMs > p.maxRetryAfterMs) return undefined;
    wait = err.retryAfterMs + Math.random() * p.minDelayMs;
  }
  return wait;
}

/**
 * Web Crypto: the global one (browsers, Node 19+), else Node 18's
 * node:crypto webcrypto, imported by a name that bundlers leave alone.
 */
export async function webCrypto(): Promise<Crypto> {
  if (globalThis.crypto && globalThis.crypto.subtle) return globalThis.crypto;
  const name = "node:crypto";
  const m = (await import(/* webpackIgnore: true */ /* @vite-ignore */ name)) as { webcrypto: Crypto };
  return m.webcrypto;
}

/** A random Idempotency-Key: 128 bits from Web Crypto, in hex. */
export async function newIdempotencyKey(): Promise<string> {
  const b = new Uint8Array(16);
  (await webCrypto()).getRandomValues(b);
  return Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
}

/** sleep waits ms, or rejects when signal aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const t = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(t);
      reject(signal!.reason);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
