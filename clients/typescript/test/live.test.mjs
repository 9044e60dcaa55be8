// The live subscriber against a real podium, over SSE and the WebSocket:
// it resumes after a cut connection (getting exactly the missed deltas),
// comes back after a server restart (a snapshot: the new process cannot
// resume the old chain), resyncs after a gap, and stops on a fatal error.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { PodiumClient, PodiumError } from "../dist/index.js";
import { Podium, Proxy, uid, within } from "./harness.mjs";

let server, proxy, admin;

before(async () => {
  server = await new Podium().start();
  proxy = await new Proxy(server.url).start();
  admin = new PodiumClient({ baseUrl: server.url, key: server.adminKey });
});

after(async () => {
  await proxy?.close();
  await server?.close();
});

async function board() {
  const id = uid("live");
  await admin.putBoard(id, { title: id, keys: [{ name: "time_ms", order: "asc" }], public: true });
  return id;
}

const players = (s) => s.entries.map((e) => e.player);
const fast = { minDelayMs: 20, maxDelayMs: 200 };

for (const transport of ["sse", "ws"]) {
  test(`${transport}: a cut connection resumes with the missed deltas, not a new snapshot`, async () => {
    const b = await board();
    await admin.submit(b, { player: "ann", score: 3000 });
    const updates = [];
    const viaProxy = new PodiumClient({ baseUrl: proxy.url });
    const live = viaProxy.subscribe(b, { transport, limit: 5, ...fast, onUpdate: (s, u) => updates.push({ s, u }) });
    // Another viewer of the same window, not behind the proxy: the server
    // keeps a window's history while someone watches it (a window nobody
    // watched while its board changed starts afresh, with a snapshot).
    const other = new PodiumClient({ baseUrl: server.url }).subscribe(b, { transport, limit: 5 });
    try {
      await other.ready;
      const first = await live.ready;
      assert.deepEqual(players(first), ["ann"]);
      assert.equal(updates[0].u.initial, true);
      await admin.submit(b, { player: "ben", score: 2000 });
      await live.waitFor((s) => players(s).join() === "ben,ann");
      const sid = live.state.snapshot_id;

      // Cut every connection and keep the next ones waiting, then change
      // the board while the subscriber is away.
      proxy.hold();
      proxy.cut();
      await live.waitForStatus((st) => st.state === "reconnecting");
      const seen = updates.length;
      // A new last place: a delta (a change that moves every entry of the
      // window comes as a snapshot, docs/API.md "Live updates").
      await admin.submit(b, { player: "cat", score: 4000 });
      proxy.release();

      const s = await live.waitFor((x) => players(x).join() === "ben,ann,cat");
      assert.equal(s.snapshot_id, sid, "the same chain: resumed, not started over");
      const after = updates.slice(seen);
      assert.ok(after.length >= 1);
      assert.ok(after.every(({ u }) => u.type === "delta"), `resumed with deltas only, got ${after.map(({ u }) => u.type)}`);
      const cat = after.flatMap(({ u }) => u.entered).find((e) => e.player === "cat");
      assert.equal(cat?.rank, 3);
      await live.waitForStatus((st) => st.state === "live");
    } finally {
      live.close();
      other.close();
      proxy.release();
    }
  });
}

for (const transport of ["sse", "ws"]) {
  test(`${transport}: a subscription survives a server restart and resyncs from a snapshot`, async () => {
    const b = await board();
    await admin.submit(b, { player: "ann", score: 3000 });
    const updates = [];
    const client = new PodiumClient({ baseUrl: server.url });
    const live = client.subscribe(b, { transport, limit: 5, ...fast, onUpdate: (s, u) => updates.push({ s, u }) });
    try {
      await live.ready;
      const sid = live.state.snapshot_id;
      const seen = updates.length; // the subscriber may resume before start() returns
      await server.stop();
      await live.waitForStatus((st) => st.state === "reconnecting", 15000);
      await server.start(); // same port, same data
      await admin.submit(b, { player: "ben", score: 1000 });
      const s = await live.waitFor((x) => players(x).join() === "ben,ann", 20000);
      assert.notEqual(s.snapshot_id, sid, "a new process starts a new chain");
      const first = updates[seen];
      assert.equal(first?.u.type, "snapshot", "the resume after a restart gets a snapshot");
      assert.equal(first.u.initial, false);
      assert.deepEqual(players(first.s).slice(-1), ["ann"], "what was stored before the restart is there");
      await live.waitForStatus((st) => st.state === "live");
    } finally {
      live.close();
    }
  });
}

test("sse: a deleted board stops the subscription with a PodiumError", async () => {
  const b = await board();
  const live = new PodiumClient({ baseUrl: server.url }).subscribe(b, fast);
  await live.ready;
  const stopped = live.waitForStatus((st) => st.state === "error");
  await admin.deleteBoard(b);
  const st = await stopped;
  assert.ok(st.error instanceof PodiumError);
  assert.equal(st.error.code, "board_not_found");
  await assert.rejects(live.waitFor(() => true), (e) => e instanceof PodiumError && e.code === "board_not_found");

  const missing = new PodiumClient({ baseUrl: server.url }).subscribe(uid("nope"), fast);
  await assert.rejects(missing.ready, (e) => e instanceof PodiumError && e.status === 404 && e.code === "board_not_found");
  assert.equal(missing.status.state, "error");
});

