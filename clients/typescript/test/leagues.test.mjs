// The league calls against a real podium: a league board made through
// the API, placement by first scores, standing, cohorts, history, settle,
// the live cohort, and errors as PodiumError.
//
// A league's periods are the board's resets, and a test cannot move the
// server's clock. So the league resets monthly in whichever of three
// fixed-offset zones puts now farthest from a month's end (at least 12
// hours away): no period ends while the test runs, and every read of the
// current period is of the period the scores went to. Settlement is
// therefore tested as the run that finds nothing due; the settlement of an
// ended period is covered by the Go tests with a fake clock
// (client/leagues_test.go, http/leagues_test.go).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { PodiumClient, PodiumError, LiveCohort } from "../dist/index.js";
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

// farFromMonthEnd is the zone (of UTC, UTC+14, UTC-12) in which now is
// farthest from the start or end of a month.
function farFromMonthEnd(now = Date.now()) {
  let best = { tz: "UTC", margin: -1 };
  for (const [tz, hours] of [["UTC", 0], ["Etc/GMT-14", 14], ["Etc/GMT+12", -12]]) {
    const local = new Date(now + hours * 3600e3);
    const start = Date.UTC(local.getUTCFullYear(), local.getUTCMonth(), 1);
    const end = Date.UTC(local.getUTCFullYear(), local.getUTCMonth() + 1, 1);
    const margin = Math.min(local.getTime() - start, end - local.getTime());
    if (margin > best.margin) best = { tz, margin };
  }
  return best.tz;
}

async function league(spec = {}) {
  const id = uid("lg");
  const { board, created } = await admin.putBoard(id, {
    title: "XP league", keys: [{ name: "xp", order: "desc" }], mode: "sum", public: true,
    reset: { every: "month", tz: farFromMonthEnd() },
    league: { cohort_size: 2, tiers: [{ name: "bronze", promote: 1 }, { name: "silver", relegate: 1 }] },
    ...spec,
  });
  assert.equal(created, true);
  assert.equal(board.league.cohort_size, 2);
  return id;
}

// play submits the scores in order (cohorts fill in the order of first
// scores) and returns the period they went to.
async function play(id, scores) {
  let period = "";
  for (const [player, score] of scores) {
    const r = await admin.submit(id, { player, score });
    assert.equal(r.held, false);
    period = r.result.period;
  }
  return period;
}

test("a league: placement, standing, cohorts, history and a settle with nothing due", async () => {
  const id = await league();
  const lg = admin.leagues;

  // Before a score: the tier the first score will place amy in, no cohort.
  const before = await lg.standing(id, "amy");
  assert.deepEqual([before.placed, before.tier, before.tier_index, before.cohort], [false, "bronze", 0, null]);
  await assert.rejects(lg.playerCohort(id, "amy"), (e) => e instanceof PodiumError && e.status === 404 && e.code === "not_found");

  const period = await play(id, [["amy", 50], ["ben", 30], ["cid", 10]]);

  const listed = (await lg.list()).find((l) => l.board === id);
  assert.ok(listed, "the league is listed");
  assert.equal(listed.title, "XP league");
  assert.equal(listed.period, period);
  assert.deepEqual(listed.league.tiers.map((t) => t.name), ["bronze", "silver"]);

  const info = await lg.get(id);
  assert.equal(info.period, period);
  assert.ok(Date.parse(info.period_end) > Date.now(), "the period has not ended");
  assert.deepEqual(info.tiers.map((t) => [t.tier, t.members, t.cohorts]), [["bronze", 3, 2], ["silver", 0, 0]]);
  assert.deepEqual(info.periods.map((p) => [p.period, p.settlement]), [[period, null]]);

  const cid = await lg.standing(id, "cid", { period });
  assert.deepEqual([cid.placed, cid.tier, cid.tier_index, cid.cohort, cid.period], [true, "bronze", 0, 1, period]);

  // amy and ben fill cohort 0 (of 2), cid opens cohort 1.
  const mine = await lg.playerCohort(id, "ben");
  assert.deepEqual([mine.player, mine.tier, mine.cohort, mine.size], ["ben", "bronze", 0, 2]);
  assert.deepEqual(mine.entries.map((e) => [e.rank, e.player, e.zone, e.keys, e.board_rank]),
    [[1, "amy", "promotion", [50], 1], [2, "ben", "safe", [30], 2]]);

  const first = await lg.tierCohorts(id, "bronze", { limit: 1 });
  assert.equal(first.total, 2);
  assert.deepEqual(first.cohorts, [{ cohort: 0, members: 2 }]);
  const second = await lg.tierCohorts(id, "bronze", { offset: 1, limit: 1, period });
  assert.deepEqual(second.cohorts, [{ cohort: 1, members: 1 }]);
  assert.equal((await lg.tierCohorts(id, "silver")).total, 0);

  const one = await lg.cohort(id, "bronze", 1, { period });
  assert.equal(one.player, undefined, "a tier's cohort names no player");
  assert.deepEqual(one.entries.map((e) => [e.player, e.zone, e.board_rank]), [["cid", "promotion", 3]]);

  const h = await lg.history(id, "amy");
  assert.deepEqual(h.periods, [{ period, tier: "bronze", cohort: 0, settled: false }]);

  // The only period is running: nothing is due, and a run settles nothing.
  const run = await lg.settle(id);
  assert.deepEqual(run, { board: id, settled: [] });
  assert.deepEqual((await lg.get(id)).periods.map((p) => p.settlement), [null]);
});

