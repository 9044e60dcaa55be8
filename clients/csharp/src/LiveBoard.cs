// LiveBoard follows a board's top N over Server-Sent Events
// (GET /v1/boards/{board}/stream, docs/API.md "Live updates"): it applies
// snapshots and deltas to a state, checks that each delta follows the state
// held (same snapshot_id, prev_seq equal to the last seq) and starts over from
// a fresh snapshot when one does not, and after a lost connection reconnects
// with backoff and full jitter, resuming with Last-Event-ID so that it gets
// only what it missed (or a snapshot when the server can no longer tell).

using System;
using System.Collections.Generic;
using System.Globalization;
using System.IO;
using System.Net;
using System.Net.Http;
using System.Text;
using System.Threading;
using System.Threading.Tasks;

namespace Podium
{
    /// <summary>Settings of a <see cref="LiveBoard"/>; unset fields take the defaults.</summary>
    public sealed class WatchOptions
    {
        /// <summary>How many top entries to follow, 1 to 1000 (default 50).</summary>
        public int Limit = 50;
        /// <summary>Resume from <see cref="LiveState.EventId"/> of an earlier subscriber.</summary>
        public string LastEventId;
        /// <summary>Reconnect backoff: the wait before attempt n is random in [0, min(MaxDelay, MinDelay×2^n)] (1 s, 30 s).</summary>
        public TimeSpan MinDelay = TimeSpan.FromSeconds(1);
        /// <summary>See MinDelay.</summary>
        public TimeSpan MaxDelay = TimeSpan.FromSeconds(30);
        /// <summary>How long a connection must stay live for the backoff to start over (5 s).</summary>
        public TimeSpan HealthyAfter = TimeSpan.FromSeconds(5);
        /// <summary>Drops a connection that sends nothing, not even the server's 15 s pings, for this long (45 s).</summary>
        public TimeSpan IdleTimeout = TimeSpan.FromSeconds(45);
        /// <summary>
        /// Raise events on the SynchronizationContext that was current at Start (Unity's
        /// main thread, a UI thread) instead of the subscriber's own thread (default true).
        /// </summary>
        public bool UseSynchronizationContext = true;
    }

    /// <summary>An entry new to the window or changed, with its rank before (null when new to the window).</summary>
    public sealed class LiveChange
    {
        /// <summary>The entry now.</summary>
        public Entry Entry;
        /// <summary>Its rank before, or null.</summary>
        public int? PrevRank;
    }

    /// <summary>A player that left the window.</summary>
    public sealed class LiveRemoved
    {
        /// <summary>The player id.</summary>
        public string Player;
        /// <summary>Its rank before.</summary>
        public int PrevRank;
    }

    /// <summary>The followed window: the top Limit entries in rank order. Read-only; every update makes a new one.</summary>
    public sealed class LiveState
    {
        /// <summary>The board id.</summary>
        public string Board { get; internal set; }
        /// <summary>The board's title.</summary>
        public string Title { get; internal set; }
        /// <summary>The board's ranking keys.</summary>
        public RankKey[] Keys { get; internal set; }
        /// <summary>The current period.</summary>
        public string Period { get; internal set; }
        /// <summary>When it ends (null: never).</summary>
        public DateTime? NextReset { get; internal set; }
        /// <summary>The board's seq this state is at.</summary>
        public long Seq { get; internal set; }
        /// <summary>The snapshot chain it belongs to.</summary>
        public long SnapshotId { get; internal set; }
        /// <summary>The window's size.</summary>
        public int Limit { get; internal set; }
        /// <summary>Entries in the period, not only in the window.</summary>
        public int Total { get; internal set; }
        /// <summary>The window's entries in rank order.</summary>
        public IList<Entry> Entries { get; internal set; }

        /// <summary>"&lt;snapshot_id&gt;.&lt;seq&gt;": pass it as WatchOptions.LastEventId to resume later.</summary>
        public string EventId
        {
            get { return SnapshotId.ToString(CultureInfo.InvariantCulture) + "." + Seq.ToString(CultureInfo.InvariantCulture); }
        }

        /// <summary>The player's entry in the window, or null when it is not in the top Limit.</summary>
        public Entry Find(string player)
        {
            foreach (var e in Entries) if (e.Player == player) return e;
            return null;
        }

        internal LiveState Copy() { return (LiveState)MemberwiseClone(); }
    }

