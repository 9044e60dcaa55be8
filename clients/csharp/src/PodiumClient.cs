// PodiumClient: Task-based calls of podium's game-facing HTTP API
// (docs/API.md), with retries that are safe: a submission carries an
// Idempotency-Key that every retry of it reuses, so a lost answer or a 503
// never applies it twice.

using System;
using System.Collections.Generic;
using System.Globalization;
using System.IO;
using System.Net;
using System.Net.Http;
using System.Net.Http.Headers;
using System.Text;
using System.Threading;
using System.Threading.Tasks;

namespace Podium
{
    /// <summary>Settings of a <see cref="PodiumClient"/>. Unset fields take the defaults.</summary>
    public sealed class PodiumClientOptions
    {
        /// <summary>An API key or a player session token (pds_...), sent as "Authorization: Bearer".</summary>
        public string Key;
        /// <summary>
        /// The HttpClient to send with (default: one of the client's own). Give it
        /// Timeout = Timeout.InfiniteTimeSpan: calls are bounded by RequestTimeout, and a
        /// live stream must stay open far longer than HttpClient's default 100 s.
        /// </summary>
        public HttpClient HttpClient;
        /// <summary>The User-Agent header (default "podium-csharp/&lt;Version&gt;").</summary>
        public string UserAgent;
        /// <summary>The retry policy (default <see cref="RetryPolicy.Default"/>).</summary>
        public RetryPolicy Retry;
        /// <summary>How long one attempt may take, answer included (default 30 s); a timeout is retried as a network error.</summary>
        public TimeSpan RequestTimeout = TimeSpan.FromSeconds(30);
    }

    /// <summary>Which period and players a read sees; null fields are the server's defaults.</summary>
    public sealed class ReadOptions
    {
        /// <summary>"current" (default), "previous", or a period id.</summary>
        public string Period;
        /// <summary>Admin reads only: hidden players too.</summary>
        public bool IncludeHidden;
    }

    /// <summary>
    /// A client of one podium server. It is safe for concurrent use; make one and
    /// keep it (it holds an HttpClient). Every call may throw
    /// <see cref="PodiumException"/> (the server's error code in Code),
    /// <see cref="HttpRequestException"/> or <see cref="IOException"/> when no
    /// answer came after the retries, and <see cref="OperationCanceledException"/>
    /// when its token is cancelled.
    /// </summary>
    public sealed class PodiumClient : IDisposable
    {
        /// <summary>This client's version, sent in the default User-Agent.</summary>
        public const string Version = "0.1.0";

        private const int MaxAnswer = 64 << 20;

        private readonly string baseUrl;
        private readonly string key;
        private readonly HttpClient http;
        private readonly bool ownsHttp;
        private readonly string userAgent;
        private readonly RetryPolicy retry;
        private readonly TimeSpan timeout;

        /// <summary>A client of the server at baseUrl ("https://podium.example"; a path prefix is kept).</summary>
        public PodiumClient(string baseUrl, PodiumClientOptions options = null)
        {
            if (string.IsNullOrEmpty(baseUrl)) throw new ArgumentException("baseUrl is required", "baseUrl");
            options = options ?? new PodiumClientOptions();
            this.baseUrl = baseUrl.TrimEnd('/');
            key = options.Key;
            userAgent = options.UserAgent ?? "podium-csharp/" + Version;
            retry = options.Retry ?? RetryPolicy.Default;
            timeout = options.RequestTimeout > TimeSpan.Zero ? options.RequestTimeout : TimeSpan.FromSeconds(30);
            if (options.HttpClient != null)
            {
                http = options.HttpClient;
            }
            else
            {
                http = new HttpClient();
                http.Timeout = Timeout.InfiniteTimeSpan; // calls are bounded by RequestTimeout, streams by their idle timeout
                ownsHttp = true;
            }
        }

        private PodiumClient(PodiumClient c, string key)
        {
            baseUrl = c.baseUrl;
            this.key = key;
            http = c.http;
            userAgent = c.userAgent;
            retry = c.retry;
            timeout = c.timeout;
        }

        /// <summary>
        /// A client that authenticates with another key or a session token, sharing this
        /// one's HttpClient (so it works while this one is not disposed; disposing it is a no-op).
        /// </summary>
        public PodiumClient WithKey(string key) { return new PodiumClient(this, key); }

