// The shapes of podium's answers (docs/API.md), read from JsonValue by hand.
// Each type keeps the object it was read from in Raw, so that a field this
// client does not name yet is still there to read.

using System;
using System.Collections.Generic;

namespace Podium
{
    /// <summary>One ranking key of a board: a named value compared in Order ("asc" or "desc").</summary>
    public sealed class RankKey
    {
        /// <summary>The key's name.</summary>
        public string Name;
        /// <summary>"asc" or "desc".</summary>
        public string Order;
        /// <summary>What pages call it (may be null).</summary>
        public string Label;
        /// <summary>integer, duration_ms, seconds, points, timestamp (may be null).</summary>
        public string Format;

        /// <summary>Reads a key.</summary>
        public static RankKey From(JsonValue v)
        {
            return new RankKey { Name = v["name"].AsString(), Order = v["order"].AsString(), Label = v["label"].AsString(), Format = v["format"].AsString() };
        }

        internal static RankKey[] List(JsonValue v)
        {
            var a = new RankKey[v.Items.Count];
            for (int i = 0; i < a.Length; i++) a[i] = From(v.Items[i]);
            return a;
        }

        /// <summary>The key as JSON, for a board definition.</summary>
        public JsonValue ToJson()
        {
            return JsonValue.Object().Set("name", JsonValue.From(Name)).Set("order", JsonValue.From(Order ?? "asc"))
                .Set("label", Label == null ? null : JsonValue.From(Label)).Set("format", Format == null ? null : JsonValue.From(Format));
        }
    }

    /// <summary>A board as the server answers it (GET /v1/boards/{board}).</summary>
    public sealed class Board
    {
        /// <summary>The board id.</summary>
        public string Id;
        /// <summary>The board's title.</summary>
        public string Title;
        /// <summary>The ranking keys, in order of precedence.</summary>
        public RankKey[] Keys;
        /// <summary>best, latest, sum, best_k or aggregate.</summary>
        public string Mode;
        /// <summary>Whether anyone may read it.</summary>
        public bool Public;
        /// <summary>Whether player sessions may submit to it.</summary>
        public bool PlayerSubmit;
        /// <summary>The current period's id ("all" on a board that never resets).</summary>
        public string Period;
        /// <summary>When the current period ends (null: never).</summary>
        public DateTime? NextReset;
        /// <summary>The board's last applied seq.</summary>
        public long Seq;
        /// <summary>The whole answer.</summary>
        public JsonValue Raw;

        /// <summary>Reads a board.</summary>
        public static Board From(JsonValue v)
        {
            return new Board
            {
                Id = v["id"].AsString(), Title = v["title"].AsString(), Keys = RankKey.List(v["keys"]), Mode = v["mode"].AsString(),
                Public = v["public"].AsBool(), PlayerSubmit = v["player_submit"].AsBool(), Period = v["period"].AsString(),
                NextReset = v["next_reset"].AsTime(), Seq = v["seq"].AsLong(), Raw = v,
            };
        }
    }

    /// <summary>A ranked entry.</summary>
    public sealed class Entry
    {
        /// <summary>The public rank, from 1.</summary>
        public int Rank;
        /// <summary>The player id.</summary>
        public string Player;
        /// <summary>The player's name (its id until it has one).</summary>
        public string Name;
        /// <summary>The entry's values, one per ranking key.</summary>
        public long[] Keys;
        /// <summary>When the entry was reached.</summary>
        public DateTime? At;
        /// <summary>The meta object stored with the entry.</summary>
        public JsonValue Meta = JsonValue.Null;
        /// <summary>Set on admin reads with include_hidden for a hidden player.</summary>
        public bool Hidden;
        /// <summary>REST reads: the share of the ranked entries strictly behind, in percent, rounded down to 2 decimals (0 in stream entries).</summary>
        public double Percentile;
        /// <summary>REST reads of a board with rank_style shared: the standard competition rank (1, 2, 2, 4); else 0.</summary>
        public int RankShared;
        /// <summary>The entry as sent.</summary>
        public JsonValue Raw = JsonValue.Null;

        /// <summary>Reads an entry.</summary>
        public static Entry From(JsonValue v)
        {
            return new Entry
            {
                Rank = v["rank"].AsInt(), Player = v["player"].AsString(), Name = v["name"].AsString(),
                Keys = v["keys"].AsLongArray() ?? new long[0], At = v["at"].AsTime(), Meta = v["meta"], Hidden = v["hidden"].AsBool(),
                Percentile = v["percentile"].AsDouble(), RankShared = v["rank_shared"].AsInt(), Raw = v,
            };
        }

        internal static List<Entry> List(JsonValue v)
        {
            var l = new List<Entry>(v.Items.Count);
            foreach (var e in v.Items) l.Add(From(e));
            return l;
        }

        internal Entry WithRank(int rank)
        {
            var e = (Entry)MemberwiseClone();
            e.Rank = rank;
            return e;
        }