    /// <summary>What one event changed.</summary>
    public sealed class LiveUpdate
    {
        /// <summary>"snapshot" or "delta".</summary>
        public string Type;
        /// <summary>The first snapshot of this subscriber.</summary>
        public bool Initial;
        /// <summary>Every entry that is new or whose rank, keys, name or meta changed. A snapshot after a reconnect or a gap is compared with the state held before.</summary>
        public List<LiveChange> Changed = new List<LiveChange>();
        /// <summary>The players that left the window.</summary>
        public List<LiveRemoved> Left = new List<LiveRemoved>();
        /// <summary>Set on the snapshot that follows a period reset: the period that ended (nothing is reported as changed then).</summary>
        public string PreviousPeriod;
    }

    /// <summary>The state of a subscriber's connection.</summary>
    public enum LiveConnection
    {
        /// <summary>The first connection is being made, or a snapshot is awaited.</summary>
        Connecting,
        /// <summary>Connected, and the state is current.</summary>
        Live,
        /// <summary>The connection was lost: waiting for Delay, then trying again.</summary>
        Reconnecting,
        /// <summary>Stop was called.</summary>
        Stopped,
        /// <summary>The server refused the stream for good (Error says why).</summary>
        Failed,
    }

    /// <summary>A subscriber's connection status.</summary>
    public sealed class LiveStatus
    {
        /// <summary>Connecting, Live, Reconnecting; Stopped after Stop; Failed when the server said retrying cannot help.</summary>
        public LiveConnection State;
        /// <summary>Consecutive failed connections.</summary>
        public int Attempt;
        /// <summary>Reconnecting: the wait before the next attempt.</summary>
        public TimeSpan Delay;
        /// <summary>Reconnecting: why the last connection ended; Failed: the <see cref="PodiumException"/>.</summary>
        public Exception Error;
    }

    /// <summary>
    /// A live subscriber of a board's top entries (<see cref="PodiumClient.Watch"/>).
    /// Subscribe to <see cref="Updated"/> and <see cref="StatusChanged"/>, then call
    /// <see cref="Start"/>; <see cref="State"/> is always the last state. It runs until
    /// <see cref="Stop"/>, or until the server says retrying cannot help
    /// (board_not_found, unauthenticated, forbidden, invalid_argument): then
    /// <see cref="Completion"/> fails with that <see cref="PodiumException"/> and the
    /// status is Failed.
    /// </summary>
    public sealed class LiveBoard : IDisposable
    {
        private const int MaxEvent = 32 << 20;
        private static readonly HashSet<string> FatalCodes = new HashSet<string> { "board_not_found", "not_found", "unauthenticated", "forbidden", "invalid_argument", "invalid_json" };

        private readonly PodiumClient client;
        private readonly string board;
        private readonly WatchOptions o;
        private readonly string url;
        private readonly CancellationTokenSource stop = new CancellationTokenSource();
        private SynchronizationContext context;
        private Task completion;
        private volatile TaskCompletionSource<bool> wake = new TaskCompletionSource<bool>();

        // Touched by the run loop only.
        private LiveState state;
        private bool following;          // the next delta may follow state; false while a snapshot is awaited
        private string lastId;           // the id to resume from
        private string prevPeriod;       // set by a period event, reported with the next snapshot
        private int attempt;
        private DateTime liveSince = DateTime.MinValue;
        private DateTime lastResync = DateTime.MinValue;
        private LiveStatus status = new LiveStatus { State = LiveConnection.Connecting };

        /// <summary>Called after every snapshot and every applied delta.</summary>
        public event Action<LiveState, LiveUpdate> Updated;
        /// <summary>Called when the connection's status changes.</summary>
        public event Action<LiveStatus> StatusChanged;

        internal LiveBoard(PodiumClient client, string board, WatchOptions options)
        {
            this.client = client;
            this.board = board;
            o = options ?? new WatchOptions();
            if (o.Limit <= 0) o.Limit = 50;
            if (o.MinDelay <= TimeSpan.Zero) o.MinDelay = TimeSpan.FromSeconds(1);
            if (o.MaxDelay < o.MinDelay) o.MaxDelay = o.MinDelay > TimeSpan.FromSeconds(30) ? o.MinDelay : TimeSpan.FromSeconds(30);
            if (o.HealthyAfter <= TimeSpan.Zero) o.HealthyAfter = TimeSpan.FromSeconds(5);
            if (o.IdleTimeout <= TimeSpan.Zero) o.IdleTimeout = TimeSpan.FromSeconds(45);
            lastId = o.LastEventId;
            url = client.Url(PodiumClient.PathOf("boards", board, "stream"),
                new List<KeyValuePair<string, string>> { new KeyValuePair<string, string>("limit", o.Limit.ToString(CultureInfo.InvariantCulture)) });
        }

        /// <summary>The board followed.</summary>
        public string Board { get { return board; } }