        /// <summary>The server's base URL.</summary>
        public string BaseUrl { get { return baseUrl; } }

        internal string Key { get { return key; } }
        internal HttpClient Http { get { return http; } }
        internal string UserAgent { get { return userAgent; } }

        /// <summary>Disposes the HttpClient if the client made it.</summary>
        public void Dispose()
        {
            if (ownsHttp) http.Dispose();
        }

        // ---- boards and scores ----

        /// <summary>Reads a board's definition (404 board_not_found).</summary>
        public async Task<Board> GetBoardAsync(string board, CancellationToken ct = default(CancellationToken))
        {
            var a = await CallAsync(new Request("GET", PathOf("boards", board), RequestKind.Read), ct).ConfigureAwait(false);
            return Board.From(a.Body);
        }

        /// <summary>
        /// Creates or updates a board (admin): spec is the body of PUT /v1/boards/{board},
        /// e.g. {"title", "keys": [{"name", "order"}], "public": true}.
        /// </summary>
        public async Task<Board> PutBoardAsync(string board, JsonValue spec, CancellationToken ct = default(CancellationToken))
        {
            var a = await CallAsync(new Request("PUT", PathOf("boards", board), RequestKind.Idempotent) { Body = spec }, ct).ConfigureAwait(false);
            return Board.From(a.Body);
        }

        /// <summary>
        /// Submits one score (submit scope, or the player's own session on a board with
        /// player_submit). It carries an Idempotency-Key (idempotencyKey, or a new random
        /// one) that its retries reuse: after a network error, 429, 503 unavailable and
        /// 503 outcome_unknown it is sent again unchanged, and the server answers a
        /// repeat from the first attempt (Submitted.Replayed). Keep the key
        /// (Submitted.IdempotencyKey, or one of <see cref="RetryPolicy.NewIdempotencyKey"/>)
        /// to retry later, after a restart of the game, without applying it twice.
        /// Errors: 404 board_not_found, 400 invalid_argument (key count, player id),
        /// 403 forbidden, 409 conflict (the key reused with another body),
        /// 422 unprocessable (outside a key's bounds, a sum out of range), 429 quota_exceeded.
        /// A board that holds submissions for review answers with Held true and no rank.
        /// </summary>
        public async Task<Submitted> SubmitAsync(string board, Score score, string idempotencyKey = null, CancellationToken ct = default(CancellationToken))
        {
            var body = score.ToJson();
            var req = new Request("POST", PathOf("boards", board, "scores"), RequestKind.Keyed) { Body = body, IdempotencyKey = idempotencyKey };
            var a = await CallAsync(req, ct).ConfigureAwait(false);
            var s = Submitted.From(a.Body);
            s.Replayed = a.Replayed;
            s.Reconstructed = s.Reconstructed || a.Reconstructed;
            s.IdempotencyKey = a.IdempotencyKey;
            s.Attempts = a.Attempts;
            return s;
        }

        /// <summary>
        /// Reads a page of the ranking: ranks offset+1 to offset+limit (limit 1 to 1,000).
        /// Page.Total counts every entry, for paging.
        /// </summary>
        public async Task<Page> TopAsync(string board, int offset = 0, int limit = 10, ReadOptions opts = null, CancellationToken ct = default(CancellationToken))
        {
            var q = Query(opts);
            q.Add(new KeyValuePair<string, string>("offset", offset.ToString(CultureInfo.InvariantCulture)));
            q.Add(new KeyValuePair<string, string>("limit", limit.ToString(CultureInfo.InvariantCulture)));
            var a = await CallAsync(new Request("GET", PathOf("boards", board, "entries"), RequestKind.Read) { Query = q }, ct).ConfigureAwait(false);
            return Page.From(a.Body);
        }

        /// <summary>Reads the entries of some players (at most 1,000) in board order, each with its rank; players without an entry are left out.</summary>
        public async Task<Page> PlayersAsync(string board, IEnumerable<string> players, ReadOptions opts = null, CancellationToken ct = default(CancellationToken))
        {
            var q = Query(opts);
            q.Add(new KeyValuePair<string, string>("players", string.Join(",", players)));
            var a = await CallAsync(new Request("GET", PathOf("boards", board, "entries"), RequestKind.Read) { Query = q }, ct).ConfigureAwait(false);
            return Page.From(a.Body);
        }

