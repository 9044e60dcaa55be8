// Leagues: the league calls of docs/API.md "Leagues", as the Go client's
// Leagues (client/leagues.go) has them, with their answers typed from the
// spec. A league is a board (putBoard with `league`); its scores go to the
// board as any score does (submit).

import type { CallOptions, Caller, Ok, PodiumClient } from "./client.js";
import { LiveCohort, type CohortOptions } from "./cohort.js";
import type { LeagueCohort } from "./generated/schemas.js";

/** Options of the reads of one period. */
export interface PeriodOptions extends CallOptions {
  /** `current` (default), `previous`, or a period id of the board's cadence (`2026-W49`). */
  period?: string;
}

/** A league in the list: `board`, `title`, `period` (the current one) and `league` (its definition). */
export type LeagueSummary = Ok<"listLeagues">["leagues"][number];
/** A league's definition, the current period's tiers and its latest 20 periods with their settlements. */
export type LeagueInfo = Ok<"getLeague">;
/** A player's tier and cohort in a period; `cohort` is null until the player has played it. */
export type LeagueStanding = Ok<"leagueStanding">;
/** The player's cohort ranked, with zones, and the player's id. */
export type PlayerCohort = Ok<"leagueMyCohort">;
/** A player's tier per period, newest first, with each settled period's rank and outcome. */
export type LeagueHistory = Ok<"leagueHistory">;
/** A page of a tier's cohorts with their member counts. */
export type TierCohorts = Ok<"leagueCohorts">;
/** The periods a settle run settled (`already`: settled before). */
export type LeagueSettleRun = Ok<"settleLeague">;

/**
 * The league calls, from {@link PodiumClient.leagues}. Every read answers
 * 404 `board_not_found` for an unknown board and 404 `not_found` for a
 * board that is not a league, an unknown tier or cohort.
 */
export class Leagues {
  /** @internal */
  constructor(private readonly client: PodiumClient, private readonly call: Caller) {}

  /** Lists the leagues the caller may read (at most 1000). */
  async list(opts: CallOptions = {}): Promise<LeagueSummary[]> {
    return (await this.call("listLeagues", { signal: opts.signal })).data.leagues;
  }

  /** Reads a league: its definition, the current period's tiers and its latest periods. */
  async get(board: string, opts: CallOptions = {}): Promise<LeagueInfo> {
    return (await this.call("getLeague", { params: { board }, signal: opts.signal })).data;
  }

  /**
   * Reads a player's tier and cohort in a period. A player who has not
   * played it shows the tier their first score will place them in.
   */
  async standing(board: string, player: string, opts: PeriodOptions = {}): Promise<LeagueStanding> {
    return (await this.call("leagueStanding", { params: { board, player }, query: { period: opts.period }, signal: opts.signal })).data;
  }

  /** Reads the player's cohort in a period, ranked with zones (404 `not_found` while the player has not played it). */
  async playerCohort(board: string, player: string, opts: PeriodOptions = {}): Promise<PlayerCohort> {
    return (await this.call("leagueMyCohort", { params: { board, player }, query: { period: opts.period }, signal: opts.signal })).data;
  }

  /** Reads a player's tier per period, newest first (at most 100). */
  async history(board: string, player: string, opts: CallOptions = {}): Promise<LeagueHistory> {
    return (await this.call("leagueHistory", { params: { board, player }, signal: opts.signal })).data;
  }

  /** Reads a page of a tier's cohorts (limit 1-1000, default 100) in a period. */
  async tierCohorts(board: string, tier: string, opts: PeriodOptions & { offset?: number; limit?: number } = {}): Promise<TierCohorts> {
    return (await this.call("leagueCohorts", {
      params: { board, tier }, query: { period: opts.period, offset: opts.offset, limit: opts.limit }, signal: opts.signal,
    })).data;
  }

  /** Reads one cohort of a tier in a period, ranked with zones. */
  async cohort(board: string, tier: string, cohort: number, opts: PeriodOptions = {}): Promise<LeagueCohort> {
    return (await this.call("leagueCohort", { params: { board, tier, cohort }, query: { period: opts.period }, signal: opts.signal })).data;
  }

  /**
   * Settles the league's ended periods that are not settled yet, oldest
   * first (admin on the board); `settled` is empty when none was due. A
   * settled period is never settled again, so a retry is harmless. 409
   * while another node holds the settlement lease.
   */
  async settle(board: string, opts: CallOptions = {}): Promise<LeagueSettleRun> {
    return (await this.call("settleLeague", { params: { board }, body: {}, kind: "idempotent", signal: opts.signal })).data;
  }

  /**
   * Follows the player's cohort in the current period live (Server-Sent
   * Events): a whole snapshot at each change. See {@link LiveCohort}.
   */
  follow(board: string, player: string, opts: CohortOptions = {}): LiveCohort {
    return new LiveCohort(this.client, board, player, opts);
  }
}