        /// <summary>The last state, or null before the first snapshot.</summary>
        public LiveState State { get { return Volatile.Read(ref state); } }

        /// <summary>The connection's status.</summary>
        public LiveStatus Status { get { return Volatile.Read(ref status); } }

        /// <summary>Ends when the subscriber stops: normally after Stop; failed with a <see cref="PodiumException"/> when the server refused it for good.</summary>
        public Task Completion { get { return completion ?? Task.FromResult(true); } }

        /// <summary>Starts following in the background and returns this subscriber. Events go to the SynchronizationContext current here, if any (see WatchOptions).</summary>
        public LiveBoard Start()
        {
            if (completion != null) throw new InvalidOperationException("the subscriber was started already");
            context = o.UseSynchronizationContext ? SynchronizationContext.Current : null;
            completion = Task.Run(() => RunAsync(stop.Token));
            return this;
        }

        /// <summary>
        /// Stops: closes the connection and cancels a pending retry; the last status is
        /// Stopped. With a SynchronizationContext (Unity), no update is raised after it
        /// returns; without one, an update being raised on the subscriber's thread may
        /// still finish (await Completion to be sure).
        /// </summary>
        public void Stop()
        {
            if (!stop.IsCancellationRequested) stop.Cancel();
        }

        /// <summary>Same as Stop.</summary>
        public void Dispose() { Stop(); }

        /// <summary>Reconnects now if the subscriber is waiting out a backoff (a "retry now" button, the network is back).</summary>
        public void Reconnect()
        {
            wake.TrySetResult(true);
        }

        private async Task RunAsync(CancellationToken ct)
        {
            try
            {
                while (!ct.IsCancellationRequested)
                {
                    Exception err;
                    try
                    {
                        await ConnectAsync(ct).ConfigureAwait(false);
                        err = new IOException("podium: the stream ended");
                    }
                    catch (Exception e)
                    {
                        err = e;
                    }
                    if (ct.IsCancellationRequested) break;
                    var pe = err as PodiumException;
                    if (pe != null && IsFatal(pe))
                    {
                        SetStatus(new LiveStatus { State = LiveConnection.Failed, Attempt = attempt, Error = pe });
                        throw pe;
                    }
                    if (err is GapException)
                    {
                        following = false;
                        lastId = null;
                        bool again = DateTime.UtcNow - lastResync < TimeSpan.FromSeconds(2);
                        lastResync = DateTime.UtcNow;
                        if (!again)
                        {
                            SetStatus(new LiveStatus { State = LiveConnection.Reconnecting, Attempt = attempt, Error = err });
                            continue; // at once: the server is fine, the chain is not
                        }
                        // gaps in a row: back off instead of spinning
                    }
                    if (liveSince != DateTime.MinValue && DateTime.UtcNow - liveSince >= o.HealthyAfter) attempt = 0;
                    liveSince = DateTime.MinValue;
                    var delay = RetryPolicy.Backoff(o.MinDelay, o.MaxDelay, attempt);
                    if (pe != null && pe.RetryAfter.HasValue && pe.RetryAfter.Value > delay) delay = pe.RetryAfter.Value;
                    attempt++;
                    SetStatus(new LiveStatus { State = LiveConnection.Reconnecting, Attempt = attempt, Delay = delay, Error = err });
                    var w = wake = new TaskCompletionSource<bool>();
                    try
                    {
                        await Task.WhenAny(Task.Delay(delay, ct), w.Task).ConfigureAwait(false);
                    }
                    catch (OperationCanceledException) { }
                }
            }
            finally
            {
                if (ct.IsCancellationRequested) SetStatus(new LiveStatus { State = LiveConnection.Stopped, Attempt = attempt });
            }
        }

        private static bool IsFatal(PodiumException e)
        {
            switch (e.Status)
            {
                case 0: return FatalCodes.Contains(e.Code);
                case 400: case 401: case 403: case 404: case 410: return true;
                default: return false;
            }
        }

        private sealed class GapException : Exception
        {
            public GapException() : base("podium: the stream skipped an event") { }
        }

