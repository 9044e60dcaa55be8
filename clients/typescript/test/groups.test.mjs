// The group calls against a real podium: a group set and a group board
// made through the API, joins and leaves moving the group board, the
// members view, caps and errors as PodiumError.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { PodiumClient, PodiumError } from "../dist/index.js";
import { Podium, uid } from "./harness.mjs";

let server, admin;

before(async () => {
  server = await new Podium().start();
  admin = new PodiumClient({ baseUrl: server.url, key: server.adminKey });
});

after(async () => {
  await server?.close();
});

// boards makes a points board, a group set over it (2 members a group, 1
// group a player) and a group board summing its groups' points.
async function boards() {
  const pts = uid("pts"), clans = uid("clans"), sum = uid("sum");
  await admin.putBoard(pts, { keys: [{ name: "points", order: "desc" }], public: true });
  const set = await admin.putBoard(clans, {
    keys: [{ name: "members", order: "desc" }], public: true, group_set: { max_members: 2, max_per_player: 1 },
  });
  assert.equal(set.board.group_set.max_members, 2);
  const gb = await admin.putBoard(sum, {
    keys: [{ name: "points", order: "desc" }], public: true, group_board: { set: clans, source: pts, rule: "sum" },
  });
  assert.deepEqual([gb.created, gb.board.group_board.rule], [true, "sum"]);
  return { pts, clans, sum };
}

const ranking = (page) => page.entries.map((e) => `${e.rank}:${e.player}:${e.keys.join(",")}`);

test("groups: join, the group board, the members view, members, a player's groups, leave", async () => {
  const { pts, clans, sum } = await boards();
  const g = admin.groups;
  for (const [group, player, n] of [["red", "amy", 1], ["red", "ben", 2], ["blue", "cid", 1]]) {
    const j = await g.join(clans, group, player);
    assert.deepEqual([j.set, j.group, j.player, j.joined, j.already, j.members], [clans, group, player, true, false, n]);
  }
  const again = await g.join(clans, "red", "amy");
  assert.deepEqual([again.already, again.n, again.members], [true, 0, 2]);
  // The set's own entries: its groups by members.
  assert.deepEqual(ranking(await admin.top(clans)), ["1:red:2", "2:blue:1"]);

  for (const [player, score] of [["amy", 5], ["ben", 7], ["cid", 9]]) await admin.submit(pts, { player, score });
  assert.deepEqual(ranking(await admin.top(sum)), ["1:red:12", "2:blue:9"]);
  // The members view: red's members on pts, with their ranks on all of pts.
  assert.deepEqual(ranking(await g.entries(pts, clans, "red")), ["2:ben:7", "3:amy:5"]);
  assert.deepEqual(await g.ofPlayer("ben", clans), ["red"]);
  assert.deepEqual(await g.ofPlayer("nobody", clans), []);

  const ms = await g.members(clans, "red", { limit: 10 });
  assert.equal(ms.total, 2);
  assert.deepEqual(ms.members.map((m) => m.player), ["amy", "ben"]);
  assert.ok(ms.members.every((m) => typeof m.joined_at === "string" && m.n > 0));
  assert.deepEqual((await g.members(clans, "red", { offset: 1, limit: 1 })).members.map((m) => m.player), ["ben"]);

  const left = await g.leave(clans, "red", "ben");
  assert.deepEqual([left.left, left.members], [true, 1]);
  assert.deepEqual(ranking(await admin.top(sum)), ["1:blue:9", "2:red:5"]);
  await assert.rejects(g.leave(clans, "red", "ben"), (e) => e instanceof PodiumError && e.status === 404 && e.code === "not_found");
});

test("group errors: caps are 409, bad input 400, unknown sets 404, scope 403", async () => {
  const { pts, clans, sum } = await boards();
  const g = admin.groups;
  await g.join(clans, "red", "amy");
  await g.join(clans, "red", "ben");
  await assert.rejects(g.join(clans, "red", "dan"), (e) =>
    e instanceof PodiumError && e.status === 409 && e.code === "conflict" && /full/.test(e.message));
  await assert.rejects(g.join(clans, "blue", "amy"), (e) => e instanceof PodiumError && e.status === 409 && e.code === "conflict");
  await assert.rejects(g.join(clans, "Not A Group", "amy"), (e) =>
    e instanceof PodiumError && e.status === 400 && e.code === "invalid_argument");
  await assert.rejects(g.members(clans, "red", { limit: 0 }), (e) => e instanceof PodiumError && e.status === 400 && e.code === "invalid_argument");
  await assert.rejects(g.join(uid("missing"), "red", "amy"), (e) => e instanceof PodiumError && e.status === 404 && e.code === "board_not_found");
  // A group board's entries are podium's: a score sent to it is refused.
  await assert.rejects(admin.submit(sum, { player: "red", score: 1 }), (e) => e instanceof PodiumError && e.status === 409);
  await assert.rejects(g.entries(pts, clans, "red", { period: "previous" }), (e) => e instanceof PodiumError && e.status === 400);

  // Memberships need submit on the set: a game server's key joins, a read key does not.
  const game = admin.withKey((await admin.createKey({ name: uid("game"), scopes: ["submit", "read"], boards: [clans] })).key);
  const j = await game.groups.join(clans, "blue", "cid");
  assert.equal(j.joined, true);
  const reader = admin.withKey((await admin.createKey({ name: uid("r"), scopes: ["read"], boards: [clans] })).key);
  await assert.rejects(reader.groups.join(clans, "blue", "eve"), (e) => e instanceof PodiumError && e.status === 403 && e.code === "forbidden");
  assert.deepEqual(await reader.groups.ofPlayer("cid", clans), ["blue"]);
});
