using System;
using System.Collections.Generic;
using System.IO;
using System.IO.Compression;
using System.Security.Cryptography;
using System.Text;

namespace Podium
{
    /// <summary>
    /// Evidence files in podium's format: one gzip member holding JSON Lines, one
    /// event object per line (docs/API.md, "Evidence (replay) uploads").
    /// </summary>
    public static class EvidenceFile
    {
        /// <summary>Builds an evidence file from events, one JSON object each (one line each).</summary>
        public static byte[] FromEvents(IEnumerable<JsonValue> events)
        {
            var sb = new StringBuilder();
            foreach (var e in events)
            {
                if (e.Kind != JsonKind.Object) throw new ArgumentException("every evidence event is a JSON object");
                e.Write(sb);
                sb.Append('\n');
            }
            return Gzip(Encoding.UTF8.GetBytes(sb.ToString()));
        }

        /// <summary>Compresses bytes (JSON Lines) into one gzip member.</summary>
        public static byte[] Gzip(byte[] jsonLines)
        {
            var ms = new MemoryStream();
            using (var z = new GZipStream(ms, CompressionLevel.Optimal, true)) z.Write(jsonLines, 0, jsonLines.Length);
            return ms.ToArray();
        }

        /// <summary>
        /// The two hashes an upload declares: SHA-256 of the inflated bytes and of the
        /// gzip bytes as sent, in lower-case hex. Throws <see cref="InvalidDataException"/>
        /// when gzip is not gzip.
        /// </summary>
        public static void Hashes(byte[] gzip, out string content, out string compressed)
        {
            using (var sha = SHA256.Create())
            {
                compressed = Hex(sha.ComputeHash(gzip));
            }
            using (var sha = SHA256.Create())
            using (var z = new GZipStream(new MemoryStream(gzip), CompressionMode.Decompress))
            {
                var buf = new byte[16384];
                int n;
                while ((n = z.Read(buf, 0, buf.Length)) > 0) sha.TransformBlock(buf, 0, n, null, 0);
                sha.TransformFinalBlock(buf, 0, 0);
                content = Hex(sha.Hash);
            }
        }

        private static string Hex(byte[] b)
        {
            var sb = new StringBuilder(b.Length * 2);
            foreach (var x in b) sb.Append(x.ToString("x2"));
            return sb.ToString();
        }
    }
}
