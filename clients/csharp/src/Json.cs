// A small JSON layer for podium's wire format: a parser into a tree of
// JsonValue and a writer. It exists so that the client needs no package in
// Unity (System.Text.Json is not part of .NET Standard 2.1 nor shipped with
// Unity) and uses no reflection (IL2CPP strips what reflection would need).
// Numbers keep their text, so int64 values survive exactly.

using System;
using System.Collections.Generic;
using System.Globalization;
using System.Text;

namespace Podium
{
    /// <summary>The kind of a JSON value.</summary>
    public enum JsonKind
    {
        /// <summary>null, or a missing member.</summary>
        Null,
        /// <summary>true or false.</summary>
        Bool,
        /// <summary>A number, kept as its text.</summary>
        Number,
        /// <summary>A string.</summary>
        String,
        /// <summary>An array.</summary>
        Array,
        /// <summary>An object.</summary>
        Object,
    }

    /// <summary>
    /// A parsed JSON value. Reading a member that is absent, or of another kind,
    /// gives defaults (null, 0, false) rather than throwing: answers may gain
    /// fields, and optional ones may be left out.
    /// </summary>
    public sealed class JsonValue
    {
        /// <summary>The JSON null (also what a missing member reads as).</summary>
        public static readonly JsonValue Null = new JsonValue(JsonKind.Null);

        /// <summary>What kind of value this is.</summary>
        public JsonKind Kind { get; private set; }

        private readonly string text;                    // a number's text or a string
        private readonly bool flag;
        private readonly List<JsonValue> items;          // array
        private readonly List<KeyValuePair<string, JsonValue>> members; // object, in order

        private JsonValue(JsonKind kind) { Kind = kind; }
        private JsonValue(JsonKind kind, string text) { Kind = kind; this.text = text; }
        private JsonValue(bool b) { Kind = JsonKind.Bool; flag = b; }
        private JsonValue(List<JsonValue> items) { Kind = JsonKind.Array; this.items = items; }
        private JsonValue(List<KeyValuePair<string, JsonValue>> members) { Kind = JsonKind.Object; this.members = members; }

        /// <summary>A string value.</summary>
        public static JsonValue From(string s) { return s == null ? Null : new JsonValue(JsonKind.String, s); }
        /// <summary>A number value.</summary>
        public static JsonValue From(long n) { return new JsonValue(JsonKind.Number, n.ToString(CultureInfo.InvariantCulture)); }
        /// <summary>A boolean value.</summary>
        public static JsonValue From(bool b) { return new JsonValue(b); }
        /// <summary>An array of values.</summary>
        public static JsonValue Array(IEnumerable<JsonValue> items) { return new JsonValue(new List<JsonValue>(items)); }
        /// <summary>An array of numbers.</summary>
        public static JsonValue Array(IEnumerable<long> items)
        {
            var l = new List<JsonValue>();
            foreach (var n in items) l.Add(From(n));
            return new JsonValue(l);
        }
        /// <summary>An array of strings.</summary>
        public static JsonValue Array(IEnumerable<string> items)
        {
            var l = new List<JsonValue>();
            foreach (var s in items) l.Add(From(s));
            return new JsonValue(l);
        }
        /// <summary>An empty object to fill with <see cref="Set"/>.</summary>
        public static JsonValue Object() { return new JsonValue(new List<KeyValuePair<string, JsonValue>>()); }

        /// <summary>Sets a member of an object (replacing one of that name), in order of first setting; null values are skipped.</summary>
        public JsonValue Set(string name, JsonValue value)
        {
            if (Kind != JsonKind.Object) throw new InvalidOperationException("not a JSON object");
            if (value == null) return this;
            for (int i = 0; i < members.Count; i++)
            {
                if (members[i].Key == name)
                {
                    members[i] = new KeyValuePair<string, JsonValue>(name, value);
                    return this;
                }
            }
            members.Add(new KeyValuePair<string, JsonValue>(name, value));
            return this;
        }