        /// <summary>Whether two entries show the same (name, keys, meta), rank aside.</summary>
        internal bool SameAs(Entry o)
        {
            if (Name != o.Name || Keys.Length != o.Keys.Length) return false;
            for (int i = 0; i < Keys.Length; i++) if (Keys[i] != o.Keys[i]) return false;
            return Meta.ToString() == o.Meta.ToString();
        }
    }

    /// <summary>A list of entries: a top page, some players, or the entries around one.</summary>
    public sealed class Page
    {
        /// <summary>The board id.</summary>
        public string Board;
        /// <summary>The period read.</summary>
        public string Period;
        /// <summary>The board's last applied seq.</summary>
        public long Seq;
        /// <summary>The period's public entries in all (for paging).</summary>
        public int Total;
        /// <summary>The entries in rank order.</summary>
        public List<Entry> Entries;

        /// <summary>Reads a page.</summary>
        public static Page From(JsonValue v)
        {
            return new Page { Board = v["board"].AsString(), Period = v["period"].AsString(), Seq = v["seq"].AsLong(), Total = v["total"].AsInt(), Entries = Entry.List(v["entries"]) };
        }
    }

    /// <summary>One player's entry with the board's totals (GET .../entries/{player}).</summary>
    public sealed class PlayerEntry
    {
        /// <summary>The board id.</summary>
        public string Board;
        /// <summary>The period read.</summary>
        public string Period;
        /// <summary>The board's last applied seq.</summary>
        public long Seq;
        /// <summary>The period's public entries in all: the player is Entry.Rank of Total.</summary>
        public int Total;
        /// <summary>The entry.</summary>
        public Entry Entry;

        /// <summary>Reads a player's entry.</summary>
        public static PlayerEntry From(JsonValue v)
        {
            return new PlayerEntry { Board = v["board"].AsString(), Period = v["period"].AsString(), Seq = v["seq"].AsLong(), Total = v["total"].AsInt(), Entry = Entry.From(v["entry"]) };
        }
    }

    /// <summary>One submission: Keys (one value per ranking key) and an optional Meta object.</summary>
    public sealed class Score
    {
        /// <summary>The player id.</summary>
        public string Player;
        /// <summary>One value per ranking key of the board.</summary>
        public long[] Keys;
        /// <summary>An object stored with the entry when it changes (null: none).</summary>
        public JsonValue Meta;
        /// <summary>The board, for a batch only.</summary>
        public string Board;

        /// <summary>A score of a one-key or several-key board.</summary>
        public Score(string player, params long[] keys) { Player = player; Keys = keys; }

        /// <summary>The body as JSON.</summary>
        public JsonValue ToJson()
        {
            var o = JsonValue.Object();
            if (Board != null) o.Set("board", JsonValue.From(Board));
            o.Set("player", JsonValue.From(Player)).Set("keys", JsonValue.Array(Keys));
            if (Meta != null && !Meta.IsNull) o.Set("meta", Meta);
            return o;
        }
    }

    /// <summary>The entry a submission left, or the one it replaced.</summary>
    public sealed class SubmittedEntry
    {
        /// <summary>The rank after the submission.</summary>
        public int Rank;
        /// <summary>The entry's values.</summary>
        public long[] Keys;
        /// <summary>When the entry was reached.</summary>
        public DateTime? At;
        /// <summary>The seq of the submission that made the entry (0 for a previous entry).</summary>
        public long Seq;
        /// <summary>The entry's meta.</summary>
        public JsonValue Meta = JsonValue.Null;
        /// <summary>The percentile at Rank (see Entry.Percentile).</summary>
        public double Percentile;
        /// <summary>The shared rank on a board with rank_style shared, else 0.</summary>
        public int RankShared;

        internal static SubmittedEntry From(JsonValue v)
        {
            if (v.IsNull) return null;
            return new SubmittedEntry { Rank = v["rank"].AsInt(), Keys = v["keys"].AsLongArray() ?? new long[0], At = v["at"].AsTime(), Seq = v["seq"].AsLong(), Meta = v["meta"],
                Percentile = v["percentile"].AsDouble(), RankShared = v["rank_shared"].AsInt() };
        }
    }

    /// <summary>The answer to a submission.</summary>
    public sealed class Submitted
    {
        /// <summary>The board id.</summary>
        public string Board;
        /// <summary>The period the submission went to.</summary>
        public string Period;
        /// <summary>The player id.</summary>
        public string Player;
        /// <summary>Whether it changed the entry (false: a best board kept the better one).</summary>
        public bool Improved;
        /// <summary>The submission's seq: what evidence is uploaded for.</summary>
        public long Seq;
        /// <summary>The entry it left (Entry.Rank: the player's rank now).</summary>
        public SubmittedEntry Entry;
        /// <summary>The entry it replaced (null for a first entry).</summary>
        public SubmittedEntry Previous;
        /// <summary>"pending" when the board held it for review (HTTP 202), else null.</summary>
        public string Status;
        /// <summary>The review item's id of a held submission.</summary>
        public string ReviewId;
        /// <summary>Where a held submission's evidence goes.</summary>
        public string EvidenceUrl;
        /// <summary>The answer was rebuilt after a crash (Idempotent-Reconstructed).</summary>
        public bool Reconstructed;
        /// <summary>The answer is the first attempt's, replayed for a retry (Idempotent-Replayed).</summary>
        public bool Replayed;
        /// <summary>The Idempotency-Key the request carried: keep it to retry the same write later.</summary>
        public string IdempotencyKey;
        /// <summary>Requests sent, retries included.</summary>
        public int Attempts;
        /// <summary>The answer as sent.</summary>
        public JsonValue Raw;

