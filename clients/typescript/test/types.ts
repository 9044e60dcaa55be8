// Compiled (not run) by `npm run check:types`: the README's examples and the
// public types, so that a change that breaks a caller's code fails CI.
import {
  PodiumClient, PodiumError, newIdempotencyKey, type LiveState, type LiveUpdate, type Schemas, type Operations,
} from "../src/index.js";

declare function showRank(rank: number, improved: boolean): void;
declare function drawTop(entries: LiveState["entries"], moved: LiveUpdate["moved"]): void;
declare function setBadge(state: string): void;

export async function browserGame(token: string) {
  const podium = new PodiumClient({ baseUrl: "https://podium.example", key: token });
  const r = await podium.submit("daily", { player: "alice", score: 41234 });
  if (!r.held) showRank(r.result.entry.rank, r.result.improved);
  else r.pending.evidence_url.startsWith("/");
  const live = podium.subscribe("daily", {
    limit: 10,
    onUpdate: (state, update) => drawTop(state.entries, update.moved),
    onStatus: (s) => setBadge(s.state),
  });
  const first: LiveState = await live.ready;
  live.close();
  return first.snapshot_id + first.seq;
}

export async function gameServer(board: string, player: string, keys: number[]) {
  const podium = new PodiumClient({ baseUrl: "http://localhost:8080", key: "pdm_x" });
  const idempotencyKey = await newIdempotencyKey();
  try {
    const r = await podium.submit(board, { player, keys, meta: { match: "m-81" } }, { idempotencyKey });
    if (r.held) return { pending: r.pending.id };
    const near = await podium.around(board, player, { radius: 2 });
    return { rank: r.result.entry.rank, near: near.entries, replayed: r.replayed };
  } catch (e) {
    if (e instanceof PodiumError && e.code === "tournament_closed") return { closed: true };
    throw e;
  }
}

export async function typed(podium: PodiumClient) {
  const b: Schemas.Board = await podium.getBoard("ms:expert");
  const page: Operations["entries"]["responses"][200] = await podium.request("entries", { params: { board: b.id }, query: { limit: 5 } });
  // @ts-expect-error: an unknown query parameter is a type error (the spec's parameters only)
  await podium.request("entries", { params: { board: b.id }, query: { limt: 5 } });
  // @ts-expect-error: a path parameter is required
  await podium.request("entry", { params: { board: b.id } });
  // @ts-expect-error: a submission needs keys or score
  await podium.submit("b", { player: "p" });
  // @ts-expect-error: and a player
  await podium.submit("b", { keys: [1] });
  // @ts-expect-error: keys are numbers
  await podium.submit("b", { player: "p", keys: ["1"] });
  const s = await podium.issueSession("alice", { device: "phone", ttl_seconds: 3600 });
  const t: string = s.token;
  const st = await podium.getTournament("cup");
  const state: "upcoming" | "open" | "ended" | "settled" = st.state;
  const a = await podium.attempt("ctf", { team: "red", challenge: "web", correct: true });
  const solved: string = a.attempt.result;
  return [page.total, t, state, solved];
}

export async function leaguesAndGroups(podium: PodiumClient) {
  const st = await podium.leagues.standing("xp", "amy", { period: "previous" });
  const cohort: number | null = st.cohort;
  const h = await podium.leagues.history("xp", "amy");
  const outcome: "promoted" | "stayed" | "relegated" | "absent" | undefined = h.periods[0]?.outcome;
  const c = await podium.leagues.cohort("xp", "bronze", 0);
  const zone: "promotion" | "safe" | "relegation" | undefined = c.entries[0]?.zone;
  // @ts-expect-error: a cohort is a number
  await podium.leagues.cohort("xp", "bronze", "0");
  const live = podium.leagues.follow("xp", "amy", { onUpdate: (s) => s.entries.length + s.total });
  const first = await live.ready;
  live.close();
  const j = await podium.groups.join("clans", "red", "amy");
  const members: number = j.members;
  const groups: string[] = await podium.groups.ofPlayer("amy", "clans");
  return [cohort, outcome, zone, first.player, members, groups];
}
