// The live window's rules on their own (docs/CLIENT.md, "How it stays
// correct"), and the retry decisions, without a server.
import { test } from "node:test";
import assert from "node:assert/strict";
import { applySnapshot, applyDelta, eventId, percentile, PodiumError } from "../dist/index.js";
import { nextRetry, defaultRetry } from "../dist/retry.js";
import { operations } from "../dist/index.js";
import { encodeQuery, operationPath } from "../dist/index.js";

const keys = [{ name: "s", order: "desc" }];
const e = (rank, player, v, extra = {}) => ({ rank, player, name: player, keys: [v], at: "2026-12-01T00:00:00.000Z", meta: {}, ...extra });
const snap = (sid, seq, entries, more = {}) => ({ type: "snapshot", board: "b", title: "B", keys, period: "all", next_reset: null, seq, snapshot_id: sid, limit: 3, total: entries.length, entries, ...more });
const delta = (sid, prev, seq, changes, removed = [], total = 3) => ({ type: "delta", board: "b", period: "all", seq, prev_seq: prev, snapshot_id: sid, total, changes, removed });

test("a delta replaces changed entries, drops removed ones and keeps the rest in order", () => {
  const { state } = applySnapshot(null, snap(7, 10, [e(1, "a", 30), e(2, "b", 20), e(3, "c", 10)]));
  assert.equal(eventId(state), "7.10");
  // d enters at 2: b and c move down, c leaves the window of 3.
  const r = applyDelta(state, delta(7, 10, 11, [e(2, "d", 25), e(3, "b", 20, { prev_rank: 2 })], [{ player: "c", prev_rank: 3 }], 4));
  assert.notEqual(r, "gap");
  assert.deepEqual(r.state.entries.map((x) => [x.rank, x.player]), [[1, "a"], [2, "d"], [3, "b"]]);
  assert.equal(r.state.seq, 11);
  assert.equal(r.state.total, 4);
  assert.deepEqual(r.update.entered.map((x) => x.player), ["d"]);
  assert.deepEqual(r.update.moved, [{ player: "b", name: "b", rank: 3, prev_rank: 2 }]);
  assert.deepEqual(r.update.left, [{ player: "c", prev_rank: 3 }]);
  assert.equal(state.entries.length, 3, "the old state is not changed");
  // The total moved, so every percentile did: a is a new object, and the
  // old state keeps its own.
  assert.deepEqual(r.state.entries.map((x) => x.percentile), [75, 50, 25]);
  assert.equal(state.entries[0].percentile, 66.66, "the old state is not changed");
  // With the same total, an unchanged entry is the same object.
  const r2 = applyDelta(r.state, delta(7, 11, 12, [e(3, "b", 21)], [], 4));
  assert.notEqual(r2, "gap");
  assert.equal(r2.state.entries[0], r.state.entries[0], "an unchanged entry is the same object");
});

test("rank_shared rides the window, and percentiles follow the total", () => {
  const { state } = applySnapshot(null, snap(7, 10, [e(1, "a", 30, { rank_shared: 1 }), e(2, "b", 30, { rank_shared: 1 }), e(3, "c", 10, { rank_shared: 3 })]));
  assert.deepEqual(state.entries.map((x) => [x.rank_shared, x.percentile]), [[1, 66.66], [1, 33.33], [3, 0]]);
  // b breaks the tie downwards: its rank stays 2, its shared rank goes to 2.
  const r = applyDelta(state, delta(7, 10, 11, [e(2, "b", 20, { prev_rank: 2, rank_shared: 2 })], [], 5));
  assert.notEqual(r, "gap");
  assert.deepEqual(r.state.entries.map((x) => [x.player, x.rank_shared, x.percentile]), [["a", 1, 80], ["b", 2, 60], ["c", 3, 40]]);
  assert.equal(percentile(1, 0), 0);
  assert.equal(percentile(4, 3), 0);
  assert.equal(percentile(1, 10000000), 99.99);
});

test("a delta that does not follow the state, or does not fit it, is a gap", () => {
  const { state } = applySnapshot(null, snap(7, 10, [e(1, "a", 30), e(2, "b", 20)]));
  assert.equal(applyDelta(state, delta(7, 9, 11, [e(1, "b", 40)])), "gap", "prev_seq is not the state's seq");
  assert.equal(applyDelta(state, delta(8, 10, 11, [e(1, "b", 40)])), "gap", "another snapshot_id");
  assert.equal(applyDelta(state, delta(7, 10, 11, [e(5, "z", 1)])), "gap", "a rank outside the window");
  assert.equal(applyDelta(state, delta(7, 10, 11, [e(1, "x", 50), e(1, "y", 50)])), "gap", "two changes at one rank");
  assert.equal(applyDelta(state, delta(7, 10, 11, [e(1, "x", 50), e(2, "y", 45)])), "gap", "the window would outgrow its limit");
});

test("a snapshot after a reconnect reports what changed meanwhile; after a period reset nothing", () => {
  const { state } = applySnapshot(null, snap(7, 10, [e(1, "a", 30), e(2, "b", 20), e(3, "c", 10)]));
  const { update } = applySnapshot(state, snap(9, 14, [e(1, "b", 40), e(2, "a", 30), e(3, "d", 15)]));
  assert.equal(update.initial, false);
  assert.deepEqual(update.changed.map((x) => [x.player, x.prev_rank]), [["b", 2], ["a", 1], ["d", null]]);
  assert.deepEqual(update.left, [{ player: "c", prev_rank: 3 }]);
  const reset = applySnapshot(state, snap(9, 14, [e(1, "z", 1)], { period: "2026-12-02" }));
  assert.equal(reset.update.previous_period, "all");
  assert.deepEqual(reset.update.changed, []);
});

