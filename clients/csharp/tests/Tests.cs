// The C# client's tests, against a real podium (PODIUM_BIN) that they start,
// cut off and restart. A console program: it prints one line per test and
// "N passed, N failed", and exits non-zero on a failure.

using System;
using System.Collections.Generic;
using System.Linq;
using System.Net.Http;
using System.Text;
using System.Threading;
using System.Threading.Tasks;

namespace Podium.Tests
{
    static partial class Program
    {
        static Server server;
        static PodiumClient admin;

        static int Main(string[] args)
        {
            var tests = new List<KeyValuePair<string, Func<Task>>>
            {
                T("Json", Json),
                T("WebhookSnippet", WebhookSnippet),
                T("RetryPolicyKinds", RetryPolicyKinds),
                T("SubmitAndRead", SubmitAndRead),
                T("SubmitRetrySameKey", SubmitRetrySameKey),
                T("SubmitRetriesUnavailable", SubmitRetriesUnavailable),
                T("Errors", Errors),
                T("Sessions", Sessions),
                T("Evidence", Evidence),
                T("HeldSubmission", HeldSubmission),
                T("LiveDeltas", LiveDeltas),
                T("LiveSurvivesCut", LiveSurvivesCut),
                T("LiveSurvivesRestart", LiveSurvivesRestart),
                T("LiveGapResync", LiveGapResync),
                T("LiveOnContext", LiveOnContext),
                T("LiveIdleTimeout", LiveIdleTimeout),
                T("LiveBoardDeleted", LiveBoardDeleted),
                T("LiveUnknownBoard", LiveUnknownBoard),
            };
            string only = args.Length > 0 ? args[0] : null;
            int passed = 0, failed = 0;
            try
            {
                server = new Server();
                server.Start();
                admin = new PodiumClient(server.Url, new PodiumClientOptions { Key = server.AdminKey });
                foreach (var t in tests)
                {
                    if (only != null && !t.Key.Contains(only)) continue;
                    var sw = System.Diagnostics.Stopwatch.StartNew();
                    try
                    {
                        var task = t.Value();
                        if (!task.Wait(TimeSpan.FromSeconds(90))) throw new TimeoutException("the test did not end within 90 s");
                        Console.WriteLine("ok   " + t.Key + " (" + sw.ElapsedMilliseconds + " ms)");
                        passed++;
                    }
                    catch (Exception e)
                    {
                        var inner = e is AggregateException && e.InnerException != null ? e.InnerException : e;
                        Console.WriteLine("FAIL " + t.Key + ": " + inner);
                        failed++;
                    }
                }
            }
            catch (Exception e)
            {
                Console.WriteLine("FAIL setup: " + e);
                failed++;
            }
            finally
            {
                if (failed > 0 && server != null) Console.WriteLine("--- podium's log ---\n" + server.Log);
                if (server != null) server.Dispose();
            }
            Console.WriteLine(passed + " passed, " + failed + " failed");
            return failed == 0 ? 0 : 1;
        }

        static KeyValuePair<string, Func<Task>> T(string name, Func<Task> f) { return new KeyValuePair<string, Func<Task>>(name, f); }

        // ---- assertions ----

        static void Check(bool ok, string what)
        {
            if (!ok) throw new Exception("check failed: " + what);
        }

        static void Equal<T>(T want, T got, string what)
        {
            if (!EqualityComparer<T>.Default.Equals(want, got)) throw new Exception(what + ": want " + want + ", got " + got);
        }

        static async Task<PodiumException> Throws(Func<Task> f, string what)
        {
            try
            {
                await f();
            }
            catch (PodiumException e)
            {
                return e;
            }
            throw new Exception(what + ": no PodiumException");
        }

        static int boards;

        /// <summary>A new public board with one ascending key (or the spec's mode).</summary>
        static async Task<string> NewBoard(string mode = "best", bool playerSubmit = false)
        {
            var id = "cs" + Interlocked.Increment(ref boards) + ":" + mode;
            var spec = JsonValue.Object().Set("title", JsonValue.From("C# " + id))
                .Set("keys", JsonValue.Array(new[] { new RankKey { Name = "time_ms", Order = mode == "sum" ? "desc" : "asc" }.ToJson() }))
                .Set("mode", JsonValue.From(mode)).Set("public", JsonValue.From(true));
            if (playerSubmit) spec.Set("player_submit", JsonValue.From(true));
            var b = await admin.PutBoardAsync(id, spec);
            Equal(id, b.Id, "board id");
            return id;
        }

        // ---- tests ----