        /// <summary>Reads one player's entry and rank (404 entry_not_found when it has none).</summary>
        public async Task<PlayerEntry> EntryAsync(string board, string player, ReadOptions opts = null, CancellationToken ct = default(CancellationToken))
        {
            var a = await CallAsync(new Request("GET", PathOf("boards", board, "entries", player), RequestKind.Read) { Query = Query(opts) }, ct).ConfigureAwait(false);
            return PlayerEntry.From(a.Body);
        }

        /// <summary>
        /// Like <see cref="EntryAsync"/>, but answers null instead of throwing when the
        /// player has no entry: the player's rank, or none yet.
        /// </summary>
        public async Task<PlayerEntry> TryEntryAsync(string board, string player, ReadOptions opts = null, CancellationToken ct = default(CancellationToken))
        {
            try
            {
                return await EntryAsync(board, player, opts, ct).ConfigureAwait(false);
            }
            catch (PodiumException e)
            {
                if (e.Code == "entry_not_found") return null;
                throw;
            }
        }

        /// <summary>Reads the entries from the player's rank-radius to rank+radius (radius 0 to 500).</summary>
        public async Task<Page> AroundAsync(string board, string player, int radius = 5, ReadOptions opts = null, CancellationToken ct = default(CancellationToken))
        {
            var q = Query(opts);
            q.Add(new KeyValuePair<string, string>("radius", radius.ToString(CultureInfo.InvariantCulture)));
            var a = await CallAsync(new Request("GET", PathOf("boards", board, "entries", player, "around"), RequestKind.Read) { Query = q }, ct).ConfigureAwait(false);
            return Page.From(a.Body);
        }

        // ---- player sessions ----

        /// <summary>
        /// Issues a session for player (a key with the sessions scope: the game's login
        /// service, never the game itself). The answer's Token is shown only here: hand
        /// it to the player's game, which makes its client with <see cref="WithKey"/>.
        /// ttlSeconds 0 is the server's default. A repeated Idempotency-Key is 409
        /// conflict (the token cannot be shown again), so this is not retried after a
        /// network error.
        /// </summary>
        public async Task<Session> IssueSessionAsync(string player, string device, long ttlSeconds = 0, string idempotencyKey = null, CancellationToken ct = default(CancellationToken))
        {
            var body = JsonValue.Object().Set("device", JsonValue.From(device));
            if (ttlSeconds > 0) body.Set("ttl_seconds", JsonValue.From(ttlSeconds));
            var req = new Request("POST", PathOf("players", player, "sessions"), RequestKind.Once) { Body = body, IdempotencyKey = idempotencyKey ?? RetryPolicy.NewIdempotencyKey() };
            var a = await CallAsync(req, ct).ConfigureAwait(false);
            return Session.From(a.Body);
        }

        /// <summary>Lists a player's unexpired sessions, oldest first (without tokens).</summary>
        public async Task<List<Session>> ListSessionsAsync(string player, CancellationToken ct = default(CancellationToken))
        {
            var a = await CallAsync(new Request("GET", PathOf("players", player, "sessions"), RequestKind.Read), ct).ConfigureAwait(false);
            var l = new List<Session>();
            foreach (var s in a.Body["sessions"].Items) l.Add(Session.From(s));
            return l;
        }

        /// <summary>Gives a session a new token and a new TTL; the old token stops working (so never retried after a network error). 404 when expired or unknown.</summary>
        public async Task<Session> RefreshSessionAsync(string player, string sessionId, CancellationToken ct = default(CancellationToken))
        {
            var a = await CallAsync(new Request("POST", PathOf("players", player, "sessions", sessionId, "refresh"), RequestKind.Once), ct).ConfigureAwait(false);
            return Session.From(a.Body);
        }

        /// <summary>Ends one session (sign out a device); 404 not_found when the player has no such session.</summary>
        public async Task RevokeSessionAsync(string player, string sessionId, CancellationToken ct = default(CancellationToken))
        {
            await CallAsync(new Request("DELETE", PathOf("players", player, "sessions", sessionId), RequestKind.Idempotent), ct).ConfigureAwait(false);
        }

