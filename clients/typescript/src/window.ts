// The live window: how a subscriber applies a stream's snapshots and deltas
// to the top N it holds (docs/CLIENT.md, "How it stays correct"). Pure: no
// I/O, so that it is tested on its own.

import type * as S from "./generated/schemas.js";

/** An entry of the live window (a stream entry without its delta-only prev_rank). */
export type LiveEntry = Omit<S.StreamEntry, "prev_rank">;

/** The live top N of a board, as the last snapshot and the deltas after it made it. */
export interface LiveState {
  board: string;
  title: string;
  keys: S.KeyDef[];
  period: string;
  next_reset: string | null;
  /** The board's last applied seq. */
  seq: number;
  snapshot_id: number;
  limit: number;
  /** Entries in the period, not only in the window. */
  total: number;
  /**
   * The top `limit` entries in rank order, each with its percentile (from
   * rank and total) and, on a board with rank_style shared, rank_shared.
   * Treat as read-only.
   */
  entries: LiveEntry[];
}

/** An entry new to the window or changed, with its rank before (null when new). */
export type LiveChange = LiveEntry & { prev_rank: number | null };

/** What an update changed. */
export interface LiveUpdate {
  type: "snapshot" | "delta";
  /** The first snapshot of this subscription. */
  initial: boolean;
  /** Every entry that is new or whose rank, keys, name, meta or results changed. */
  changed: LiveChange[];
  /** Entries new to the window. */
  entered: LiveEntry[];
  /** Entries whose rank changed. */
  moved: Array<{ player: string; name: string; rank: number; prev_rank: number }>;
  /** Players that left the window. */
  left: Array<{ player: string; prev_rank: number }>;
  /** On the snapshot after a period reset: the period that ended (nothing is reported as changed then). */
  previous_period: string | null;
}

function entry(e: S.StreamEntry): LiveEntry {
  const out: LiveEntry = { rank: e.rank, player: e.player, name: e.name, keys: e.keys || [], at: e.at, meta: e.meta };
  if (e.results) out.results = e.results;
  if (e.value !== undefined) out.value = e.value;
  if (e.hidden) out.hidden = e.hidden;
  if (e.rank_shared !== undefined) out.rank_shared = e.rank_shared;
  return out;
}

/**
 * The share of `total` ranked entries strictly behind the one at `rank`, in
 * percent rounded down to 2 decimals: the percentile REST reads carry
 * (docs/API.md). Stream events carry rank and total but no percentile,
 * which moves for every entry whenever the total does; the window sets it
 * on every entry after each event. 0 when rank is not in 1..total.
 */
export function percentile(rank: number, total: number): number {
  if (!(total >= 1) || !(rank >= 1) || rank > total) return 0;
  return Math.floor((10000 * (total - rank)) / total) / 100;
}

// withPercentiles sets each entry's percentile from the total, copying
// (not changing) an entry whose percentile moves: a state is never changed
// once handed over.
function withPercentiles(s: LiveState): LiveState {
  s.entries = s.entries.map((e) => {
    const p = percentile(e.rank, s.total);
    return e.percentile === p ? e : { ...e, percentile: p };
  });
  return s;
}

function sameEntry(a: LiveEntry, b: LiveEntry): boolean {
  if (a.name !== b.name || a.rank_shared !== b.rank_shared || a.keys.length !== b.keys.length) return false;
  for (let i = 0; i < a.keys.length; i++) if (a.keys[i] !== b.keys[i]) return false;
  return JSON.stringify(a.meta) === JSON.stringify(b.meta) && JSON.stringify(a.results) === JSON.stringify(b.results);
}

function emptyUpdate(type: "snapshot" | "delta", initial: boolean): LiveUpdate {
  return { type, initial, changed: [], entered: [], moved: [], left: [], previous_period: null };
}

/**
 * Applies a snapshot: it replaces the state. After a reconnect or a gap
 * (old is the state held before), what changed meanwhile is reported as a
 * delta would; after a period reset (previousPeriod, or a new period) it is
 * a new ranking and nothing is reported as changed.
 */
