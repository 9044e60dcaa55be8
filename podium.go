// Package podium is the domain of the podium leaderboard server: boards and
// their ordering rule, players, entries, periods, API keys, errors and the
// small interfaces the application needs from its storage.
//
// The package has no I/O. Adapters live in packages named after what they
// depend on (sqlite, http); the in-memory rank index is the leaf package rank;
// the engine package ties storage and indexes together on the write path;
// cmd/podium wires everything.
package podium

import "time"

// Clock returns the current time. Tests inject a fake clock so periods and
// resets can be crossed without sleeping.
type Clock func() time.Time

// Limits on identifiers and payloads shared by every entry point.
const (
	MaxKeys        = 4     // sort keys per board
	MaxBoardIDLen  = 128   // bytes
	MaxPlayerIDLen = 128   // bytes
	MaxTitleLen    = 256   // bytes
	MaxNameLen     = 128   // bytes, player display names and API key names
	MaxMetaLen     = 4096  // bytes of JSON per meta object
	MaxBatchItems  = 10000 // items in one POST /v1/scores
)

// Millis truncates t to the millisecond precision that podium stores and
// prints.
func Millis(t time.Time) int64 { return t.UnixMilli() }

// FromMillis is the inverse of Millis, in UTC.
func FromMillis(ms int64) time.Time { return time.UnixMilli(ms).UTC() }