        static Task Json()
        {
            var v = JsonValue.Parse("{\"a\":[1,-9223372036854775808,9223372036854775807],\"s\":\"\\u00e9\\ud83d\\ude00\\\"\\n\",\"n\":null,\"t\":true,\"o\":{\"x\":1.5e3}}");
            Equal(-9223372036854775808L, v["a"].Items[1].AsLong(), "int64 min");
            Equal(9223372036854775807L, v["a"].Items[2].AsLong(), "int64 max");
            Equal("é😀\"\n", v["s"].AsString(), "escapes and a surrogate pair");
            Check(v["n"].IsNull && v["missing"].IsNull && v["missing"]["deeper"].IsNull, "null and missing members");
            Check(v["t"].AsBool(), "true");
            Equal(1500.0, v["o"]["x"].AsDouble(), "a double");
            Equal(v.ToString(), JsonValue.Parse(v.ToString()).ToString(), "round trip");
            Equal("\"é😀\\\"\\n\\u0001\"", JsonValue.From("é😀\"\n\u0001").ToString(), "written escapes");
            try
            {
                JsonValue.From("a\ud800b").ToString();
                throw new Exception("a lone surrogate was written");
            }
            catch (ArgumentException) { }
            foreach (var bad in new[] { "", "{", "[1,]", "{\"a\" 1}", "01", "1 2", "\"\\x\"", "tru" })
            {
                try
                {
                    JsonValue.Parse(bad);
                    throw new Exception("parsed invalid JSON " + bad);
                }
                catch (FormatException) { }
            }
            return Task.FromResult(0);
        }

        static Task RetryPolicyKinds()
        {
            var p = new RetryPolicy { MaxAttempts = 3, MinDelay = TimeSpan.FromMilliseconds(1), MaxDelay = TimeSpan.FromMilliseconds(2) };
            TimeSpan w;
            Check(p.Next(RequestKind.Keyed, 0, null, out w), "a keyed write is retried after a network error");
            Check(!p.Next(RequestKind.Once, 0, null, out w), "a once write is not retried after a network error");
            Check(p.Next(RequestKind.Keyed, 0, new PodiumException(503, "outcome_unknown", ""), out w), "keyed: outcome_unknown retried");
            Check(!p.Next(RequestKind.Read, 0, new PodiumException(503, "outcome_unknown", ""), out w), "read: outcome_unknown not retried");
            Check(p.Next(RequestKind.Once, 0, new PodiumException(503, "unavailable", ""), out w), "once: unavailable retried (nothing applied)");
            Check(p.Next(RequestKind.Once, 0, new PodiumException(429, "rate_limited", ""), out w), "429 retried");
            Check(!p.Next(RequestKind.Read, 0, new PodiumException(404, "board_not_found", ""), out w), "404 not retried");
            Check(!p.Next(RequestKind.Read, 0, new PodiumException(409, "conflict", ""), out w), "409 not retried");
            Check(!p.Next(RequestKind.Read, 2, null, out w), "attempts are bounded");
            Check(!p.Next(RequestKind.Read, 0, new PodiumException(503, "unavailable", "", TimeSpan.FromMinutes(5)), out w), "a Retry-After past MaxRetryAfter ends the call");
            Check(p.Next(RequestKind.Read, 0, new PodiumException(503, "unavailable", "", TimeSpan.FromSeconds(2)), out w) && w >= TimeSpan.FromSeconds(2), "Retry-After is waited");
            for (int n = 0; n < 100; n++)
            {
                var b = RetryPolicy.Backoff(TimeSpan.FromDays(1), TimeSpan.FromDays(3), n);
                Check(b >= TimeSpan.Zero && b <= TimeSpan.FromDays(3), "backoff " + n + " within [0, max]: " + b);
            }
            return Task.FromResult(0);
        }