export function applySnapshot(old: LiveState | null, m: S.BoardSnapshot, previousPeriod = "", limit = 50): { state: LiveState; update: LiveUpdate } {
  const state: LiveState = {
    board: m.board, title: m.title, keys: m.keys || [], period: m.period, next_reset: m.next_reset ?? null,
    seq: m.seq, snapshot_id: m.snapshot_id, limit: m.limit || limit, total: m.total,
    entries: (m.entries || []).map(entry),
  };
  const update = emptyUpdate("snapshot", !old);
  if (previousPeriod || (old && old.period !== state.period)) {
    update.previous_period = previousPeriod || old!.period;
  } else if (old) {
    const before = new Map(old.entries.map((e) => [e.player, e]));
    for (const e of state.entries) {
      const o = before.get(e.player);
      before.delete(e.player);
      if (!o) {
        update.entered.push(e);
        update.changed.push({ ...e, prev_rank: null });
        continue;
      }
      if (o.rank !== e.rank || !sameEntry(o, e)) update.changed.push({ ...e, prev_rank: o.rank });
      if (o.rank !== e.rank) update.moved.push({ player: e.player, name: e.name, rank: e.rank, prev_rank: o.rank });
    }
    for (const o of before.values()) update.left.push({ player: o.player, prev_rank: o.rank });
  }
  return { state: withPercentiles(state), update };
}

/**
 * Applies a delta to the state it follows. It answers "gap" when the delta
 * does not follow the state (another snapshot_id, a prev_seq that is not
 * the state's seq) or does not fit it (a rank outside the window): the
 * subscriber then takes a fresh snapshot.
 */
export function applyDelta(old: LiveState, m: S.BoardDelta): { state: LiveState; update: LiveUpdate } | "gap" {
  if (m.snapshot_id !== old.snapshot_id || m.prev_seq !== old.seq) return "gap";
  // Drop the removed and the changed players, put each change at its rank,
  // and fill the ranks left free with the rest in their old order (their
  // keys did not change, so neither did their order).
  const gone = new Set<string>();
  for (const r of m.removed || []) gone.add(r.player);
  for (const c of m.changes || []) gone.add(c.player);
  const rest = old.entries.filter((e) => !gone.has(e.player));
  const n = rest.length + (m.changes || []).length;
  if (n > old.limit) return "gap";
  const entries: Array<LiveEntry | undefined> = new Array(n);
  const update = emptyUpdate("delta", false);
  const before = new Map(old.entries.map((e) => [e.player, e]));
  for (const c of m.changes || []) {
    if (c.rank < 1 || c.rank > n || entries[c.rank - 1]) return "gap";
    const e = entry(c);
    entries[c.rank - 1] = e;
    const prev = before.get(c.player);
    const prevRank = c.prev_rank ?? (prev ? prev.rank : null);
    update.changed.push({ ...e, prev_rank: prevRank });
    if (prevRank === null) update.entered.push(e);
    else if (prevRank !== e.rank) update.moved.push({ player: e.player, name: e.name, rank: e.rank, prev_rank: prevRank });
  }
  let j = 0;
  for (let i = 0; i < n; i++) {
    if (entries[i]) continue;
    const e = rest[j++]!;
    if (e.rank !== i + 1) {
      update.moved.push({ player: e.player, name: e.name, rank: i + 1, prev_rank: e.rank });
      entries[i] = { ...e, rank: i + 1 };
    } else {
      entries[i] = e;
    }
  }
  update.left = (m.removed || []).map((r) => ({ player: r.player, prev_rank: r.prev_rank }));
  const state: LiveState = { ...old, seq: m.seq, snapshot_id: m.snapshot_id, total: m.total, entries: entries as LiveEntry[] };
  if (m.period) state.period = m.period;
  return { state: withPercentiles(state), update };
}

/** The id of the last event a state applied, `<snapshot_id>.<seq>`: what a resume sends. */
export function eventId(s: Pick<LiveState, "snapshot_id" | "seq">): string {
  return `${s.snapshot_id}.${s.seq}`;
}