        /// <summary>Ends every session of the player (log out everywhere) and says how many.</summary>
        public async Task<int> RevokeSessionsAsync(string player, CancellationToken ct = default(CancellationToken))
        {
            var a = await CallAsync(new Request("DELETE", PathOf("players", player, "sessions"), RequestKind.Idempotent), ct).ConfigureAwait(false);
            return a.Body["revoked"].AsInt();
        }

        // ---- evidence ----

        /// <summary>
        /// Attaches evidence (one gzip member of JSON Lines, see <see cref="EvidenceFile"/>)
        /// to the player's submission seq (0: the player's current entry). The hashes are
        /// computed here. Uploading the same content again is harmless (Reused); other
        /// content for the same submission is 409. Errors: 404 entry_not_found,
        /// 413 too_large, 422 unprocessable (the file breaks a limit), 429 (budgets).
        /// </summary>
        public Task<Evidence> UploadEvidenceAsync(string board, string player, long seq, byte[] gzip, CancellationToken ct = default(CancellationToken))
        {
            var q = new List<KeyValuePair<string, string>>();
            if (seq > 0) q.Add(new KeyValuePair<string, string>("seq", seq.ToString(CultureInfo.InvariantCulture)));
            return UploadAsync(board, player, q, gzip, ct);
        }

        /// <summary>Attaches evidence to a held submission (its review id, Submitted.ReviewId), for the moderator.</summary>
        public Task<Evidence> UploadReviewEvidenceAsync(string board, string player, string reviewId, byte[] gzip, CancellationToken ct = default(CancellationToken))
        {
            var q = new List<KeyValuePair<string, string>> { new KeyValuePair<string, string>("review", reviewId) };
            return UploadAsync(board, player, q, gzip, ct);
        }

        private async Task<Evidence> UploadAsync(string board, string player, List<KeyValuePair<string, string>> q, byte[] gzip, CancellationToken ct)
        {
            string content, compressed;
            EvidenceFile.Hashes(gzip, out content, out compressed);
            q.Add(new KeyValuePair<string, string>("content_sha256", content));
            q.Add(new KeyValuePair<string, string>("compressed_sha256", compressed));
            var req = new Request("PUT", PathOf("boards", board, "entries", player, "evidence"), RequestKind.Idempotent)
            {
                Query = q, Raw = gzip, RawType = "application/gzip",
            };
            var a = await CallAsync(req, ct).ConfigureAwait(false);
            return Evidence.From(a.Body);
        }

        /// <summary>Downloads a submission's evidence as stored (gzip bytes); seq 0: the player's current entry.</summary>
        public async Task<byte[]> DownloadEvidenceAsync(string board, string player, long seq = 0, CancellationToken ct = default(CancellationToken))
        {
            var q = new List<KeyValuePair<string, string>>();
            if (seq > 0) q.Add(new KeyValuePair<string, string>("seq", seq.ToString(CultureInfo.InvariantCulture)));
            var a = await CallAsync(new Request("GET", PathOf("boards", board, "entries", player, "evidence"), RequestKind.Read) { Query = q, WantBytes = true }, ct).ConfigureAwait(false);
            return a.Bytes;
        }

        // ---- admin helpers a game server needs ----

        /// <summary>Creates an API key (admin): scopes read, submit, sessions, admin; boards limits it to id prefixes.</summary>
        public async Task<ApiKey> CreateKeyAsync(string name, IEnumerable<string> scopes, IEnumerable<string> boards = null, CancellationToken ct = default(CancellationToken))
        {
            var body = JsonValue.Object().Set("name", JsonValue.From(name)).Set("scopes", JsonValue.Array(scopes));
            if (boards != null) body.Set("boards", JsonValue.Array(boards));
            var a = await CallAsync(new Request("POST", "/v1/keys", RequestKind.Once) { Body = body }, ct).ConfigureAwait(false);
            return ApiKey.From(a.Body);
        }

        // ---- live ----

        /// <summary>
        /// A live subscriber of the board's top entries over Server-Sent Events; call
        /// Start on it (see <see cref="LiveBoard"/>).
        /// </summary>
        public LiveBoard Watch(string board, WatchOptions options = null)
        {
            return new LiveBoard(this, board, options);
        }

        // ---- any endpoint ----

