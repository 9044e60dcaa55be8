// What the tests stand on: a real podium process they start, stop and
// restart (PODIUM_BIN), a TCP proxy that can cut every connection through
// it, an HttpMessageHandler that loses answers or invents them, and waits
// that wake on events (a timeout is only a failure guard).

using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.IO;
using System.Net;
using System.Net.Http;
using System.Net.Sockets;
using System.Text;
using System.Threading;
using System.Threading.Tasks;

namespace Podium.Tests
{
    /// <summary>A podium server process on 127.0.0.1 with its own data directory.</summary>
    sealed class Server : IDisposable
    {
        public readonly string AdminKey = "admin-" + RetryPolicy.NewIdempotencyKey();
        public readonly string Data;
        public string Url { get; private set; }
        public int Port { get; private set; }
        private readonly string bin;
        private Process proc;
        private readonly StringBuilder log = new StringBuilder();

        public Server()
        {
            bin = Environment.GetEnvironmentVariable("PODIUM_BIN");
            if (string.IsNullOrEmpty(bin)) throw new InvalidOperationException("PODIUM_BIN is not set: the path of a podium binary (go build -o ... ./cmd/podium)");
            Data = Path.Combine(Path.GetTempPath(), "podium-cs-" + Guid.NewGuid().ToString("N"));
            Directory.CreateDirectory(Data);
        }

        public string Log { get { lock (log) return log.ToString(); } }

        /// <summary>Starts podium (port 0: any free port; else that port, for a restart) and returns once it logs that it is serving.</summary>
        public void Start(int port = 0)
        {
            var psi = new ProcessStartInfo(bin, "serve --addr 127.0.0.1:" + port + " --data " + Data + " --rate-submit off --rate-key off --rate-anon off")
            {
                UseShellExecute = false, RedirectStandardError = true, RedirectStandardOutput = true,
            };
            psi.EnvironmentVariables["PODIUM_ADMIN_KEY"] = AdminKey;
            var serving = new TaskCompletionSource<string>();
            var p = new Process { StartInfo = psi, EnableRaisingEvents = true };
            p.ErrorDataReceived += (s, e) =>
            {
                if (e.Data == null) { serving.TrySetException(new Exception("podium exited before serving:\n" + Log)); return; }
                lock (log) log.AppendLine(e.Data);
                int i = e.Data.IndexOf("msg=\"podium is serving\" url=", StringComparison.Ordinal);
                if (i >= 0)
                {
                    var rest = e.Data.Substring(i + "msg=\"podium is serving\" url=".Length);
                    serving.TrySetResult(rest.Split(' ')[0]);
                }
            };
            p.OutputDataReceived += (s, e) => { if (e.Data != null) lock (log) log.AppendLine(e.Data); };
            p.Start();
            p.BeginErrorReadLine();
            p.BeginOutputReadLine();
            proc = p;
            if (!serving.Task.Wait(TimeSpan.FromSeconds(60))) throw new TimeoutException("podium did not start within 60 s:\n" + Log);
            Url = serving.Task.Result;
            Port = new Uri(Url).Port;
        }

        /// <summary>Kills podium (SIGKILL: no clean shutdown) and waits for it to exit.</summary>
        public void Kill()
        {
            if (proc == null) return;
            try { proc.Kill(); } catch (InvalidOperationException) { }
            proc.WaitForExit();
            proc.Dispose();
            proc = null;
        }

        public void Dispose()
        {
            Kill();
            try { Directory.Delete(Data, true); } catch (IOException) { }
        }
    }

    /// <summary>A TCP proxy to a port on 127.0.0.1 that can cut every connection through it.</summary>
    sealed class Proxy : IDisposable
    {
        private readonly TcpListener listener;
        private readonly Func<int> upstreamPort;
        private readonly List<TcpClient> conns = new List<TcpClient>();
        private volatile TaskCompletionSource<bool> gate = Open();
        public int Accepted;
        /// <summary>The first bytes each connection sent (its request's head).</summary>
        public readonly List<string> Requests = new List<string>();
        /// <summary>Called when a connection is accepted, and when its request's head arrives.</summary>
        public Action OnEvent = () => { };

        private static TaskCompletionSource<bool> Open()
        {
            var t = new TaskCompletionSource<bool>();
            t.SetResult(true);
            return t;
        }