        /// <summary>The member of that name of an object, or <see cref="Null"/>.</summary>
        public JsonValue this[string name]
        {
            get
            {
                if (Kind != JsonKind.Object) return Null;
                foreach (var m in members) if (m.Key == name) return m.Value;
                return Null;
            }
        }

        /// <summary>Whether an object has a member of that name (null or not).</summary>
        public bool Has(string name)
        {
            if (Kind != JsonKind.Object) return false;
            foreach (var m in members) if (m.Key == name) return true;
            return false;
        }

        /// <summary>The items of an array (empty for anything else).</summary>
        public IList<JsonValue> Items { get { return items ?? (IList<JsonValue>)new JsonValue[0]; } }

        /// <summary>The members of an object in order (empty for anything else).</summary>
        public IList<KeyValuePair<string, JsonValue>> Members
        {
            get { return members ?? (IList<KeyValuePair<string, JsonValue>>)new KeyValuePair<string, JsonValue>[0]; }
        }

        /// <summary>Whether this is null (or a missing member).</summary>
        public bool IsNull { get { return Kind == JsonKind.Null; } }

        /// <summary>The string, or null when this is not a string.</summary>
        public string AsString() { return Kind == JsonKind.String ? text : null; }

        /// <summary>The boolean, or false.</summary>
        public bool AsBool() { return Kind == JsonKind.Bool && flag; }

        /// <summary>The number as an int64, or 0 (a fraction or exponent is refused with 0 too).</summary>
        public long AsLong()
        {
            long n;
            if (Kind == JsonKind.Number && long.TryParse(text, NumberStyles.AllowLeadingSign, CultureInfo.InvariantCulture, out n)) return n;
            return 0;
        }

        /// <summary>The number as an int (clamped to 0 when out of range).</summary>
        public int AsInt()
        {
            long n = AsLong();
            return n < int.MinValue || n > int.MaxValue ? 0 : (int)n;
        }

        /// <summary>The number as a double, or 0.</summary>
        public double AsDouble()
        {
            double d;
            if (Kind == JsonKind.Number && double.TryParse(text, NumberStyles.Float, CultureInfo.InvariantCulture, out d)) return d;
            return 0;
        }

        /// <summary>The number's text as sent (exact for any size), or null.</summary>
        public string NumberText { get { return Kind == JsonKind.Number ? text : null; } }

        /// <summary>An RFC 3339 time as UTC, or null.</summary>
        public DateTime? AsTime()
        {
            if (Kind != JsonKind.String) return null;
            DateTime t;
            if (DateTime.TryParse(text, CultureInfo.InvariantCulture, DateTimeStyles.AdjustToUniversal | DateTimeStyles.AssumeUniversal, out t))
                return DateTime.SpecifyKind(t, DateTimeKind.Utc);
            return null;
        }

        /// <summary>An array of int64 values (null when this is not an array).</summary>
        public long[] AsLongArray()
        {
            if (Kind != JsonKind.Array) return null;
            var a = new long[items.Count];
            for (int i = 0; i < a.Length; i++) a[i] = items[i].AsLong();
            return a;
        }

        /// <summary>An array of strings (null when this is not an array).</summary>
        public string[] AsStringArray()
        {
            if (Kind != JsonKind.Array) return null;
            var a = new string[items.Count];
            for (int i = 0; i < a.Length; i++) a[i] = items[i].AsString();
            return a;
        }

        /// <summary>Parses JSON text; throws <see cref="FormatException"/> when it is not JSON.</summary>
        public static JsonValue Parse(string json)
        {
            var p = new Parser(json);
            p.SkipSpace();
            var v = p.Value(0);
            p.SkipSpace();
            if (p.Pos != json.Length) throw p.Fail("trailing data");
            return v;
        }

        /// <summary>Writes the value as compact JSON.</summary>
        public override string ToString()
        {
            var sb = new StringBuilder();
            Write(sb);
            return sb.ToString();
        }

