// @podiumhq/client: a TypeScript/JavaScript client for podium's HTTP API
// (docs/API.md). No runtime dependencies; browsers and Node 18+.

export { PodiumClient, version, operationPath, encodeQuery } from "./client.js";
export type {
  ClientOptions, CallOptions, WriteOptions, WriteInfo, Submitted, Score, BatchScore, ReadOptions, View,
  WebSocketConstructor,
} from "./client.js";
export { PodiumError, PodiumNetworkError, isPodiumError } from "./errors.js";
export type { PodiumErrorCode } from "./errors.js";
export { defaultRetry, noRetry, newIdempotencyKey } from "./retry.js";
export type { RetryPolicy, RequestKind } from "./retry.js";
export { Leagues } from "./leagues.js";
export type {
  PeriodOptions, LeagueSummary, LeagueInfo, LeagueStanding, PlayerCohort, LeagueHistory, TierCohorts, LeagueSettleRun,
} from "./leagues.js";
export { LiveCohort } from "./cohort.js";
export type { CohortOptions, CohortSnapshot } from "./cohort.js";
export { Groups } from "./groups.js";
export type { GroupMembers } from "./groups.js";
export { LiveBoard } from "./live.js";
export type { SubscribeOptions, LiveStatus } from "./live.js";
export { applySnapshot, applyDelta, eventId, percentile } from "./window.js";
export type { LiveState, LiveEntry, LiveChange, LiveUpdate } from "./window.js";
export { gzipEvents, evidenceHashes } from "./evidence.js";
export type { BytesLike } from "./evidence.js";
export { operations } from "./generated/operations.js";
export type { Operations, OperationId } from "./generated/operations.js";
/** Every schema of podium's OpenAPI spec, as a type: `Schemas.Board`, `Schemas.SubmitResult`, ... */
export type * as Schemas from "./generated/schemas.js";
export type {
  Board, BoardPut, Entry, EntryAnswer, Page, SubmitResult, Held, Player, Session, SessionWithToken, Evidence,
  TournamentStatus, JoinResult, Contest, Challenge, Standing, KeyDef, StreamEntry, BoardSnapshot, BoardDelta,
  League, LeagueCohort, LeaguePeriod, GroupSet, GroupBoard, GroupChange,
} from "./generated/schemas.js";