test("sse: a private board needs a key, sent in the Authorization header", async () => {
  const b = uid("priv");
  await admin.putBoard(b, { keys: [{ name: "s", order: "desc" }], public: false });
  await admin.submit(b, { player: "ann", score: 1 });
  const reader = (await admin.createKey({ name: uid("r"), scopes: ["read"], boards: [b] })).key;
  const live = new PodiumClient({ baseUrl: server.url, key: reader }).subscribe(b, fast);
  try {
    assert.deepEqual(players(await live.ready), ["ann"]);
  } finally {
    live.close();
  }
  const ws = new PodiumClient({ baseUrl: server.url, key: reader }).subscribe(b, { ...fast, transport: "ws" });
  try {
    assert.deepEqual(players(await ws.ready), ["ann"]);
  } finally {
    ws.close();
  }
});

// A stream server the test controls: the first connection gets a
// snapshot and then a delta that does not follow it (a gap); the
// subscriber must drop the chain and reconnect without a last event id.
test("sse: a gap makes the subscriber resync from a fresh snapshot", async () => {
  const requests = [];
  const keys = [{ name: "s", order: "desc" }];
  const snap = (sid, seq, entries) => ({ type: "snapshot", board: "g", title: "G", keys, period: "all", next_reset: null, seq, snapshot_id: sid, limit: 10, total: entries.length, entries });
  const e = (rank, player, v) => ({ rank, player, name: player, keys: [v], at: "2026-12-01T00:00:00.000Z", meta: {} });
  const fake = createServer((req, res) => {
    const u = new URL(req.url, "http://x");
    requests.push(u);
    res.writeHead(200, { "Content-Type": "text/event-stream" });
    const send = (m) => res.write(`id: ${m.snapshot_id}.${m.seq}\nevent: ${m.type}\ndata: ${JSON.stringify(m)}\n\n`);
    if (requests.length === 1) {
      send(snap(1, 1, [e(1, "ann", 10)]));
      send({ type: "delta", board: "g", period: "all", seq: 2, prev_seq: 1, snapshot_id: 1, total: 2, changes: [e(1, "ben", 20), { ...e(2, "ann", 10), prev_rank: 1 }], removed: [] });
      // seq 3 is missing: this delta follows 3, the subscriber holds 2.
      send({ type: "delta", board: "g", period: "all", seq: 4, prev_seq: 3, snapshot_id: 1, total: 3, changes: [e(1, "cat", 30)], removed: [] });
    } else {
      send(snap(2, 4, [e(1, "cat", 30), e(2, "ben", 20), e(3, "ann", 10)]));
    }
  });
  await new Promise((r) => fake.listen(0, "127.0.0.1", r));
  const updates = [];
  const live = new PodiumClient({ baseUrl: `http://127.0.0.1:${fake.address().port}` })
    .subscribe("g", { ...fast, limit: 10, onUpdate: (s, u) => updates.push(u) });
  try {
    const s = await live.waitFor((x) => x.snapshot_id === 2);
    assert.deepEqual(players(s), ["cat", "ben", "ann"]);
    assert.deepEqual(updates.map((u) => u.type), ["snapshot", "delta", "snapshot"]);
    assert.equal(requests.length, 2);
    assert.equal(requests[0].searchParams.get("last_event_id"), null);
    assert.equal(requests[1].searchParams.get("last_event_id"), null, "a resync asks for a new snapshot");
    assert.deepEqual(updates[2].entered.map((x) => x.player), ["cat"], "the resync reports what changed meanwhile");
    assert.equal(live.lastEventId, "2.4");
  } finally {
    live.close();
    fake.closeAllConnections?.();
    await within(new Promise((r) => fake.close(r)), 5000, "close the fake server");
  }
});

test("sse: a contest's public standings, live", async () => {
  const id = uid("ctf");
  const now = Date.now();
  await admin.request("putContest", {
    params: { contest: id },
    body: { title: "CTF", start: new Date(now - 3600e3).toISOString(), end: new Date(now + 3600e3).toISOString(), public: true },
  });
  await admin.request("putChallenge", { params: { contest: id, challenge: "web" }, body: { scoring: { value: 300 } } });
  const live = new PodiumClient({ baseUrl: server.url }).subscribe(id, { ...fast, collection: "contests", limit: 10 });
  try {
    assert.deepEqual(players(await live.ready), []);
    await admin.attempt(id, { team: "red", challenge: "web", correct: true });
    const s = await live.waitFor((x) => x.entries.length === 1);
    assert.equal(s.entries[0].player, "red");
    assert.deepEqual(s.entries[0].keys, [300]);
  } finally {
    live.close();
  }
});