        /// <summary>
        /// Sends a request to an endpoint that has no method here: path under the base URL
        /// ("/v1/...", already escaped, see <see cref="PathOf"/>), body sent as JSON when not
        /// null. GET is retried as a read, PUT and DELETE as idempotent writes, and POST only
        /// when the server says nothing was applied, unless idempotencyKey is set: then it is
        /// retried as a submission. Answers the body (Null for an empty one).
        /// </summary>
        public async Task<JsonValue> SendAsync(string method, string path, JsonValue body = null, string idempotencyKey = null, CancellationToken ct = default(CancellationToken))
        {
            var k = RequestKind.Once;
            if (method == "GET" || method == "HEAD") k = RequestKind.Read;
            else if (method == "PUT" || method == "DELETE") k = RequestKind.Idempotent;
            else if (idempotencyKey != null) k = RequestKind.Keyed;
            var a = await CallAsync(new Request(method, path, k) { Body = body, IdempotencyKey = idempotencyKey }, ct).ConfigureAwait(false);
            return a.Body;
        }

        /// <summary>"/v1/a/b": each segment escaped (ids may hold ':', '/', spaces and any Unicode).</summary>
        public static string PathOf(params string[] segments)
        {
            var sb = new StringBuilder("/v1");
            foreach (var s in segments)
            {
                if (string.IsNullOrEmpty(s)) throw new ArgumentException("an id in the path is empty");
                sb.Append('/').Append(Uri.EscapeDataString(s));
            }
            return sb.ToString();
        }

        // ---- the machinery ----

        internal sealed class Request
        {
            public readonly string Method;
            public readonly string Path;
            public readonly RequestKind Kind;
            public List<KeyValuePair<string, string>> Query;
            public JsonValue Body;
            public byte[] Raw;
            public string RawType;
            public string IdempotencyKey;
            public bool WantBytes;

            public Request(string method, string path, RequestKind kind) { Method = method; Path = path; Kind = kind; }
        }

        internal sealed class Answer
        {
            public int Status;
            public JsonValue Body = JsonValue.Null;
            public byte[] Bytes;
            public bool Replayed;
            public bool Reconstructed;
            public string IdempotencyKey;
            public int Attempts;
        }

        private static List<KeyValuePair<string, string>> Query(ReadOptions o)
        {
            var q = new List<KeyValuePair<string, string>>();
            if (o == null) return q;
            if (!string.IsNullOrEmpty(o.Period)) q.Add(new KeyValuePair<string, string>("period", o.Period));
            if (o.IncludeHidden) q.Add(new KeyValuePair<string, string>("include_hidden", "true"));
            return q;
        }

        internal string Url(string path, List<KeyValuePair<string, string>> query)
        {
            var sb = new StringBuilder(baseUrl).Append(path);
            if (query != null && query.Count > 0)
            {
                for (int i = 0; i < query.Count; i++)
                {
                    sb.Append(i == 0 ? '?' : '&').Append(Uri.EscapeDataString(query[i].Key)).Append('=').Append(Uri.EscapeDataString(query[i].Value));
                }
            }
            return sb.ToString();
        }

        internal void Authorize(HttpRequestMessage m)
        {
            if (!string.IsNullOrEmpty(key)) m.Headers.Authorization = new AuthenticationHeaderValue("Bearer", key);
            if (!string.IsNullOrEmpty(userAgent)) m.Headers.TryAddWithoutValidation("User-Agent", userAgent);
        }

        internal async Task<Answer> CallAsync(Request req, CancellationToken ct)
        {
            byte[] body = req.Raw;
            if (req.Body != null) body = Encoding.UTF8.GetBytes(req.Body.ToString());
            if (req.Kind == RequestKind.Keyed && string.IsNullOrEmpty(req.IdempotencyKey)) req.IdempotencyKey = RetryPolicy.NewIdempotencyKey();
            var url = Url(req.Path, req.Query);
            for (int attempt = 0; ; attempt++)
            {
                ct.ThrowIfCancellationRequested();
                PodiumException err = null;
                Exception netErr = null;
                try
                {
                    var a = await SendOnceAsync(req, url, body, ct).ConfigureAwait(false);
                    a.Attempts = attempt + 1;
                    a.IdempotencyKey = req.IdempotencyKey;
                    return a;
                }
                catch (PodiumException e) { err = e; }
                catch (OperationCanceledException) when (ct.IsCancellationRequested) { throw; }
                catch (PodiumProtocolException) { throw; }
                catch (Exception e) when (e is HttpRequestException || e is IOException || e is WebException || e is OperationCanceledException || e is ObjectDisposedException)
                {
                    netErr = e; // no answer (or our attempt's timeout): the request may or may not have been applied
                }
                TimeSpan wait;
                if (!retry.Next(req.Kind, attempt, err, out wait))
                {
                    if (err != null) throw err;
                    if (netErr is OperationCanceledException) throw new TimeoutException("podium: " + req.Method + " " + req.Path + " got no answer within " + timeout, netErr);
                    throw netErr;
                }
                await Task.Delay(wait, ct).ConfigureAwait(false);
            }
        }