        /// <summary>Writes the value as compact JSON to sb.</summary>
        public void Write(StringBuilder sb)
        {
            switch (Kind)
            {
                case JsonKind.Null: sb.Append("null"); break;
                case JsonKind.Bool: sb.Append(flag ? "true" : "false"); break;
                case JsonKind.Number: sb.Append(text); break;
                case JsonKind.String: WriteString(sb, text); break;
                case JsonKind.Array:
                    sb.Append('[');
                    for (int i = 0; i < items.Count; i++)
                    {
                        if (i > 0) sb.Append(',');
                        items[i].Write(sb);
                    }
                    sb.Append(']');
                    break;
                case JsonKind.Object:
                    sb.Append('{');
                    for (int i = 0; i < members.Count; i++)
                    {
                        if (i > 0) sb.Append(',');
                        WriteString(sb, members[i].Key);
                        sb.Append(':');
                        members[i].Value.Write(sb);
                    }
                    sb.Append('}');
                    break;
            }
        }

        /// <summary>
        /// Writes s as a JSON string. A lone surrogate is refused with
        /// <see cref="ArgumentException"/>: podium refuses it too (I-JSON), and
        /// refusing it here says which string.
        /// </summary>
        public static void WriteString(StringBuilder sb, string s)
        {
            sb.Append('"');
            for (int i = 0; i < s.Length; i++)
            {
                char c = s[i];
                if (char.IsHighSurrogate(c))
                {
                    if (i + 1 >= s.Length || !char.IsLowSurrogate(s[i + 1]))
                        throw new ArgumentException("a string holds a lone surrogate, which JSON for podium cannot carry");
                    sb.Append(c).Append(s[i + 1]);
                    i++;
                    continue;
                }
                if (char.IsLowSurrogate(c)) throw new ArgumentException("a string holds a lone surrogate, which JSON for podium cannot carry");
                switch (c)
                {
                    case '"': sb.Append("\\\""); break;
                    case '\\': sb.Append("\\\\"); break;
                    case '\n': sb.Append("\\n"); break;
                    case '\r': sb.Append("\\r"); break;
                    case '\t': sb.Append("\\t"); break;
                    case '\b': sb.Append("\\b"); break;
                    case '\f': sb.Append("\\f"); break;
                    default:
                        if (c < 0x20 || c == '\u2028' || c == '\u2029')
                            sb.Append("\\u").Append(((int)c).ToString("x4", CultureInfo.InvariantCulture));
                        else
                            sb.Append(c);
                        break;
                }
            }
            sb.Append('"');
        }

        private sealed class Parser
        {
            private const int MaxDepth = 1000;
            private readonly string s;
            public int Pos;

            public Parser(string s) { this.s = s; }

            public FormatException Fail(string why)
            {
                return new FormatException("invalid JSON at offset " + Pos + ": " + why);
            }

            public void SkipSpace()
            {
                while (Pos < s.Length && (s[Pos] == ' ' || s[Pos] == '\t' || s[Pos] == '\n' || s[Pos] == '\r')) Pos++;
            }

            public JsonValue Value(int depth)
            {
                if (depth > MaxDepth) throw Fail("nested too deep");
                if (Pos >= s.Length) throw Fail("unexpected end");
                char c = s[Pos];
                switch (c)
                {
                    case '{': return Obj(depth);
                    case '[': return Arr(depth);
                    case '"': return new JsonValue(JsonKind.String, Str());
                    case 't': Word("true"); return new JsonValue(true);
                    case 'f': Word("false"); return new JsonValue(false);
                    case 'n': Word("null"); return Null;
                    default:
                        if (c == '-' || (c >= '0' && c <= '9')) return Num();
                        throw Fail("unexpected '" + c + "'");
                }
            }

            private void Word(string w)
            {
                if (string.CompareOrdinal(s, Pos, w, 0, w.Length) != 0) throw Fail("expected " + w);
                Pos += w.Length;
            }