        static async Task SubmitAndRead()
        {
            var board = await NewBoard();
            var s1 = await admin.SubmitAsync(board, new Score("alice", 41234) { Meta = JsonValue.Object().Set("level", JsonValue.From(3)) });
            Check(s1.Improved && s1.Seq > 0 && s1.Entry.Rank == 1 && s1.Previous == null, "first submission: rank 1, no previous");
            Check(!s1.Replayed && s1.Attempts == 1 && s1.IdempotencyKey.Length == 32, "a generated Idempotency-Key, one attempt");
            await admin.SubmitAsync(board, new Score("bob", 40000));
            await admin.SubmitAsync(board, new Score("carol", 50000));
            await admin.SubmitAsync(board, new Score("dave ü/x", 45000)); // an id that needs escaping
            var worse = await admin.SubmitAsync(board, new Score("alice", 60000));
            Check(!worse.Improved && worse.Entry.Keys[0] == 41234, "a best board keeps the better entry");

            var top = await admin.TopAsync(board, 0, 10);
            Equal(4, top.Total, "total");
            Equal("bob,alice,dave ü/x,carol", string.Join(",", top.Entries.Select(e => e.Player)), "order");
            Equal(3L, top.Entries[1].Meta["level"].AsLong(), "meta");
            var page2 = await admin.TopAsync(board, 2, 2);
            Equal("dave ü/x,carol", string.Join(",", page2.Entries.Select(e => e.Player)), "second page");
            Equal(3, page2.Entries[0].Rank, "ranks of a later page");

            var e1 = await admin.EntryAsync(board, "dave ü/x");
            Equal(3, e1.Entry.Rank, "a player's rank");
            Equal(4, e1.Total, "of total");
            Check(await admin.TryEntryAsync(board, "nobody") == null, "no entry: null");

            var around = await admin.AroundAsync(board, "alice", 1);
            Equal("bob,alice,dave ü/x", string.Join(",", around.Entries.Select(e => e.Player)), "around");
            var some = await admin.PlayersAsync(board, new[] { "carol", "bob", "nobody" });
            Equal("bob:1,carol:4", string.Join(",", some.Entries.Select(e => e.Player + ":" + e.Rank)), "players");

            var anon = new PodiumClient(server.Url); // a public board reads without a key
            Equal(4, (await anon.TopAsync(board)).Entries.Count, "anonymous read");
            var b = await anon.GetBoardAsync(board);
            Equal("time_ms", b.Keys[0].Name, "board keys");
        }

        static async Task SubmitRetrySameKey()
        {
            // A sum board shows how many times a submission was applied.
            var board = await NewBoard("sum");
            var flaky = new FlakyHandler { LoseAnswers = 1 };
            var c = new PodiumClient(server.Url, new PodiumClientOptions
            {
                Key = server.AdminKey, HttpClient = new HttpClient(flaky),
                Retry = new RetryPolicy { MinDelay = TimeSpan.FromMilliseconds(1), MaxDelay = TimeSpan.FromMilliseconds(5) },
            });
            var s = await c.SubmitAsync(board, new Score("alice", 5));
            Equal(2, s.Attempts, "attempts (the first answer was lost)");
            Check(s.Replayed, "the retry is answered from the first attempt (Idempotent-Replayed)");
            Equal(2, flaky.IdempotencyKeys.Count, "requests sent");
            Check(flaky.IdempotencyKeys[0] != null && flaky.IdempotencyKeys[0] == flaky.IdempotencyKeys[1], "both attempts carry one Idempotency-Key");
            Equal(5L, (await admin.EntryAsync(board, "alice")).Entry.Keys[0], "applied once");

            // The same key later (a game that kept it across a restart): replayed, not applied.
            var again = await admin.SubmitAsync(board, new Score("alice", 5), s.IdempotencyKey);
            Check(again.Replayed && again.Seq == s.Seq, "an explicit key replays the first answer");
            Equal(5L, (await admin.EntryAsync(board, "alice")).Entry.Keys[0], "still applied once");
            // The same key with another body is 409 conflict.
            var e = await Throws(() => admin.SubmitAsync(board, new Score("alice", 6), s.IdempotencyKey), "key reuse");
            Equal(409, e.Status, "status");
            Equal("conflict", e.Code, "code");
            Check(e.IsConflict, "IsConflict");
        }

        static async Task SubmitRetriesUnavailable()
        {
            var board = await NewBoard("sum");
            var flaky = new FlakyHandler();
            flaky.Canned.Enqueue(FlakyHandler.Error(503, "unavailable"));
            flaky.Canned.Enqueue(FlakyHandler.Error(503, "outcome_unknown"));
            var fast = new RetryPolicy { MinDelay = TimeSpan.FromMilliseconds(1), MaxDelay = TimeSpan.FromMilliseconds(5) };
            var c = new PodiumClient(server.Url, new PodiumClientOptions { Key = server.AdminKey, HttpClient = new HttpClient(flaky), Retry = fast });
            var s = await c.SubmitAsync(board, new Score("bob", 7));
            Equal(3, s.Attempts, "503 unavailable and outcome_unknown are retried for a keyed write");
            Check(!s.Replayed, "the third attempt was the first to reach podium");
            Check(flaky.IdempotencyKeys.Distinct().Count() == 1, "one key on every attempt");

            // A session issue (not keyed for retries) is not retried after outcome_unknown.
            flaky.Canned.Enqueue(FlakyHandler.Error(503, "outcome_unknown"));
            var e = await Throws(() => c.IssueSessionAsync("bob", "phone"), "issue after outcome_unknown");
            Equal("outcome_unknown", e.Code, "code");
            Check(e.IsOutcomeUnknown, "IsOutcomeUnknown");

            // Retries are bounded: four 503s end the call with the last.
            for (int i = 0; i < 4; i++) flaky.Canned.Enqueue(FlakyHandler.Error(503, "unavailable", 0));
            int before = flaky.Sent;
            e = await Throws(() => c.TopAsync(board), "four 503s");
            Equal(503, e.Status, "status");
            Equal(4, flaky.Sent - before, "attempts");
        }