        private async Task<Answer> SendOnceAsync(Request req, string url, byte[] body, CancellationToken ct)
        {
            using (var cts = CancellationTokenSource.CreateLinkedTokenSource(ct))
            {
                cts.CancelAfter(timeout);
                using (var m = new HttpRequestMessage(new HttpMethod(req.Method), url))
                {
                    Authorize(m);
                    m.Headers.Accept.ParseAdd("application/json");
                    m.Headers.ExpectContinue = false;
                    if (!string.IsNullOrEmpty(req.IdempotencyKey)) m.Headers.TryAddWithoutValidation("Idempotency-Key", req.IdempotencyKey);
                    if (body != null)
                    {
                        m.Content = new ByteArrayContent(body);
                        m.Content.Headers.ContentType = new MediaTypeHeaderValue(req.Raw != null ? req.RawType : "application/json");
                    }
                    using (var resp = await http.SendAsync(m, HttpCompletionOption.ResponseHeadersRead, cts.Token).ConfigureAwait(false))
                    {
                        byte[] bytes = await ReadAllAsync(resp, cts.Token).ConfigureAwait(false);
                        int status = (int)resp.StatusCode;
                        if (status >= 300)
                            throw PodiumException.FromAnswer(status, Encoding.UTF8.GetString(bytes), RetryAfterOf(resp));
                        var a = new Answer { Status = status, Replayed = HeaderIs(resp, "Idempotent-Replayed", "true"), Reconstructed = HeaderIs(resp, "Idempotent-Reconstructed", "true") };
                        if (req.WantBytes)
                        {
                            a.Bytes = bytes;
                        }
                        else if (bytes.Length > 0)
                        {
                            try
                            {
                                a.Body = JsonValue.Parse(Encoding.UTF8.GetString(bytes));
                            }
                            catch (FormatException e)
                            {
                                throw new PodiumProtocolException("podium: the answer of " + req.Method + " " + req.Path + " is not JSON", e);
                            }
                        }
                        return a;
                    }
                }
            }
        }

        private static async Task<byte[]> ReadAllAsync(HttpResponseMessage resp, CancellationToken ct)
        {
            if (resp.Content == null) return new byte[0];
            using (var s = await resp.Content.ReadAsStreamAsync().ConfigureAwait(false))
            using (ct.Register(() => s.Dispose()))
            {
                var ms = new MemoryStream();
                var buf = new byte[16384];
                while (true)
                {
                    int n;
                    try
                    {
                        n = await s.ReadAsync(buf, 0, buf.Length, ct).ConfigureAwait(false);
                    }
                    catch (ObjectDisposedException) when (ct.IsCancellationRequested)
                    {
                        throw new OperationCanceledException(ct);
                    }
                    if (n == 0) break;
                    if (ms.Length + n > MaxAnswer) throw new PodiumProtocolException("podium: an answer is over " + MaxAnswer + " bytes");
                    ms.Write(buf, 0, n);
                }
                return ms.ToArray();
            }
        }

        private static bool HeaderIs(HttpResponseMessage resp, string name, string value)
        {
            IEnumerable<string> vs;
            if (!resp.Headers.TryGetValues(name, out vs)) return false;
            foreach (var v in vs) if (v == value) return true;
            return false;
        }

        internal static TimeSpan? RetryAfterOf(HttpResponseMessage resp)
        {
            var ra = resp.Headers.RetryAfter;
            if (ra == null) return null;
            if (ra.Delta.HasValue) return ra.Delta.Value;
            if (ra.Date.HasValue)
            {
                var d = ra.Date.Value - DateTimeOffset.UtcNow;
                return d > TimeSpan.Zero ? d : TimeSpan.Zero;
            }
            return null;
        }
    }
}
