// The client's calls against a real podium: writes with retries and
// idempotency, reads, sessions, evidence, tournaments, contests, and errors
// as PodiumError with the API's code.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { PodiumClient, PodiumError, PodiumNetworkError, gzipEvents, evidenceHashes } from "../dist/index.js";
import { Podium, Proxy, uid } from "./harness.mjs";

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

async function board(spec = {}) {
  const id = uid("b");
  const { created } = await admin.putBoard(id, { title: id, keys: [{ name: "time_ms", order: "asc" }], public: true, ...spec });
  assert.equal(created, true);
  return id;
}

test("submit carries an Idempotency-Key; a lost answer is retried with it and applied once", async () => {
  const b = await board({ mode: "sum", keys: [{ name: "points", order: "desc" }] });
  const viaProxy = new PodiumClient({ baseUrl: proxy.url, key: server.adminKey, retry: { minDelayMs: 1, maxDelayMs: 5 } });
  proxy.dropAnswers(1); // the server stores the first attempt; its answer never arrives
  const r = await viaProxy.submit(b, { player: "alice", score: 5 });
  assert.equal(r.attempts, 2);
  assert.equal(r.replayed, true, "the retry is answered from the first attempt");
  assert.match(r.idempotencyKey, /^[0-9a-f]{32}$/);
  assert.equal(r.held, false);
  assert.deepEqual(r.result.entry.keys, [5]);
  // A sum board adds every applied submission: 5, not 10.
  const e = await admin.entry(b, "alice");
  assert.deepEqual(e.keys, [5]);

  // The same key again, later (a caller that kept it): answered, not applied.
  const again = await admin.submit(b, { player: "alice", score: 5 }, { idempotencyKey: r.idempotencyKey });
  assert.equal(again.replayed, true);
  assert.equal(again.held, false);
  assert.equal(again.result.seq, r.result.seq);
  assert.deepEqual((await admin.entry(b, "alice")).keys, [5]);

  // The same key with another body is a conflict.
  await assert.rejects(admin.submit(b, { player: "alice", score: 6 }, { idempotencyKey: r.idempotencyKey }),
    (e) => e instanceof PodiumError && e.status === 409 && e.code === "conflict" && e.isConflict);
});

test("a write that is not safe to repeat is not retried after a lost answer", async () => {
  const viaProxy = new PodiumClient({ baseUrl: proxy.url, key: server.adminKey, retry: { minDelayMs: 1, maxDelayMs: 5 } });
  const before = (await admin.request("listKeys")).keys.length;
  proxy.dropAnswers(1);
  await assert.rejects(viaProxy.createKey({ name: uid("k"), scopes: ["read"] }), PodiumNetworkError);
  // The server made the key once; the client did not make a second one.
  assert.equal((await admin.request("listKeys")).keys.length, before + 1);
});

test("a batch is one request with one key; a refused item does not stop the others", async () => {
  const b = await board();
  const items = [
    { board: b, player: "p1", score: 3000 },
    { board: b, player: "p2", keys: [1, 2] },
    { board: b, player: "p3", score: 1000 },
  ];
  const r = await admin.submitBatch(items);
  assert.equal(r.results.length, 3);
  assert.equal(r.results[1].error.code, "invalid_argument");
  assert.equal(r.results[2].entry.rank, 1);
  const again = await admin.submitBatch(items, { idempotencyKey: r.idempotencyKey });
  assert.equal(again.replayed, true);
  assert.deepEqual(again.results, r.results);
  assert.equal((await admin.top(b)).total, 2);
});

