package http

import (
	"encoding/json"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/engine"
)

// Hand-written encoders for the hot answers (entries, submit results):
// encoding/json's reflection costs several microseconds per page, which is
// a large share of a request at tens of thousands of requests per second.

const hexDigits = "0123456789abcdef"

// appendString appends s as a JSON string.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// appendTime appends t as an RFC 3339 UTC string with milliseconds. It
// writes the digits itself: time.AppendFormat was a sixth of the CPU of a
// top-100 read.
func appendTime(b []byte, t time.Time) []byte {
	t = t.UTC()
	y, mo, d := t.Date()
	if y < 0 || y > 9999 {
		b = append(b, '"')
		b = t.AppendFormat(b, "2006-01-02T15:04:05.000Z07:00")
		return append(b, '"')
	}
	h, mi, s := t.Clock()
	ms := t.Nanosecond() / 1e6
	b = append(b, '"',
		byte('0'+y/1000), byte('0'+y/100%10), byte('0'+y/10%10), byte('0'+y%10), '-',
		byte('0'+int(mo)/10), byte('0'+int(mo)%10), '-',
		byte('0'+d/10), byte('0'+d%10), 'T',
		byte('0'+h/10), byte('0'+h%10), ':',
		byte('0'+mi/10), byte('0'+mi%10), ':',
		byte('0'+s/10), byte('0'+s%10), '.',
		byte('0'+ms/100), byte('0'+ms/10%10), byte('0'+ms%10), 'Z', '"')
	return b
}

func appendKeys(b []byte, keys []int64) []byte {
	b = append(b, '[')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, k, 10)
	}
	return append(b, ']')
}

func appendMeta(b []byte, m json.RawMessage) []byte {
	if len(m) == 0 {
		return append(b, "{}"...)
	}
	return append(b, m...)
}

// appendEntryFields appends {"rank","player","name","keys","at","meta",
// then the optional fields, "percentile" and "rank_shared" last}; the
// caller closes the object so more fields can follow.
func appendEntryFields(b []byte, e *engine.EntryView) []byte {
	b = append(b, `"rank":`...)
	b = strconv.AppendInt(b, int64(e.Rank), 10)
	b = append(b, `,"player":`...)
	b = appendString(b, e.Player)
	b = append(b, `,"name":`...)
	b = appendString(b, e.Name)
	b = append(b, `,"keys":`...)
	b = appendKeys(b, e.Keys)
	b = append(b, `,"at":`...)
	b = appendTime(b, e.At)
	b = append(b, `,"meta":`...)
	b = appendMeta(b, e.Meta)
	b = appendResults(b, e.Results) // best_k boards
	if e.Hidden {
		b = append(b, `,"hidden":true`...)
	}
	if e.Decayed { // a current points board: its points now (tournament.go)
		b = append(b, `,"value":`...)
		b = strconv.AppendFloat(b, e.Value, 'f', 6, 64)
	}
	return appendRankExtras(b, e) // last: the fields before keep their bytes
}

func appendEntry(b []byte, e *engine.EntryView) []byte {
	b = append(b, '{')
	b = appendEntryFields(b, e)
	return append(b, '}')
}

// appendPageHead appends the fields every ranking answer starts with.
func appendPageHead(b []byte, p *engine.Page) []byte {
	b = append(b, `{"board":`...)
	b = appendString(b, p.Board)
	b = append(b, `,"period":`...)
	b = appendString(b, p.Period)
	b = append(b, `,"seq":`...)
	b = strconv.AppendUint(b, p.Seq, 10)
	b = append(b, `,"total":`...)
	b = strconv.AppendInt(b, int64(p.Total), 10)
	if p.TopPercent > 0 {
		b = append(b, `,"top_percent":`...)
		b = appendHundredths(b, p.TopPercent)
		b = append(b, `,"top_count":`...)
		b = strconv.AppendInt(b, int64(p.TopCount), 10)
	}
	return b
}

func appendPage(b []byte, p *engine.Page) []byte {
	b = appendPageHead(b, p)
	b = append(b, `,"entries":[`...)
	for i := range p.Entries {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendEntry(b, &p.Entries[i])
	}
	return append(b, "]}"...)
}

// appendResult appends one submit answer.
func appendResult(b []byte, r *engine.Result) []byte {
	if r.Held != nil {
		return appendHeld(b, r) // review.go
	}
	b = append(b, `{"board":`...)
	b = appendString(b, r.Board)
	b = append(b, `,"period":`...)
	b = appendString(b, r.Period)
	b = append(b, `,"player":`...)
	b = appendString(b, r.Player)
	b = append(b, `,"improved":`...)
	b = strconv.AppendBool(b, r.Improved)
	b = append(b, `,"seq":`...)
	b = strconv.AppendUint(b, r.Seq, 10)
	b = append(b, `,"entry":{"rank":`...)
	b = strconv.AppendInt(b, int64(r.Entry.Rank), 10)
	b = append(b, `,"keys":`...)
	b = appendKeys(b, r.Entry.Keys)
	b = append(b, `,"at":`...)
	b = appendTime(b, r.Entry.At)
	b = append(b, `,"seq":`...)
	b = strconv.AppendUint(b, r.Entry.Seq, 10)
	b = append(b, `,"meta":`...)
	b = appendMeta(b, r.Entry.Meta)
	b = appendResults(b, r.Entry.Results) // best_k boards
	b = appendRankExtras(b, &r.Entry)
	b = append(b, `},"previous":`...)
	if p := r.Previous; p == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, `{"rank":`...)
		b = strconv.AppendInt(b, int64(p.Rank), 10)
		b = append(b, `,"keys":`...)
		b = appendKeys(b, p.Keys)
		b = append(b, `,"at":`...)
		b = appendTime(b, p.At)
		b = appendRankExtras(b, p)
		b = append(b, '}')
	}
	if r.Reconstructed {
		b = append(b, `,"reconstructed":true`...)
	}
	return append(b, '}')
}

// appendRankExtras appends what follows a rank: "percentile" (when the
// number of ranked entries is known) and "rank_shared" (a board with
// rank_style shared).
func appendRankExtras(b []byte, e *engine.EntryView) []byte {
	if e.Of > 0 {
		b = append(b, `,"percentile":`...)
		b = appendHundredths(b, podium.PercentileHundredths(e.Rank, e.Of))
	}
	if e.Shared > 0 {
		b = append(b, `,"rank_shared":`...)
		b = strconv.AppendInt(b, int64(e.Shared), 10)
	}
	return b
}

// appendHundredths appends h/100 with two decimals (7525 -> 75.25).
func appendHundredths(b []byte, h int) []byte {
	b = strconv.AppendInt(b, int64(h/100), 10)
	return append(b, '.', byte('0'+h%100/10), byte('0'+h%10))
}

// appendList appends the elements of list, comma-separated, each by item
// (the inside of a JSON array: the caller writes the brackets).
func appendList[T any](b []byte, list []T, item func(b []byte, v *T) []byte) []byte {
	for i := range list {
		if i > 0 {
			b = append(b, ',')
		}
		b = item(b, &list[i])
	}
	return b
}