        /// <summary>New connections wait (accepted, not forwarded) until Release.</summary>
        public void Hold() { gate = new TaskCompletionSource<bool>(); }

        /// <summary>Forwards the connections held and those to come.</summary>
        public void Release() { gate.TrySetResult(true); }

        public Proxy(Func<int> upstreamPort)
        {
            this.upstreamPort = upstreamPort;
            listener = new TcpListener(IPAddress.Loopback, 0);
            listener.Start();
            Task.Run(AcceptLoop);
        }

        public string Url { get { return "http://127.0.0.1:" + ((IPEndPoint)listener.LocalEndpoint).Port; } }

        private async Task AcceptLoop()
        {
            while (true)
            {
                TcpClient c;
                try { c = await listener.AcceptTcpClientAsync(); }
                catch (Exception) { return; }
                Interlocked.Increment(ref Accepted);
                OnEvent();
                Forward(c);
            }
        }

        private async void Forward(TcpClient c)
        {
            var up = new TcpClient();
            try
            {
                await gate.Task;
                await up.ConnectAsync(IPAddress.Loopback, upstreamPort());
                lock (conns) { conns.Add(c); conns.Add(up); }
                // The pumps run on their own; each closes both ends when it stops.
                Task forward = Pump(c.GetStream(), up.GetStream(), c, up, this), back = Pump(up.GetStream(), c.GetStream(), c, up, null);
                GC.KeepAlive(forward);
                GC.KeepAlive(back);
            }
            catch (Exception)
            {
                c.Close();
                up.Close();
            }
        }

        private static async Task Pump(Stream from, Stream to, TcpClient x, TcpClient y, Proxy record)
        {
            var buf = new byte[16384];
            try
            {
                int n;
                while ((n = await from.ReadAsync(buf, 0, buf.Length)) > 0)
                {
                    if (record != null)
                    {
                        lock (record.Requests) record.Requests.Add(Encoding.ASCII.GetString(buf, 0, n));
                        record.OnEvent();
                        record = null;
                    }
                    await to.WriteAsync(buf, 0, n);
                    await to.FlushAsync();
                }
            }
            catch (Exception) { }
            x.Close();
            y.Close();
        }

        /// <summary>Closes every connection open through the proxy now.</summary>
        public void CutAll()
        {
            lock (conns)
            {
                foreach (var c in conns)
                {
                    try { c.Client.Shutdown(SocketShutdown.Both); } catch (Exception) { }
                    c.Close();
                }
                conns.Clear();
            }
        }

        public void Dispose()
        {
            listener.Stop();
            CutAll();
        }
    }

    /// <summary>
    /// Forwards requests to a real handler, and can lose the answers of the first
    /// requests (the request reaches podium, the answer never reaches the client)
    /// or answer some itself without forwarding them.
    /// </summary>
    sealed class FlakyHandler : DelegatingHandler
    {
        public int LoseAnswers;                 // answers to lose, counting down
        public Queue<HttpResponseMessage> Canned = new Queue<HttpResponseMessage>(); // answered before forwarding
        public readonly List<string> IdempotencyKeys = new List<string>();
        public int Sent;

        public FlakyHandler() : base(new HttpClientHandler()) { }

        protected override async Task<HttpResponseMessage> SendAsync(HttpRequestMessage request, CancellationToken ct)
        {
            IEnumerable<string> vs;
            lock (IdempotencyKeys)
            {
                Sent++;
                IdempotencyKeys.Add(request.Headers.TryGetValues("Idempotency-Key", out vs) ? string.Join(",", vs) : null);
            }
            HttpResponseMessage canned = null;
            lock (Canned) if (Canned.Count > 0) canned = Canned.Dequeue();
            if (canned != null) return canned;
            var resp = await base.SendAsync(request, ct);
            if (Interlocked.Decrement(ref LoseAnswers) >= 0)
            {
                await resp.Content.ReadAsByteArrayAsync(); // podium applied it and answered
                resp.Dispose();
                throw new HttpRequestException("test: the answer was lost");
            }
            return resp;
        }