test("reads: top, entries, entry, rank, around, periods, history, the board list", async () => {
  const b = await board();
  for (const [p, v] of [["ann", 500], ["ben", 400], ["cat", 300], ["dan", 200], ["eve", 100]]) {
    await admin.submit(b, { player: p, keys: [v], meta: { run: p } });
  }
  const top = await admin.top(b, { limit: 3 });
  assert.equal(top.total, 5);
  assert.deepEqual(top.entries.map((e) => e.player), ["eve", "dan", "cat"]);
  assert.deepEqual(top.entries[0].meta, { run: "eve" });
  const page2 = await admin.top(b, { offset: 3, limit: 3 });
  assert.deepEqual(page2.entries.map((e) => [e.rank, e.player]), [[4, "ben"], [5, "ann"]]);
  const some = await admin.entries(b, ["ann", "cat", "nobody"]);
  assert.deepEqual(some.entries.map((e) => [e.player, e.rank]), [["cat", 3], ["ann", 5]]);
  const e = await admin.entry(b, "dan");
  assert.equal(e.rank, 2);
  assert.equal(e.entry.player, "dan");
  assert.equal(await admin.rank(b, "ben"), 4);
  assert.equal(await admin.rank(b, "nobody"), null);
  const around = await admin.around(b, "cat", { radius: 1 });
  assert.deepEqual(around.entries.map((x) => x.player), ["dan", "cat", "ben"]);
  const periods = await admin.periods(b);
  assert.equal(periods.current, "all");
  const h = await admin.history(b, "ann", { limit: 5 });
  assert.equal(h.items.length, 1);
  assert.deepEqual(h.items[0].keys, [500]);
  const anon = new PodiumClient({ baseUrl: server.url });
  const boards = await anon.listBoards();
  assert.ok(boards.some((x) => x.id === b), "a public board is listed without a key");
  const page = await anon.boardsPage({ limit: 1 });
  assert.equal(page.boards.length, 1);
  assert.equal(typeof page.next_cursor, "string");
  const player = await admin.putPlayer("ann", { name: "Ann A." });
  assert.equal(player.name, "Ann A.");
  assert.equal((await admin.getPlayer("ann")).name, "Ann A.");
  assert.equal((await admin.top(b, { limit: 5 })).entries[4].name, "Ann A.");
});

test("errors are PodiumError with the API's status and code", async () => {
  const b = await board();
  await assert.rejects(admin.getBoard(uid("missing")), (e) =>
    e instanceof PodiumError && e.status === 404 && e.code === "board_not_found" && e.isNotFound);
  await assert.rejects(admin.entry(b, "nobody"), (e) => e instanceof PodiumError && e.code === "entry_not_found");
  await assert.rejects(admin.submit(b, { player: "x", keys: [1, 2] }), (e) =>
    e instanceof PodiumError && e.status === 400 && e.code === "invalid_argument" && /key/.test(e.message));
  await assert.rejects(new PodiumClient({ baseUrl: server.url, key: "pdm_nope" }).getBoard(b), (e) =>
    e instanceof PodiumError && e.status === 401 && e.code === "unauthenticated");
  const reader = await admin.createKey({ name: uid("r"), scopes: ["read"] });
  await assert.rejects(admin.withKey(reader.key).submit(b, { player: "x", score: 1 }), (e) =>
    e instanceof PodiumError && e.status === 403 && e.code === "forbidden");
  const q = await board({ quota: { max: 1 } });
  await admin.submit(q, { player: "q", score: 10 });
  await assert.rejects(admin.submit(q, { player: "q", score: 9 }), (e) =>
    e instanceof PodiumError && e.status === 429 && e.code === "quota_exceeded" && typeof e.resetsAt === "string" &&
    e.retryAfterMs > 0);
});

test("player sessions: issue, submit as the player, refresh (the client adopts the token), revoke", async () => {
  const b = await board({ player_submit: true });
  const login = admin.withKey((await admin.createKey({ name: uid("login"), scopes: ["sessions"] })).key);
  const s = await login.issueSession("alice", { device: "browser" });
  assert.match(s.token, /^pds_/);
  assert.equal(s.player, "alice");

  // What a browser game does with the token its login service handed it.
  const game = new PodiumClient({ baseUrl: server.url, key: s.token });
  const r = await game.submit(b, { player: "alice", score: 41234 });
  assert.equal(r.held, false);
  assert.equal(r.result.entry.rank, 1);
  await assert.rejects(game.submit(b, { player: "bob", score: 1 }), (e) => e instanceof PodiumError && e.code === "forbidden");
  assert.equal((await game.top(b)).entries[0].player, "alice");

  const old = game.key;
  const fresh = await game.refreshSession("alice", s.id);
  assert.notEqual(fresh.token, old);
  assert.equal(game.key, fresh.token, "a session that refreshes itself adopts the new token");
  await assert.rejects(game.withKey(old).top(b), (e) => e instanceof PodiumError && e.code === "unauthenticated");
  assert.equal((await game.submit(b, { player: "alice", score: 40000 })).held, false);

  const list = await login.listSessions("alice");
  assert.deepEqual(list.map((x) => x.id), [s.id]);
  assert.equal(await game.revokeSessions("alice"), 1);
  await assert.rejects(game.top(b), (e) => e instanceof PodiumError && e.status === 401);
});