        // One connection: it runs until the connection ends, and throws why.
        private async Task ConnectAsync(CancellationToken ct)
        {
            using (var cts = CancellationTokenSource.CreateLinkedTokenSource(ct))
            using (var m = new HttpRequestMessage(HttpMethod.Get, url))
            {
                client.Authorize(m);
                m.Headers.Accept.ParseAdd("text/event-stream");
                m.Headers.TryAddWithoutValidation("Cache-Control", "no-cache");
                if (!string.IsNullOrEmpty(lastId)) m.Headers.TryAddWithoutValidation("Last-Event-ID", lastId);
                // The idle timer cuts a connection that went silent: a half-open
                // TCP connection would otherwise wait forever.
                cts.CancelAfter(o.IdleTimeout);
                HttpResponseMessage resp;
                try
                {
                    resp = await client.Http.SendAsync(m, HttpCompletionOption.ResponseHeadersRead, cts.Token).ConfigureAwait(false);
                }
                catch (OperationCanceledException) when (!ct.IsCancellationRequested)
                {
                    throw new TimeoutException("podium: the stream did not answer within " + o.IdleTimeout);
                }
                using (resp)
                using (cts.Token.Register(() => resp.Dispose()))
                {
                    if (resp.StatusCode != HttpStatusCode.OK)
                    {
                        string body = "";
                        try { body = await resp.Content.ReadAsStringAsync().ConfigureAwait(false); } catch (Exception) { }
                        throw PodiumException.FromAnswer((int)resp.StatusCode, body, PodiumClient.RetryAfterOf(resp));
                    }
                    if (following) Live(); // resuming: the server sends only what was missed, maybe nothing
                    else SetStatus(new LiveStatus { State = LiveConnection.Connecting, Attempt = attempt });
                    var stream = await resp.Content.ReadAsStreamAsync().ConfigureAwait(false);
                    var r = new StreamReader(stream, new UTF8Encoding(false), false, 65536);
                    string type = null;
                    var data = new StringBuilder();
                    while (true)
                    {
                        string line;
                        try
                        {
                            line = await r.ReadLineAsync().ConfigureAwait(false);
                        }
                        catch (Exception) when (cts.IsCancellationRequested && !ct.IsCancellationRequested)
                        {
                            throw new TimeoutException("podium: the stream was silent for " + o.IdleTimeout);
                        }
                        if (line == null)
                        {
                            // Disposing the response may end the read as an end of stream.
                            if (cts.IsCancellationRequested && !ct.IsCancellationRequested) throw new TimeoutException("podium: the stream was silent for " + o.IdleTimeout);
                            throw new IOException("podium: the stream ended");
                        }
                        cts.CancelAfter(o.IdleTimeout);
                        if (line.Length == 0)
                        {
                            // The end of an event.
                            if (data.Length > 0) HandleEvent(type, data.ToString());
                            type = null;
                            data.Clear();
                            continue;
                        }
                        if (line[0] == ':') continue; // a comment (ping)
                        int colon = line.IndexOf(':');
                        string field = colon < 0 ? line : line.Substring(0, colon);
                        string value = colon < 0 ? "" : line.Substring(colon + 1);
                        if (value.StartsWith(" ", StringComparison.Ordinal)) value = value.Substring(1);
                        if (field == "event")
                        {
                            type = value;
                        }
                        else if (field == "data")
                        {
                            if (data.Length > 0) data.Append('\n');
                            if (data.Length + value.Length > MaxEvent) throw new PodiumProtocolException("podium: a stream event is over " + MaxEvent + " characters");
                            data.Append(value);
                        }
                        // id: the subscriber resumes from the events it applied, not
                        // from the last id seen; retry: it has its own backoff.
                    }
                }
            }
        }

        private void HandleEvent(string type, string data)
        {
            JsonValue m;
            try
            {
                m = JsonValue.Parse(data);
            }
            catch (FormatException e)
            {
                throw new PodiumProtocolException("podium: a " + type + " event is not JSON", e);
            }
            var t = m["type"].AsString() ?? type;
            switch (t)
            {
                case "snapshot": Snapshot(m); break;
                case "delta": Delta(m); break;
                case "period":
                    // A snapshot of the new period follows; deltas wait for it.
                    if (state != null && prevPeriod == null) prevPeriod = m["previous"].AsString() ?? state.Period;
                    following = false;
                    break;
                case "error":
                    throw new PodiumException(0, m["code"].AsString() ?? "", m["message"].AsString() ?? "");
            }
            // types added later are ignored
        }