test("retries: reads and keyed writes after a lost answer, once-writes never; 4xx never; Retry-After is honoured", () => {
  const net = new Error("socket hang up");
  assert.notEqual(nextRetry(defaultRetry, "read", 0, net), undefined);
  assert.notEqual(nextRetry(defaultRetry, "keyed", 0, net), undefined);
  assert.equal(nextRetry(defaultRetry, "once", 0, net), undefined);
  const unknown = new PodiumError(503, "outcome_unknown", "x");
  assert.notEqual(nextRetry(defaultRetry, "keyed", 0, unknown), undefined);
  assert.equal(nextRetry(defaultRetry, "idempotent", 0, unknown), undefined);
  assert.equal(nextRetry(defaultRetry, "once", 0, unknown), undefined);
  assert.notEqual(nextRetry(defaultRetry, "once", 0, new PodiumError(503, "unavailable", "x")), undefined);
  assert.equal(nextRetry(defaultRetry, "read", 0, new PodiumError(409, "conflict", "x")), undefined);
  assert.equal(nextRetry(defaultRetry, "read", 0, new PodiumError(400, "invalid_argument", "x")), undefined);
  const w = nextRetry(defaultRetry, "read", 0, new PodiumError(429, "rate_limited", "x", 2000));
  assert.ok(w >= 2000 && w <= 2000 + defaultRetry.minDelayMs, `waits Retry-After, got ${w}`);
  assert.equal(nextRetry(defaultRetry, "read", 0, new PodiumError(429, "rate_limited", "x", 60000)), undefined, "too long a wait");
  assert.equal(nextRetry(defaultRetry, "read", defaultRetry.maxAttempts - 1, net), undefined, "attempts run out");
  for (let n = 0; n < 10; n++) {
    const d = nextRetry({ ...defaultRetry, maxAttempts: 99 }, "read", n, net);
    assert.ok(d >= 0 && d <= Math.min(defaultRetry.maxDelayMs, defaultRetry.minDelayMs * 2 ** n), `full jitter at ${n}: ${d}`);
  }
});

test("paths come from the spec and escape ids", () => {
  assert.equal(operations.submit.path, "/v1/boards/{board}/scores");
  assert.equal(operationPath("entry", { board: "ms:expert", player: "a/b c" }), "/v1/boards/ms%3Aexpert/entries/a%2Fb%20c");
  assert.equal(encodeQuery({ limit: 5, period: undefined, include_hidden: true }), "?limit=5&include_hidden=true");
});

// A WebSocket the test drives, passed to the client as its constructor.
class FakeWS {
  static made = [];
  constructor(url) {
    this.url = url;
    this.readyState = 0;
    this.sent = [];
    FakeWS.made.push(this);
  }
  send(s) { this.sent.push(JSON.parse(s)); }
  close() { this.readyState = 3; }
  open() { this.readyState = 1; this.onopen?.({}); }
  deliver(m) { this.onmessage?.({ data: JSON.stringify(m) }); }
}

test("ws: a gap resubscribes on the same socket without a last event id; an error alone ends a connection", async () => {
  FakeWS.made = [];
  const { PodiumClient } = await import("../dist/index.js");
  const c = new PodiumClient({ baseUrl: "http://podium.test", key: "pdm_k", WebSocket: FakeWS });
  const updates = [];
  const live = c.subscribe("b", { transport: "ws", limit: 3, minDelayMs: 1, maxDelayMs: 2, onUpdate: (s, u) => updates.push(u) });
  try {
    await new Promise((r) => queueMicrotask(r));
    // The first socket fails without a close event (as Node 20's does when refused).
    const first = FakeWS.made[0];
    assert.equal(first.url, "ws://podium.test/v1/stream?key=pdm_k");
    first.onerror({});
    await live.waitForStatus((s) => s.state === "reconnecting" && s.retryAt === null);
    const ws = FakeWS.made[1];
    assert.ok(ws, "a new socket after the error");
    ws.open();
    assert.deepEqual(ws.sent[0], { op: "subscribe", board: "b", limit: 3, id: "subscribe" });
    ws.deliver(snap(7, 10, [e(1, "a", 30)]));
    ws.deliver(delta(7, 10, 11, [e(1, "x", 50), { ...e(2, "a", 30), prev_rank: 1 }], [], 2));
    assert.deepEqual(live.state.entries.map((x) => x.player), ["x", "a"]);
    ws.deliver(delta(7, 12, 13, [e(1, "y", 60)])); // seq 12 never came: a gap
    assert.deepEqual(ws.sent.slice(1), [
      { op: "unsubscribe", board: "b", id: "unsubscribe" },
      { op: "subscribe", board: "b", limit: 3, id: "subscribe" },
    ]);
    ws.deliver(delta(7, 13, 14, [e(1, "z", 70)])); // ignored while the snapshot is awaited
    ws.deliver(snap(8, 14, [e(1, "y", 60), e(2, "x", 50), e(3, "a", 30)]));
    assert.deepEqual(live.state.entries.map((x) => x.player), ["y", "x", "a"]);
    assert.deepEqual(updates.map((u) => u.type), ["snapshot", "delta", "snapshot"]);
    assert.equal(live.lastEventId, "8.14");
    assert.equal(FakeWS.made.length, 2, "the resync stayed on the socket");
  } finally {
    live.close();
  }
});
