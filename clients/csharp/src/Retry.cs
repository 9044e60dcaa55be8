using System;
using System.Security.Cryptography;
using System.Text;

namespace Podium
{
    /// <summary>What a retry of a request could do, which decides when it is retried (as the Go client).</summary>
    internal enum RequestKind
    {
        /// <summary>Changes nothing: retried after a network error, 429 and 503.</summary>
        Read,
        /// <summary>A write whose repetition has the effect of one (PUT, DELETE): retried as a read.</summary>
        Idempotent,
        /// <summary>A write with an Idempotency-Key, the same on every attempt: also retried after 503 outcome_unknown.</summary>
        Keyed,
        /// <summary>A write a repetition would apply again: retried only when the server says nothing was applied (429, 503 unavailable).</summary>
        Once,
    }

    /// <summary>
    /// Bounds the retries of one call. Waits grow exponentially with full jitter:
    /// before retry n (from 0) the client waits a random time in
    /// [0, min(MaxDelay, MinDelay×2^n)], or Retry-After when the server gave one
    /// (plus up to MinDelay of jitter). A call never retries a 4xx other than 429,
    /// and gives up when the server asks for a wait longer than MaxRetryAfter.
    /// </summary>
    public sealed class RetryPolicy
    {
        /// <summary>Attempts in all, the first included (1: no retry).</summary>
        public int MaxAttempts = 4;
        /// <summary>The first backoff's ceiling.</summary>
        public TimeSpan MinDelay = TimeSpan.FromMilliseconds(100);
        /// <summary>The largest backoff ceiling.</summary>
        public TimeSpan MaxDelay = TimeSpan.FromSeconds(5);
        /// <summary>A longer Retry-After ends the call with the error instead.</summary>
        public TimeSpan MaxRetryAfter = TimeSpan.FromSeconds(30);

        /// <summary>The default: 4 attempts, 100 ms to 5 s.</summary>
        public static RetryPolicy Default { get { return new RetryPolicy(); } }
        /// <summary>Every request sent once.</summary>
        public static RetryPolicy None { get { return new RetryPolicy { MaxAttempts = 1 }; } }

        private static readonly Random rng = new Random();

        internal static TimeSpan Jitter(TimeSpan ceiling)
        {
            double f;
            lock (rng) f = rng.NextDouble();
            return TimeSpan.FromTicks((long)(ceiling.Ticks * f));
        }

        /// <summary>The full-jitter wait before retry n, between min and max.</summary>
        internal static TimeSpan Backoff(TimeSpan min, TimeSpan max, int n)
        {
            long ceil = Math.Max(min.Ticks, 1);
            for (int i = 0; i < n && ceil < max.Ticks; i++) ceil *= 2; // no overflow: stops once past max
            if (ceil > max.Ticks) ceil = max.Ticks;
            return Jitter(TimeSpan.FromTicks(ceil));
        }

        /// <summary>
        /// Whether a request of kind k that failed on attempt n (from 0) is retried,
        /// and after how long. err is the server's error, or null when there was no
        /// answer (a network error or the attempt's timeout).
        /// </summary>
        internal bool Next(RequestKind k, int n, PodiumException err, out TimeSpan wait)
        {
            wait = TimeSpan.Zero;
            if (n + 1 >= MaxAttempts) return false;
            wait = Backoff(MinDelay, MaxDelay, n);
            if (err == null)
            {
                // No answer: the request may or may not have been applied.
                return k != RequestKind.Once;
            }
            if (err.Status == 429) { }
            else if (err.Status == 503 && err.Code == "outcome_unknown") { if (k != RequestKind.Keyed) return false; }
            else if (err.Status == 503) { }
            else return false;
            if (err.RetryAfter.HasValue && err.RetryAfter.Value > TimeSpan.Zero)
            {
                if (err.RetryAfter.Value > MaxRetryAfter) return false;
                wait = err.RetryAfter.Value + Jitter(MinDelay);
            }
            return true;
        }

        /// <summary>
        /// A random Idempotency-Key (128 bits, hex). The client makes one per
        /// submission by itself; make and keep one to retry a submission across
        /// restarts of the game.
        /// </summary>
        public static string NewIdempotencyKey()
        {
            var b = new byte[16];
            using (var r = RandomNumberGenerator.Create()) r.GetBytes(b);
            var sb = new StringBuilder(32);
            foreach (var x in b) sb.Append(x.ToString("x2"));
            return sb.ToString();
        }
    }
}