        static async Task Errors()
        {
            var board = await NewBoard();
            var e = await Throws(() => admin.GetBoardAsync("no-such-board"), "unknown board");
            Equal(404, e.Status, "status");
            Equal("board_not_found", e.Code, "code");
            Check(e.IsNotFound, "IsNotFound");
            e = await Throws(() => admin.EntryAsync(board, "nobody"), "no entry");
            Equal("entry_not_found", e.Code, "code");
            e = await Throws(() => admin.SubmitAsync(board, new Score("alice", 1, 2)), "two keys on a one-key board");
            Equal(400, e.Status, "status");
            Equal("invalid_argument", e.Code, "code");
            Check(e.ServerMessage.Length > 0, "the server's message");
            var bad = new PodiumClient(server.Url, new PodiumClientOptions { Key = "not-a-key" });
            e = await Throws(() => bad.TopAsync(board), "an unknown key");
            Equal(401, e.Status, "status");
            Equal("unauthenticated", e.Code, "code");
            var readKey = await admin.CreateKeyAsync("reader", new[] { "read" });
            var reader = admin.WithKey(readKey.Key);
            e = await Throws(() => reader.SubmitAsync(board, new Score("alice", 1)), "a read key submitting");
            Equal(403, e.Status, "status");
            Equal("forbidden", e.Code, "code");
            e = await Throws(() => admin.TopAsync(board, 0, 5000), "limit out of range");
            Equal("invalid_argument", e.Code, "code");
        }

        static async Task Sessions()
        {
            var board = await NewBoard("best", playerSubmit: true);
            var login = await admin.CreateKeyAsync("login", new[] { "sessions" });
            var loginClient = admin.WithKey(login.Key);
            var ses = await loginClient.IssueSessionAsync("alice", "Alice's phone", 3600);
            Check(ses.Token.StartsWith("pds_") && ses.Id.StartsWith("ses_") && ses.Player == "alice", "issued: " + ses.Token + " " + ses.Id);
            Check(ses.ExpiresAt > DateTime.UtcNow, "expires later");

            var game = new PodiumClient(server.Url, new PodiumClientOptions { Key = ses.Token });
            var s = await game.SubmitAsync(board, new Score("alice", 30000));
            Equal(1, s.Entry.Rank, "a session submits as its player");
            var e = await Throws(() => game.SubmitAsync(board, new Score("bob", 1)), "as another player");
            Equal(403, e.Status, "status");
            Equal("forbidden", e.Code, "code");
            var other = await NewBoard();
            e = await Throws(() => game.SubmitAsync(other, new Score("alice", 1)), "to a board without player_submit");
            Equal(403, e.Status, "status");
            Equal(1, (await game.TopAsync(board)).Entries.Count, "a session reads a public board");

            var list = await game.ListSessionsAsync("alice");
            Equal(1, list.Count, "sessions listed");
            Check(list[0].Token == null, "a list shows no token");

            var fresh = await game.RefreshSessionAsync("alice", ses.Id);
            Check(fresh.Token != ses.Token && fresh.Token.StartsWith("pds_"), "a new token");
            e = await Throws(() => game.TopAsync(board), "the old token after a refresh");
            Equal(401, e.Status, "status");
            var game2 = game.WithKey(fresh.Token);
            Equal(1, (await game2.TopAsync(board)).Entries.Count, "the new token works");

            await loginClient.IssueSessionAsync("alice", "tablet");
            Equal(2, await game2.RevokeSessionsAsync("alice"), "log out everywhere");
            e = await Throws(() => game2.TopAsync(board), "a revoked token");
            Equal("unauthenticated", e.Code, "code");

            // A repeated Idempotency-Key on issue is 409: the token is never shown twice.
            var key = RetryPolicy.NewIdempotencyKey();
            await loginClient.IssueSessionAsync("carol", "pc", 0, key);
            e = await Throws(() => loginClient.IssueSessionAsync("carol", "pc", 0, key), "a repeated issue");
            Equal(409, e.Status, "status");
            var carol = await loginClient.ListSessionsAsync("carol");
            await loginClient.RevokeSessionAsync("carol", carol[0].Id);
            e = await Throws(() => loginClient.RevokeSessionAsync("carol", carol[0].Id), "revoking again");
            Equal(404, e.Status, "status");
        }