            private JsonValue Num()
            {
                int start = Pos;
                if (s[Pos] == '-') Pos++;
                if (Pos < s.Length && s[Pos] == '0') Pos++;
                else if (!Digits()) throw Fail("bad number");
                if (Pos < s.Length && s[Pos] == '.')
                {
                    Pos++;
                    if (!Digits()) throw Fail("bad number");
                }
                if (Pos < s.Length && (s[Pos] == 'e' || s[Pos] == 'E'))
                {
                    Pos++;
                    if (Pos < s.Length && (s[Pos] == '+' || s[Pos] == '-')) Pos++;
                    if (!Digits()) throw Fail("bad number");
                }
                return new JsonValue(JsonKind.Number, s.Substring(start, Pos - start));
            }

            private bool Digits()
            {
                int start = Pos;
                while (Pos < s.Length && s[Pos] >= '0' && s[Pos] <= '9') Pos++;
                return Pos > start;
            }

            private string Str()
            {
                Pos++; // the opening quote
                var sb = new StringBuilder();
                while (true)
                {
                    if (Pos >= s.Length) throw Fail("unterminated string");
                    char c = s[Pos++];
                    if (c == '"') return sb.ToString();
                    if (c < 0x20) throw Fail("control character in a string");
                    if (c != '\\')
                    {
                        sb.Append(c);
                        continue;
                    }
                    if (Pos >= s.Length) throw Fail("unterminated escape");
                    char e = s[Pos++];
                    switch (e)
                    {
                        case '"': sb.Append('"'); break;
                        case '\\': sb.Append('\\'); break;
                        case '/': sb.Append('/'); break;
                        case 'b': sb.Append('\b'); break;
                        case 'f': sb.Append('\f'); break;
                        case 'n': sb.Append('\n'); break;
                        case 'r': sb.Append('\r'); break;
                        case 't': sb.Append('\t'); break;
                        case 'u':
                            if (Pos + 4 > s.Length) throw Fail("short \\u escape");
                            int code;
                            if (!int.TryParse(s.Substring(Pos, 4), NumberStyles.AllowHexSpecifier, CultureInfo.InvariantCulture, out code))
                                throw Fail("bad \\u escape");
                            Pos += 4;
                            sb.Append((char)code);
                            break;
                        default: throw Fail("bad escape");
                    }
                }
            }

            private JsonValue Arr(int depth)
            {
                Pos++;
                var list = new List<JsonValue>();
                SkipSpace();
                if (Pos < s.Length && s[Pos] == ']') { Pos++; return new JsonValue(list); }
                while (true)
                {
                    SkipSpace();
                    list.Add(Value(depth + 1));
                    SkipSpace();
                    if (Pos >= s.Length) throw Fail("unterminated array");
                    char c = s[Pos++];
                    if (c == ']') return new JsonValue(list);
                    if (c != ',') throw Fail("expected ',' or ']'");
                }
            }

            private JsonValue Obj(int depth)
            {
                Pos++;
                var list = new List<KeyValuePair<string, JsonValue>>();
                SkipSpace();
                if (Pos < s.Length && s[Pos] == '}') { Pos++; return new JsonValue(list); }
                while (true)
                {
                    SkipSpace();
                    if (Pos >= s.Length || s[Pos] != '"') throw Fail("expected a member name");
                    string name = Str();
                    SkipSpace();
                    if (Pos >= s.Length || s[Pos] != ':') throw Fail("expected ':'");
                    Pos++;
                    SkipSpace();
                    list.Add(new KeyValuePair<string, JsonValue>(name, Value(depth + 1)));
                    SkipSpace();
                    if (Pos >= s.Length) throw Fail("unterminated object");
                    char c = s[Pos++];
                    if (c == '}') return new JsonValue(list);
                    if (c != ',') throw Fail("expected ',' or '}'");
                }
            }
        }
    }
}
