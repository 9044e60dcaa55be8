using System;

namespace Podium
{
    /// <summary>
    /// An error answer of podium, <c>{"error": {"code", "message"}}</c>, with its HTTP
    /// status and Retry-After; or, with Status 0, an error event of a live stream.
    /// Codes are those of docs/API.md ("board_not_found", "unauthenticated",
    /// "conflict", "rate_limited", "outcome_unknown", ...); an answer that is not
    /// podium's envelope (a proxy's page) gets the code "http_&lt;status&gt;".
    /// </summary>
    public class PodiumException : Exception
    {
        /// <summary>The HTTP status (0 for a stream's error event).</summary>
        public int Status { get; private set; }
        /// <summary>The API's error code.</summary>
        public string Code { get; private set; }
        /// <summary>The server's message.</summary>
        public string ServerMessage { get; private set; }
        /// <summary>Retry-After, when the answer had one.</summary>
        public TimeSpan? RetryAfter { get; private set; }

        /// <summary>Makes an error of an answer.</summary>
        public PodiumException(int status, string code, string message, TimeSpan? retryAfter = null)
            : base("podium: " + (status > 0 ? status + " " : "") + code + ": " + message)
        {
            Status = status;
            Code = code;
            ServerMessage = message;
            RetryAfter = retryAfter;
        }

        /// <summary>Any 404: board_not_found, entry_not_found, not_found.</summary>
        public bool IsNotFound { get { return Status == 404 || (Status == 0 && (Code == "board_not_found" || Code == "not_found")); } }
        /// <summary>A 409 of any code.</summary>
        public bool IsConflict { get { return Status == 409; } }
        /// <summary>A 429.</summary>
        public bool IsRateLimited { get { return Status == 429; } }
        /// <summary>A 503 outcome_unknown: retry with the same Idempotency-Key once podium is back.</summary>
        public bool IsOutcomeUnknown { get { return Code == "outcome_unknown"; } }

        /// <summary>Parses an error answer's body.</summary>
        internal static PodiumException FromAnswer(int status, string body, TimeSpan? retryAfter)
        {
            try
            {
                var v = JsonValue.Parse(body ?? "");
                var code = v["error"]["code"].AsString();
                if (!string.IsNullOrEmpty(code)) return new PodiumException(status, code, v["error"]["message"].AsString() ?? "", retryAfter);
            }
            catch (FormatException) { }
            var text = (body ?? "").Trim();
            if (text.Length > 200) text = text.Substring(0, 200);
            return new PodiumException(status, "http_" + status, text, retryAfter);
        }
    }

    /// <summary>The server's answer could not be read as podium's (not JSON, too large).</summary>
    public class PodiumProtocolException : Exception
    {
        /// <summary>Makes one.</summary>
        public PodiumProtocolException(string message, Exception inner = null) : base(message, inner) { }
    }
}