        static async Task Evidence()
        {
            var board = await NewBoard();
            var s = await admin.SubmitAsync(board, new Score("alice", 41234));
            var events = new[]
            {
                JsonValue.Object().Set("t", JsonValue.From(0)).Set("op", JsonValue.From("start")).Set("seed", JsonValue.From(42)),
                JsonValue.Object().Set("t", JsonValue.From(1200)).Set("op", JsonValue.From("click")),
                JsonValue.Object().Set("t", JsonValue.From(41234)).Set("op", JsonValue.From("win")),
            };
            var gz = EvidenceFile.FromEvents(events);
            var ev = await admin.UploadEvidenceAsync(board, "alice", s.Seq, gz);
            Equal(s.Seq, ev.Seq, "seq");
            Equal(3, ev.Events, "events");
            Check(!ev.Reused, "first upload");
            string content, compressed;
            EvidenceFile.Hashes(gz, out content, out compressed);
            Equal(content, ev.ContentSha256, "content hash");
            Equal(compressed, ev.CompressedSha256, "compressed hash");
            var again = await admin.UploadEvidenceAsync(board, "alice", s.Seq, gz);
            Check(again.Reused, "the same upload again is reused");
            var back = await admin.DownloadEvidenceAsync(board, "alice", s.Seq);
            Check(back.SequenceEqual(gz), "download gives the bytes uploaded");
            var other = EvidenceFile.FromEvents(new[] { JsonValue.Object().Set("op", JsonValue.From("other")) });
            var e = await Throws(() => admin.UploadEvidenceAsync(board, "alice", s.Seq, other), "other content for the seq");
            Equal(409, e.Status, "status");
            e = await Throws(() => admin.UploadEvidenceAsync(board, "alice", s.Seq + 1000, gz), "an unknown seq");
            Equal("entry_not_found", e.Code, "code");
            var notJsonLines = EvidenceFile.Gzip(Encoding.UTF8.GetBytes("not json\n"));
            var s2 = await admin.SubmitAsync(board, new Score("bob", 50000));
            e = await Throws(() => admin.UploadEvidenceAsync(board, "bob", s2.Seq, notJsonLines), "lines that are not JSON");
            Equal(422, e.Status, "status");
        }

        static async Task HeldSubmission()
        {
            // A board that holds every submission for review answers 202 with a
            // review id and no rank; its evidence goes to the review item.
            var board = await NewBoard();
            await admin.PutBoardAsync(board, JsonValue.Object().Set("review", JsonValue.Object().Set("hold", JsonValue.From("all"))));
            var s = await admin.SubmitAsync(board, new Score("alice", 41234));
            Check(s.Held && s.Status == "pending", "held: " + s.Raw);
            Check(s.ReviewId.StartsWith("rv_") && s.EvidenceUrl.Contains(s.ReviewId), "a review id and an evidence URL");
            Check(await admin.TryEntryAsync(board, "alice") == null, "not ranked while held");
            var gz = EvidenceFile.FromEvents(new[] { JsonValue.Object().Set("op", JsonValue.From("win")) });
            var ev = await admin.UploadReviewEvidenceAsync(board, "alice", s.ReviewId, gz);
            Equal(s.ReviewId, ev.Review, "the evidence is the review item's");
            Equal(0L, ev.Seq, "no seq yet");
        }

        // ---- live ----

        /// <summary>A subscriber wired to a Signal, with what it saw.</summary>
        sealed class Watcher : IDisposable
        {
            public readonly LiveBoard Live;
            public readonly Signal Signal = new Signal();
            public readonly List<LiveUpdate> Updates = new List<LiveUpdate>();
            public readonly List<LiveStatus> Statuses = new List<LiveStatus>();
            private LiveState seen;

            /// <summary>The state the last Updated handed over (Live.State is set just before it is raised).</summary>
            public LiveState Seen
            {
                get { lock (Updates) return seen; }
                private set { seen = value; }
            }

            public Watcher(PodiumClient c, string board, int limit)
            {
                Live = c.Watch(board, new WatchOptions
                {
                    Limit = limit, MinDelay = TimeSpan.FromMilliseconds(20), MaxDelay = TimeSpan.FromMilliseconds(200),
                });
                Live.Updated += (st, u) => { lock (Updates) { Updates.Add(u); Seen = st; } Signal.Pulse(); };
                Live.StatusChanged += s => { lock (Statuses) Statuses.Add(s); Signal.Pulse(); };
                Live.Start();
            }