test("evidence: upload with computed hashes, re-upload is reused, download", async () => {
  const b = await board();
  const r = await admin.submit(b, { player: "alice", score: 41234 });
  const gz = await gzipEvents([{ t: 0, op: "start", seed: 42 }, { t: 41234, op: "win" }]);
  const ev = await admin.uploadEvidence(b, "alice", gz, { seq: r.result.seq });
  const { content, compressed } = await evidenceHashes(gz);
  assert.equal(ev.content_sha256, content);
  assert.equal(ev.compressed_sha256, compressed);
  assert.equal(ev.events, 2);
  assert.equal(ev.reused, false);
  assert.equal((await admin.uploadEvidence(b, "alice", gz, { seq: r.result.seq })).reused, true);
  const back = await admin.downloadEvidence(b, "alice", { seq: r.result.seq });
  assert.deepEqual(Buffer.from(back), Buffer.from(gz));
  const other = await gzipEvents([{ t: 1 }]);
  await assert.rejects(admin.uploadEvidence(b, "alice", other, { seq: r.result.seq }), (e) => e instanceof PodiumError && e.code === "conflict");
});

test("tournaments: status, join, submit, settle, payouts", async () => {
  const id = uid("cup");
  const now = Date.now();
  await admin.putBoard(id, {
    title: "Cup", public: true, keys: [{ name: "time_ms", order: "asc" }],
    tournament: { start: new Date(now - 3600e3).toISOString(), end: new Date(now + 3600e3).toISOString(), join_required: true, weight: 100 },
  });
  const game = admin.withKey((await admin.createKey({ name: uid("g"), scopes: ["submit", "read"] })).key);
  await assert.rejects(game.submit(id, { player: "amy", score: 1000 }), (e) => e instanceof PodiumError && e.code === "not_joined");
  const j = await game.join(id, "amy");
  assert.equal(j.joined, true);
  assert.equal(j.already, false);
  assert.equal((await game.join(id, "amy")).already, true);
  await game.join(id, "bob");
  await game.submit(id, { player: "amy", score: 1000 });
  await game.submit(id, { player: "bob", score: 2000 });
  const st = await game.getTournament(id);
  assert.equal(st.state, "open");
  assert.equal(st.participants, 2);
  assert.equal((await game.participants(id)).total, 2);
  assert.ok((await game.listTournaments()).some((t) => t.board === id));
  await admin.settle(id);
  const pay = await game.payouts(id);
  assert.deepEqual(pay.payouts.map((p) => [p.player, p.rank, p.points]), [["amy", 1, 100], ["bob", 2, 50]]);
});

test("contests: a judge reports attempts with an Idempotency-Key; a team reads its standing", async () => {
  const id = uid("ctf");
  const now = Date.now();
  await admin.request("putContest", {
    params: { contest: id },
    body: { title: "CTF", start: new Date(now - 3600e3).toISOString(), end: new Date(now + 3600e3).toISOString(), public: true },
  });
  await admin.request("putChallenge", { params: { contest: id, challenge: "web" }, body: { scoring: { function: "static", value: 500 } } });
  const judge = admin.withKey((await admin.createKey({ name: uid("judge"), scopes: ["submit", "read"], boards: [id] })).key);
  const wrong = await judge.attempt(id, { team: "red", challenge: "web", correct: false });
  assert.equal(wrong.attempt.result, "wrong");
  assert.equal(wrong.standing, null);
  const ok = await judge.attempt(id, { team: "red", challenge: "web", correct: true });
  assert.equal(ok.attempt.result, "solved");
  assert.equal(ok.standing.score, 500);
  const again = await judge.attempt(id, { team: "red", challenge: "web", correct: true }, { idempotencyKey: ok.idempotencyKey });
  assert.equal(again.replayed, true);
  assert.equal(again.attempt.id, ok.attempt.id);
  await assert.rejects(judge.attempt(id, { team: "red", challenge: "web", correct: true }), (e) => e instanceof PodiumError && e.code === "conflict");
  const anon = new PodiumClient({ baseUrl: server.url });
  const st = await anon.standings(id);
  assert.deepEqual(st.standings.map((s) => [s.team, s.score]), [["red", 500]]);
  const team = await judge.team(id, "red");
  assert.equal(team.standing.rank, 1);
  const ch = await anon.challenges(id);
  assert.equal(ch.challenges[0].solves, 1);
  assert.equal((await anon.getContest(id)).state, "running");
  assert.ok((await anon.listContests()).some((c) => c.id === id));
});