test("league errors are PodiumError with the API's status and code", async () => {
  const id = await league();
  await play(id, [["amy", 1]]);
  const lg = admin.leagues;
  await assert.rejects(lg.get(uid("missing")), (e) => e instanceof PodiumError && e.status === 404 && e.code === "board_not_found");
  const plain = uid("b");
  await admin.putBoard(plain, { keys: [{ name: "xp", order: "desc" }], public: true });
  await assert.rejects(lg.get(plain), (e) => e instanceof PodiumError && e.status === 404 && e.code === "not_found");
  await assert.rejects(lg.tierCohorts(id, "gold"), (e) => e instanceof PodiumError && e.code === "not_found");
  await assert.rejects(lg.cohort(id, "bronze", 7), (e) => e instanceof PodiumError && e.code === "not_found");
  await assert.rejects(lg.tierCohorts(id, "bronze", { limit: 0 }), (e) =>
    e instanceof PodiumError && e.status === 400 && e.code === "invalid_argument");
  await assert.rejects(lg.standing(id, "amy", { period: "not-a-period" }), (e) =>
    e instanceof PodiumError && e.status === 400 && e.code === "invalid_argument");
  // A league must reset: the PUT is refused, and nothing is made.
  const never = uid("lg");
  await assert.rejects(admin.putBoard(never, {
    keys: [{ name: "xp", order: "desc" }], league: { tiers: [{ name: "bronze" }] },
  }), (e) => e instanceof PodiumError && e.status === 400 && e.code === "invalid_argument" && /reset/.test(e.message));
  await assert.rejects(admin.getBoard(never), (e) => e instanceof PodiumError && e.code === "board_not_found");

  // settle is admin: a read key is refused, through a withKey copy that
  // must send its own key, not the admin's.
  const reader = await admin.createKey({ name: uid("r"), scopes: ["read"], boards: [id] });
  await assert.rejects(admin.withKey(reader.key).leagues.settle(id), (e) =>
    e instanceof PodiumError && e.status === 403 && e.code === "forbidden");
  assert.equal((await admin.withKey(reader.key).leagues.standing(id, "amy")).placed, true);
});

test("follow: the player's cohort live, a snapshot at each change", async () => {
  const id = await league();
  await play(id, [["amy", 50], ["ben", 30]]);
  const seen = [];
  const anon = new PodiumClient({ baseUrl: server.url }); // a public league: no key needed
  const live = anon.leagues.follow(id, "ben", { onUpdate: (c) => seen.push(c.entries.map((e) => e.player).join(",")) });
  assert.ok(live instanceof LiveCohort);
  try {
    const first = await live.ready;
    assert.deepEqual([first.type, first.player, first.tier, first.cohort, first.total], ["snapshot", "ben", "bronze", 0, 2]);
    assert.deepEqual(first.entries.map((e) => [e.player, e.zone]), [["amy", "promotion"], ["ben", "safe"]]);
    await admin.submit(id, { player: "ben", score: 30 }); // a sum board: ben has 60, ahead of amy
    const after = await live.waitFor((c) => c.entries[0].player === "ben");
    assert.deepEqual(after.entries.map((e) => [e.player, e.keys, e.zone]), [["ben", [60], "promotion"], ["amy", [50], "safe"]]);
    assert.equal(live.cohort, after);
    assert.equal(seen[0], "amy,ben");
    assert.equal(seen.at(-1), "ben,amy");
    assert.equal(live.error, null);
  } finally {
    live.close();
  }
  await assert.rejects(live.waitFor(() => true), /closed/);
});

test("follow: a cut connection reconnects and starts again with a snapshot of the cohort as it is now", async () => {
  const id = await league();
  await play(id, [["amy", 50], ["ben", 30]]);
  const viaProxy = new PodiumClient({ baseUrl: proxy.url });
  const live = viaProxy.leagues.follow(id, "ben", { minDelayMs: 20, maxDelayMs: 200 });
  try {
    await live.ready;
    const before = proxy.connections;
    proxy.hold(); // the reconnect waits until the change below is committed
    proxy.cut();
    await admin.submit(id, { player: "ben", score: 30 });
    proxy.release();
    // The stream has no ids: nothing is resumed, the new connection's
    // snapshot is the whole cohort, change included.
    const now = await live.waitFor((c) => c.entries[0].player === "ben");
    assert.deepEqual(now.entries.map((e) => e.keys), [[60], [50]]);
    assert.ok(proxy.connections > before, "it reconnected");
    assert.equal(live.error, null);
  } finally {
    live.close();
  }
});

test("follow: a player who has not played is not_found, and the follower stops", async () => {
  const id = await league();
  await play(id, [["amy", 50]]);
  const errors = [];
  const live = admin.leagues.follow(id, "zed", { onError: (e) => errors.push(e.code) });
  await assert.rejects(live.ready, (e) => e instanceof PodiumError && e.status === 404 && e.code === "not_found");
  assert.equal(live.error.code, "not_found");
  assert.deepEqual(errors, ["not_found"]);
  const gone = admin.leagues.follow(uid("missing"), "amy");
  await assert.rejects(gone.ready, (e) => e instanceof PodiumError && e.code === "board_not_found");
});