            public int Count(string type) { lock (Updates) return Updates.Count(u => u.Type == type); }
            public bool Saw(LiveConnection c) { lock (Statuses) return Statuses.Any(s => s.State == c); }

            public string Top()
            {
                var st = Seen;
                return st == null ? "" : string.Join(",", st.Entries.Select(e => e.Rank + ":" + e.Player + "=" + e.Keys[0]));
            }

            public void Dispose() { Live.Stop(); }
        }

        static string TopOf(Page p) { return string.Join(",", p.Entries.Select(e => e.Rank + ":" + e.Player + "=" + e.Keys[0])); }

        /// <summary>Waits until the subscriber's window equals the REST top (the same seq).</summary>
        static async Task Converge(Watcher w, string board, int limit, string what)
        {
            var want = await admin.TopAsync(board, 0, limit);
            w.Signal.WaitFor(() => w.Seen != null && w.Seen.Seq >= want.Seq, what + " (seq " + want.Seq + ", have " + (w.Seen == null ? "none" : w.Seen.Seq.ToString()) + ")");
            Equal(TopOf(want), w.Top(), what);
            Equal(want.Total, w.Seen.Total, what + ": total");
        }

        static async Task LiveDeltas()
        {
            var board = await NewBoard();
            await admin.SubmitAsync(board, new Score("a", 500));
            using (var w = new Watcher(admin, board, 3))
            {
                w.Signal.WaitFor(() => w.Seen != null, "the first snapshot");
                Check(w.Updates[0].Initial && w.Updates[0].Type == "snapshot", "a snapshot first");
                Equal(LiveConnection.Live, w.Live.Status.State, "live");
                await admin.SubmitAsync(board, new Score("b", 400));
                await admin.SubmitAsync(board, new Score("c", 600));
                await admin.SubmitAsync(board, new Score("d", 700)); // outside the top 3
                await admin.SubmitAsync(board, new Score("e", 100)); // new leader: pushes c out
                await Converge(w, board, 3, "the window follows the submissions");
                Check(w.Count("delta") > 0, "deltas were applied");
                Equal(5, w.Seen.Total, "total counts every entry");
                Equal(1, w.Seen.Find("e").Rank, "Find");
                Check(w.Seen.Find("c") == null, "c left the window");
            }
        }

        static async Task LiveSurvivesCut()
        {
            var board = await NewBoard();
            await admin.SubmitAsync(board, new Score("a", 500));
            using (var proxy = new Proxy(() => server.Port))
            using (var w = new Watcher(new PodiumClient(proxy.Url), board, 5))
            // Another viewer keeps the window running while w is away (a window
            // nobody watches is not advanced, and a resume from it gets a snapshot).
            using (var viewer = new Watcher(admin, board, 5))
            {
                proxy.OnEvent = w.Signal.Pulse;
                w.Signal.WaitFor(() => w.Seen != null, "the first snapshot");
                viewer.Signal.WaitFor(() => viewer.Seen != null, "the viewer's first snapshot");
                await admin.SubmitAsync(board, new Score("b", 400));
                await Converge(w, board, 5, "before the cut");
                int snapshots = w.Count("snapshot");
                string before = w.Seen.EventId;
                proxy.Hold();
                proxy.CutAll();
                w.Signal.WaitFor(() => proxy.Accepted >= 2, "the subscriber to reconnect");
                await admin.SubmitAsync(board, new Score("c", 300)); // missed while away
                await admin.SubmitAsync(board, new Score("a", 250));
                await Converge(viewer, board, 5, "the viewer before the resume");
                proxy.Release();
                await Converge(w, board, 5, "after the cut");
                string head;
                lock (proxy.Requests) head = proxy.Requests[proxy.Requests.Count - 1];
                Check(head.Contains("Last-Event-ID: " + before + "\r\n"), "resumed with Last-Event-ID " + before + ":\n" + head);
                Equal(snapshots, w.Count("snapshot"), "resumed: only the missed deltas, no new snapshot");
                Check(w.Saw(LiveConnection.Reconnecting), "it said it was reconnecting");
                await admin.SubmitAsync(board, new Score("d", 200));
                await Converge(w, board, 5, "live again");
            }
        }