        public static HttpResponseMessage Error(int status, string code, int retryAfterSeconds = 0)
        {
            var r = new HttpResponseMessage((HttpStatusCode)status)
            {
                Content = new StringContent("{\"error\":{\"code\":\"" + code + "\",\"message\":\"test\"}}", Encoding.UTF8, "application/json"),
            };
            if (retryAfterSeconds > 0) r.Headers.TryAddWithoutValidation("Retry-After", retryAfterSeconds.ToString());
            return r;
        }
    }

    /// <summary>Waits for a condition, woken by Pulse (called from event handlers); the timeout only guards against a hang.</summary>
    sealed class Signal
    {
        private readonly object mu = new object();
        private long version;

        public void Pulse()
        {
            lock (mu)
            {
                version++;
                Monitor.PulseAll(mu);
            }
        }

        public void WaitFor(Func<bool> cond, string what, int timeoutSeconds = 30)
        {
            var deadline = DateTime.UtcNow.AddSeconds(timeoutSeconds);
            lock (mu)
            {
                while (!cond())
                {
                    var left = deadline - DateTime.UtcNow;
                    if (left <= TimeSpan.Zero) throw new TimeoutException("timed out waiting for " + what);
                    Monitor.Wait(mu, left);
                }
            }
        }
    }

    /// <summary>
    /// Serves scripted Server-Sent Events: each request gets the next body of the
    /// script (then the stream ends), or, when the script is done, a stream that
    /// stays open and silent. It records each request's Last-Event-ID.
    /// </summary>
    sealed class ScriptedStream : HttpMessageHandler
    {
        public readonly Queue<string> Bodies = new Queue<string>();
        public readonly List<string> LastEventIds = new List<string>();
        public Action OnRequest = () => { };

        protected override Task<HttpResponseMessage> SendAsync(HttpRequestMessage request, CancellationToken ct)
        {
            IEnumerable<string> vs;
            string body = null;
            lock (LastEventIds)
            {
                LastEventIds.Add(request.Headers.TryGetValues("Last-Event-ID", out vs) ? string.Join(",", vs) : null);
                if (Bodies.Count > 0) body = Bodies.Dequeue();
            }
            OnRequest();
            var r = new HttpResponseMessage(HttpStatusCode.OK);
            r.Content = body != null ? (HttpContent)new StringContent(body, Encoding.UTF8, "text/event-stream") : new StreamContent(new SilentStream());
            return Task.FromResult(r);
        }

        /// <summary>A stream that sends nothing until it is disposed.</summary>
        sealed class SilentStream : Stream
        {
            private readonly ManualResetEventSlim closed = new ManualResetEventSlim();
            public override int Read(byte[] buffer, int offset, int count) { closed.Wait(); return 0; }
            public override Task<int> ReadAsync(byte[] buffer, int offset, int count, CancellationToken ct) { return Task.Run(() => Read(buffer, offset, count)); }
            protected override void Dispose(bool disposing) { closed.Set(); base.Dispose(disposing); }
            public override bool CanRead { get { return true; } }
            public override bool CanSeek { get { return false; } }
            public override bool CanWrite { get { return false; } }
            public override long Length { get { throw new NotSupportedException(); } }
            public override long Position { get { throw new NotSupportedException(); } set { throw new NotSupportedException(); } }
            public override void Flush() { }
            public override long Seek(long offset, SeekOrigin origin) { throw new NotSupportedException(); }
            public override void SetLength(long value) { throw new NotSupportedException(); }
            public override void Write(byte[] buffer, int offset, int count) { throw new NotSupportedException(); }
        }
    }

    /// <summary>A SynchronizationContext that runs what is posted on one thread of its own, as Unity's main thread does.</summary>
    sealed class OneThreadContext : SynchronizationContext, IDisposable
    {
        private readonly System.Collections.Concurrent.BlockingCollection<Action> queue = new System.Collections.Concurrent.BlockingCollection<Action>();
        public readonly Thread Thread;

        public OneThreadContext()
        {
            Thread = new Thread(() =>
            {
                SetSynchronizationContext(this);
                foreach (var a in queue.GetConsumingEnumerable()) a();
            }) { IsBackground = true };
            Thread.Start();
        }

        public override void Post(SendOrPostCallback d, object state) { queue.Add(() => d(state)); }
        public override void Send(SendOrPostCallback d, object state) { throw new NotSupportedException(); }
        public void Dispose() { queue.CompleteAdding(); }
    }
}
