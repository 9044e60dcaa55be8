// Groups: the membership calls of docs/API.md "Groups and group boards",
// as the Go client's Groups (client/groups.go) has them. A group set and a
// group board are boards (putBoard with `group_set` or `group_board`), and
// read as boards (top, entries, subscribe).

import type { CallOptions, Caller, Ok, ReadOptions } from "./client.js";
import type { GroupChange, Page } from "./generated/schemas.js";

/** A page of a group's members, in the order they joined. */
export type GroupMembers = Ok<"groupMembers">;

/** The group calls, from {@link PodiumClient.groups}. */
export class Groups {
  /** @internal */
  constructor(private readonly call: Caller) {}

  /**
   * Makes player a member of group in set (submit scope on the set); the
   * group is made if it has none. Joining twice is not an error: `already`
   * is true and nothing changes. Past a cap (the group's `max_members`,
   * the player's `max_per_player`, the set's `max_groups`): 409 `conflict`.
   */
  async join(set: string, group: string, player: string, opts: CallOptions = {}): Promise<GroupChange> {
    return (await this.call("joinGroup", { params: { set, group, player }, kind: "idempotent", signal: opts.signal })).data;
  }

  /** Takes player out of group (404 `not_found` when not a member); a group left empty is gone. */
  async leave(set: string, group: string, player: string, opts: CallOptions = {}): Promise<GroupChange> {
    return (await this.call("leaveGroup", { params: { set, group, player }, kind: "idempotent", signal: opts.signal })).data;
  }

  /** Reads a page of a group's members (limit 1-1000), in join order. */
  async members(set: string, group: string, opts: CallOptions & { offset?: number; limit?: number } = {}): Promise<GroupMembers> {
    return (await this.call("groupMembers", {
      params: { set, group }, query: { offset: opts.offset, limit: opts.limit }, signal: opts.signal,
    })).data;
  }

  /** Lists the groups of set that player is in (at most the set's `max_per_player`). */
  async ofPlayer(player: string, set: string, opts: CallOptions = {}): Promise<string[]> {
    return (await this.call("playerGroups", { params: { player }, query: { set }, signal: opts.signal })).data.groups;
  }

  /**
   * Reads the entries of one group's members on board, each with its rank
   * on the whole board (the members view; read access to the set too).
   */
  async entries(board: string, set: string, group: string, opts: ReadOptions = {}): Promise<Page> {
    return (await this.call("entries", {
      params: { board },
      query: { period: opts.period, group: `${set}/${group}`, include_hidden: opts.includeHidden || undefined },
      signal: opts.signal,
    })).data;
  }
}