        static async Task LiveSurvivesRestart()
        {
            var board = await NewBoard();
            await admin.SubmitAsync(board, new Score("a", 500));
            using (var w = new Watcher(new PodiumClient(server.Url), board, 5))
            {
                w.Signal.WaitFor(() => w.Seen != null, "the first snapshot");
                await admin.SubmitAsync(board, new Score("b", 400));
                await Converge(w, board, 5, "before the restart");
                int snapshots = w.Count("snapshot");
                server.Kill(); // kill -9: no goodbye on the stream
                w.Signal.WaitFor(() => w.Saw(LiveConnection.Reconnecting), "reconnecting after the kill");
                server.Start(server.Port);
                await admin.SubmitAsync(board, new Score("c", 300));
                await Converge(w, board, 5, "after the restart");
                Check(w.Count("snapshot") > snapshots, "a new server cannot resume the old chain: a fresh snapshot");
                Check(w.Live.Status.State == LiveConnection.Live, "live again");
                await admin.SubmitAsync(board, new Score("d", 200));
                await Converge(w, board, 5, "deltas after the restart");
            }
        }

        static string Sse(string type, string id, string data)
        {
            return "event: " + type + "\nid: " + id + "\ndata: " + data + "\n\n";
        }

        static string Snap(long sid, long seq, string entries)
        {
            return Sse("snapshot", sid + "." + seq, "{\"type\":\"snapshot\",\"board\":\"b\",\"title\":\"B\",\"keys\":[{\"name\":\"k\",\"order\":\"asc\"}],"
                + "\"period\":\"all\",\"next_reset\":null,\"seq\":" + seq + ",\"snapshot_id\":" + sid + ",\"limit\":3,\"total\":3,\"entries\":[" + entries + "]}");
        }

        static string Delta(long sid, long prev, long seq, string changes, string removed = "")
        {
            return Sse("delta", sid + "." + seq, "{\"type\":\"delta\",\"board\":\"b\",\"period\":\"all\",\"seq\":" + seq + ",\"prev_seq\":" + prev
                + ",\"snapshot_id\":" + sid + ",\"total\":3,\"changes\":[" + changes + "],\"removed\":[" + removed + "]}");
        }

        static string E(int rank, string player, long k, int? prev = null)
        {
            return "{\"rank\":" + rank + (prev.HasValue ? ",\"prev_rank\":" + prev.Value : "") + ",\"player\":\"" + player + "\",\"name\":\"" + player
                + "\",\"keys\":[" + k + "],\"at\":\"2026-12-01T10:00:00.000Z\",\"meta\":{}}";
        }

        static async Task LiveGapResync()
        {
            // Scripted streams: a resume after the stream ends (Last-Event-ID of the
            // last applied event), then a delta that does not follow (a gap): the
            // subscriber drops continuity and starts over without Last-Event-ID.
            var script = new ScriptedStream();
            script.Bodies.Enqueue(": ping\n\n" + Snap(7, 10, E(1, "a", 10) + "," + E(2, "b", 20)) + Delta(7, 10, 11, E(1, "c", 5) + "," + E(2, "a", 10, 1) + "," + E(3, "b", 20, 2)));
            script.Bodies.Enqueue(Delta(7, 11, 12, E(3, "d", 15), "{\"player\":\"b\",\"prev_rank\":3}") + Delta(7, 14, 15, E(1, "x", 1)));
            script.Bodies.Enqueue(Snap(8, 15, E(1, "x", 1) + "," + E(2, "c", 5) + "," + E(3, "a", 10)));
            var c = new PodiumClient("http://podium.invalid", new PodiumClientOptions { HttpClient = new HttpClient(script) });
            using (var w = new Watcher(c, "b", 3))
            {
                script.OnRequest = w.Signal.Pulse;
                w.Signal.WaitFor(() => w.Seen != null && w.Seen.SnapshotId == 8, "the snapshot after the gap");
                w.Signal.WaitFor(() => { lock (script.LastEventIds) return script.LastEventIds.Count >= 4; }, "the connection after the snapshot");
                string ids;
                lock (script.LastEventIds) ids = string.Join("|", script.LastEventIds.Select(x => x ?? "-"));
                Equal("-|7.11|-|8.15", ids, "Last-Event-ID of each connection");
                string types;
                lock (w.Updates) types = string.Join(",", w.Updates.Select(u => u.Type));
                Equal("snapshot,delta,delta,snapshot", types, "updates");
                Equal("1:x=1,2:c=5,3:a=10", w.Top(), "the state after the resync");
                LiveUpdate afterGap, resumed;
                lock (w.Updates) { resumed = w.Updates[2]; afterGap = w.Updates[3]; }
                Equal("d:3", string.Join(",", resumed.Changed.Select(x => x.Entry.Player + ":" + x.Entry.Rank)), "the delta after the resume");
                Equal("b:3", string.Join(",", resumed.Left.Select(x => x.Player + ":" + x.PrevRank)), "left");
                Equal("x:1,c:2,a:3", string.Join(",", afterGap.Changed.Select(x => x.Entry.Player + ":" + x.Entry.Rank)), "a snapshot after a gap is compared with the state before");
                Equal("d:3", string.Join(",", afterGap.Left.Select(x => x.Player + ":" + x.PrevRank)), "left meanwhile");
            }
            await Task.FromResult(0);
        }