        private void Snapshot(JsonValue m)
        {
            var old = state;
            var st = new LiveState
            {
                Board = m["board"].AsString(), Title = m["title"].AsString(), Keys = RankKey.List(m["keys"]), Period = m["period"].AsString(),
                NextReset = m["next_reset"].AsTime(), Seq = m["seq"].AsLong(), SnapshotId = m["snapshot_id"].AsLong(),
                Limit = m["limit"].AsInt(), Total = m["total"].AsInt(), Entries = Entry.List(m["entries"]).AsReadOnly(),
            };
            if (st.Limit == 0) st.Limit = o.Limit;
            var u = new LiveUpdate { Type = "snapshot", Initial = old == null };
            if (prevPeriod != null || (old != null && old.Period != st.Period))
            {
                u.PreviousPeriod = prevPeriod ?? old.Period;
            }
            else if (old != null)
            {
                // After a reconnect or a gap: report what changed meanwhile.
                var before = new Dictionary<string, Entry>();
                foreach (var e in old.Entries) before[e.Player] = e;
                foreach (var e in st.Entries)
                {
                    Entry was;
                    if (!before.TryGetValue(e.Player, out was)) u.Changed.Add(new LiveChange { Entry = e });
                    else
                    {
                        before.Remove(e.Player);
                        if (was.Rank != e.Rank || !was.SameAs(e)) u.Changed.Add(new LiveChange { Entry = e, PrevRank = was.Rank });
                    }
                }
                foreach (var e in old.Entries)
                    if (before.ContainsKey(e.Player)) u.Left.Add(new LiveRemoved { Player = e.Player, PrevRank = e.Rank });
            }
            prevPeriod = null;
            Commit(st, u);
        }

        private void Delta(JsonValue m)
        {
            var old = state;
            if (!following || old == null) return; // waiting for a snapshot
            if (m["snapshot_id"].AsLong() != old.SnapshotId || m["prev_seq"].AsLong() != old.Seq) throw new GapException();
            // Remove the removed and the changed players, put each change at its
            // rank, and fill the ranks left free with the rest in their old order.
            var gone = new HashSet<string>();
            var u = new LiveUpdate { Type = "delta" };
            foreach (var r in m["removed"].Items)
            {
                gone.Add(r["player"].AsString());
                u.Left.Add(new LiveRemoved { Player = r["player"].AsString(), PrevRank = r["prev_rank"].AsInt() });
            }
            var changes = m["changes"].Items;
            foreach (var c in changes) gone.Add(c["player"].AsString());
            var rest = new List<Entry>();
            foreach (var e in old.Entries) if (!gone.Contains(e.Player)) rest.Add(e);
            var entries = new Entry[rest.Count + changes.Count];
            foreach (var c in changes)
            {
                var e = Entry.From(c);
                if (e.Rank < 1 || e.Rank > entries.Length || entries[e.Rank - 1] != null) throw new GapException(); // ranks that cannot fit: an event was lost
                entries[e.Rank - 1] = e;
                u.Changed.Add(new LiveChange { Entry = e, PrevRank = c["prev_rank"].IsNull ? (int?)null : c["prev_rank"].AsInt() });
            }
            int j = 0;
            for (int i = 0; i < entries.Length; i++)
            {
                if (entries[i] != null) continue;
                entries[i] = rest[j].Rank == i + 1 ? rest[j] : rest[j].WithRank(i + 1);
                j++;
            }
            if (entries.Length > old.Limit) throw new GapException();
            var st = old.Copy();
            st.Seq = m["seq"].AsLong();
            st.Entries = Array.AsReadOnly(entries);
            if (m["period"].AsString() != null) st.Period = m["period"].AsString();
            if (m.Has("total")) st.Total = m["total"].AsInt();
            Commit(st, u);
        }

        // Makes st the state, live, and raises Updated.
        private void Commit(LiveState st, LiveUpdate u)
        {
            Volatile.Write(ref state, st);
            following = true;
            lastId = st.EventId;
            Live();
            Raise(() => { var h = Updated; if (h != null) h(st, u); }, false);
        }

        private void Live()
        {
            if (status.State != LiveConnection.Live)
            {
                liveSince = DateTime.UtcNow;
                SetStatus(new LiveStatus { State = LiveConnection.Live, Attempt = attempt });
            }
        }

        private void SetStatus(LiveStatus s)
        {
            var cur = status;
            if (s.State == cur.State && s.Attempt == cur.Attempt && s.Delay == cur.Delay) return;
            Volatile.Write(ref status, s);
            Raise(() => { var h = StatusChanged; if (h != null) h(s); }, true);
        }

        // Raises an event: on the captured context if any, else here. Updates
        // posted to a context are dropped once Stop was called; statuses are not
        // (the last one says Stopped).
        private void Raise(Action a, bool isStatus)
        {
            // A handler's exception is caught: it must not end the stream (it
            // would reconnect, and throw again, for ever). Handle your own errors.
            var ctx = context;
            if (ctx == null)
            {
                Guard(a);
                return;
            }
            ctx.Post(_ =>
            {
                if (isStatus || !stop.IsCancellationRequested) Guard(a);
            }, null);
        }

        private static void Guard(Action a)
        {
            try { a(); } catch (Exception) { }
        }
    }
}