        /// <summary>Whether the board held it for review instead of ranking it.</summary>
        public bool Held { get { return Status == "pending"; } }

        /// <summary>Reads a submission's answer.</summary>
        public static Submitted From(JsonValue v)
        {
            return new Submitted
            {
                Board = v["board"].AsString(), Period = v["period"].AsString(), Player = v["player"].AsString(), Improved = v["improved"].AsBool(),
                Seq = v["seq"].AsLong(), Entry = SubmittedEntry.From(v["entry"]), Previous = SubmittedEntry.From(v["previous"]),
                Status = v["status"].AsString(), ReviewId = v["id"].AsString(), EvidenceUrl = v["evidence_url"].AsString(),
                Reconstructed = v["reconstructed"].AsBool(), Raw = v,
            };
        }
    }

    /// <summary>A player session; Token is set only in the answers to issue and refresh.</summary>
    public sealed class Session
    {
        /// <summary>ses_...</summary>
        public string Id;
        /// <summary>The player it acts as.</summary>
        public string Player;
        /// <summary>The device label.</summary>
        public string Device;
        /// <summary>When it was issued.</summary>
        public DateTime? CreatedAt;
        /// <summary>When it was last refreshed.</summary>
        public DateTime? RefreshedAt;
        /// <summary>When it expires.</summary>
        public DateTime? ExpiresAt;
        /// <summary>The bearer token (pds_...), shown once.</summary>
        public string Token;

        /// <summary>Reads a session.</summary>
        public static Session From(JsonValue v)
        {
            return new Session
            {
                Id = v["id"].AsString(), Player = v["player"].AsString(), Device = v["device"].AsString(), CreatedAt = v["created_at"].AsTime(),
                RefreshedAt = v["refreshed_at"].AsTime(), ExpiresAt = v["expires_at"].AsTime(), Token = v["token"].AsString(),
            };
        }
    }

    /// <summary>What the server stored of an evidence upload.</summary>
    public sealed class Evidence
    {
        /// <summary>The board id.</summary>
        public string Board;
        /// <summary>The player id.</summary>
        public string Player;
        /// <summary>The submission it belongs to (0 while under a review item).</summary>
        public long Seq;
        /// <summary>The review item, for a held submission.</summary>
        public string Review;
        /// <summary>SHA-256 of the inflated JSON Lines, hex.</summary>
        public string ContentSha256;
        /// <summary>SHA-256 of the gzip bytes, hex.</summary>
        public string CompressedSha256;
        /// <summary>Compressed size.</summary>
        public long Bytes;
        /// <summary>Inflated size.</summary>
        public long InflatedBytes;
        /// <summary>Lines (events) in it.</summary>
        public int Events;
        /// <summary>The content was already stored (a retry, or the same file for another submission).</summary>
        public bool Reused;
        /// <summary>When it expires (null: kept).</summary>
        public DateTime? ExpiresAt;
        /// <summary>The answer as sent.</summary>
        public JsonValue Raw;

        /// <summary>Reads an upload's answer.</summary>
        public static Evidence From(JsonValue v)
        {
            return new Evidence
            {
                Board = v["board"].AsString(), Player = v["player"].AsString(), Seq = v["seq"].AsLong(), Review = v["review"].AsString(),
                ContentSha256 = v["content_sha256"].AsString(), CompressedSha256 = v["compressed_sha256"].AsString(),
                Bytes = v["bytes"].AsLong(), InflatedBytes = v["inflated_bytes"].AsLong(), Events = v["events"].AsInt(),
                Reused = v["reused"].AsBool(), ExpiresAt = v["expires_at"].AsTime(), Raw = v,
            };
        }
    }

    /// <summary>An API key; Key, its secret, is set only in the answer that created it.</summary>
    public sealed class ApiKey
    {
        /// <summary>The key's id (for DELETE /v1/keys/{id}).</summary>
        public string Id;
        /// <summary>Its name.</summary>
        public string Name;
        /// <summary>read, submit, admin, sessions, review.</summary>
        public string[] Scopes;
        /// <summary>Board-id prefixes it is limited to (empty: all).</summary>
        public string[] Boards;
        /// <summary>The secret to send as a bearer token.</summary>
        public string Key;

        /// <summary>Reads a key.</summary>
        public static ApiKey From(JsonValue v)
        {
            return new ApiKey { Id = v["id"].AsString(), Name = v["name"].AsString(), Scopes = v["scopes"].AsStringArray(), Boards = v["boards"].AsStringArray(), Key = v["key"].AsString() };
        }
    }
}