        static async Task LiveOnContext()
        {
            // Started on a thread with a SynchronizationContext (Unity's main thread),
            // the subscriber raises its events there.
            var board = await NewBoard();
            await admin.SubmitAsync(board, new Score("a", 500));
            using (var ctx = new OneThreadContext())
            {
                var signal = new Signal();
                var threads = new List<int>();
                LiveBoard live = null;
                ctx.Post(_ =>
                {
                    live = admin.Watch(board, new WatchOptions { Limit = 3 });
                    live.Updated += (st, u) => { lock (threads) threads.Add(Thread.CurrentThread.ManagedThreadId); signal.Pulse(); };
                    live.StatusChanged += st => { lock (threads) threads.Add(Thread.CurrentThread.ManagedThreadId); signal.Pulse(); };
                    live.Start();
                }, null);
                signal.WaitFor(() => live != null && live.State != null, "the first snapshot");
                await admin.SubmitAsync(board, new Score("b", 400));
                signal.WaitFor(() => live.State.Seq >= 2, "a delta");
                live.Stop();
                signal.WaitFor(() => live.Status.State == LiveConnection.Stopped, "stopped");
                await live.Completion;
                lock (threads) Check(threads.Count >= 3 && threads.All(t => t == ctx.Thread.ManagedThreadId), "every event on the context's thread");
            }
        }

        static async Task LiveIdleTimeout()
        {
            // A connection that sends nothing, not even pings, is dropped and reopened.
            var script = new ScriptedStream();
            script.Bodies.Enqueue(Snap(1, 1, E(1, "a", 10)));
            var c = new PodiumClient("http://podium.invalid", new PodiumClientOptions { HttpClient = new HttpClient(script) });
            var signal = new Signal();
            var statuses = new List<LiveStatus>();
            var live = c.Watch("b", new WatchOptions { Limit = 3, IdleTimeout = TimeSpan.FromMilliseconds(100), MinDelay = TimeSpan.FromMilliseconds(1), MaxDelay = TimeSpan.FromMilliseconds(5) });
            live.StatusChanged += st => { lock (statuses) statuses.Add(st); signal.Pulse(); };
            script.OnRequest = signal.Pulse;
            live.Start();
            try
            {
                signal.WaitFor(() => { lock (statuses) return statuses.Any(st => st.Error is TimeoutException); }, "a reconnect after the silence");
                signal.WaitFor(() => { lock (script.LastEventIds) return script.LastEventIds.Count >= 3; }, "a third connection");
                lock (script.LastEventIds) Equal("1.1", script.LastEventIds[2], "each reconnect resumes");
            }
            finally
            {
                live.Stop();
            }
            await live.Completion;

            // The same on a real connection (podium pings every 15 s; this subscriber
            // waits 300 ms): the read blocked in HttpClient's stream must end too.
            var board = await NewBoard();
            await admin.SubmitAsync(board, new Score("a", 1));
            statuses.Clear();
            var real = admin.Watch(board, new WatchOptions { IdleTimeout = TimeSpan.FromMilliseconds(300), MinDelay = TimeSpan.FromMilliseconds(1), MaxDelay = TimeSpan.FromMilliseconds(5) });
            real.StatusChanged += st => { lock (statuses) statuses.Add(st); signal.Pulse(); };
            real.Start();
            try
            {
                signal.WaitFor(() => { lock (statuses) return statuses.Any(st => st.Error is TimeoutException); }, "a real connection dropped for silence");
            }
            finally
            {
                real.Stop();
            }
            await real.Completion;
        }

        static async Task LiveBoardDeleted()
        {
            var board = await NewBoard();
            await admin.SubmitAsync(board, new Score("a", 500));
            using (var w = new Watcher(admin, board, 5))
            {
                w.Signal.WaitFor(() => w.Seen != null, "the first snapshot");
                await admin.SendAsync("DELETE", PodiumClient.PathOf("boards", board));
                w.Signal.WaitFor(() => w.Saw(LiveConnection.Failed), "failed after the board was deleted");
                var e = await Throws(() => w.Live.Completion, "Completion");
                Equal("board_not_found", e.Code, "code");
            }
        }

        static async Task LiveUnknownBoard()
        {
            var w = new PodiumClient(server.Url).Watch("no-such-board").Start();
            var e = await Throws(() => w.Completion, "an unknown board");
            Equal(404, e.Status, "status");
            Equal("board_not_found", e.Code, "code");
            Equal(LiveConnection.Failed, w.Status.State, "status");
        }
    }
}
