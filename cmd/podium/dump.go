package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/podiumhq/podium/client"
)

// The dump that podium export writes and podium import reads: JSON Lines,
// a header line, then per board its definition, the players its entries
// name (each once in the dump) and its entries, period by period in rank
// order (so that restoring them in file order keeps exact ties in order);
// a league's tiers and settled periods follow its entries.

// dumpLine is one line of a dump: exactly one field is set.
type dumpLine struct {
	Dump   int         `json:"podium_dump,omitempty"`
	At     *time.Time  `json:"exported_at,omitempty"`
	Source string      `json:"source,omitempty"`
	Board  *dumpBoard  `json:"board,omitempty"`
	Player *dumpPlayer `json:"player,omitempty"`
	Entry  *dumpEntry  `json:"entry,omitempty"`
	Member *dumpMember `json:"member,omitempty"`
	// A league's tiers and settled periods, after its entries (league.go).
	LeagueTier   *client.LeagueExportTier   `json:"league_tier,omitempty"`
	LeaguePeriod *client.LeagueExportPeriod `json:"league_period,omitempty"`
	LeagueResult *client.LeagueExportResult `json:"league_result,omitempty"`
}

// dumpBoard is a board's definition as GET /v1/boards/{id} answers it,
// without what the server computes (times, period, seq).
type dumpBoard struct {
	ID string `json:"id"`
	client.BoardSpec
}

type dumpPlayer struct {
	ID     string `json:"id"`
	Name   string `json:"name"`
	Hidden bool   `json:"hidden"`
}

// dumpMember is a membership of a group set's group, in the set's part
// of the dump, in join order (a group set's entries, the groups by their
// member counts, follow from these and are not dumped).
type dumpMember struct {
	Set    string `json:"set"`
	Group  string `json:"group"`
	Player string `json:"player"`
}

type dumpEntry struct {
	Board  string          `json:"board"`
	Period string          `json:"period"`
	Player string          `json:"player"`
	Name   string          `json:"name"`
	Keys   []int64         `json:"keys"`
	At     time.Time       `json:"at"`
	Meta   json.RawMessage `json:"meta,omitempty"`
	Hidden bool            `json:"hidden"`
}

const dumpVersion = 1

func boardSpecOf(b *client.Board) dumpBoard {
	d := dumpBoard{ID: b.ID, BoardSpec: client.BoardSpec{Title: b.Title, Keys: b.Keys, Mode: b.Mode, Public: client.Bool(b.Public),
		Keep: b.Keep, Aggregate: b.Aggregate, Tournament: b.Tournament, Points: b.Points, Quota: b.Quota, Evidence: b.Evidence, Review: b.Review,
		RankStyle: b.RankStyle, KeepPeriods: b.KeepPeriods, League: b.League, GroupSet: b.GroupSet, GroupBoard: b.GroupBoard}}
	r := b.Reset
	d.Reset = &r
	if b.PlayerSubmit {
		d.PlayerSubmit = client.Bool(true)
	}
	if m := strings.TrimSpace(string(b.Meta)); m != "" && m != "{}" && m != "null" {
		d.Meta = b.Meta
	}
	return d
}

// ranking is what orders a board's entries: two boards with the same
// ranking take the same entries.
func boardRanking(keys []client.RankKey, mode string, reset client.Reset, keep int) string {
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%s %s, ", k.Name, k.Order)
	}
	tz := reset.TZ
	if tz == "" {
		tz = "UTC"
	}
	every := reset.Every
	if every == "" {
		every = "none"
	}
	fmt.Fprintf(&b, "mode %s, reset %s %s", mode, every, tz)
	if keep > 0 {
		fmt.Fprintf(&b, ", keep %d", keep)
	}
	return b.String()
}

// progress prints a line on stderr at most once a second, when enabled.
type progress struct {
	mu   sync.Mutex
	w    io.Writer
	on   bool
	last time.Time
	cmd  string
}

// newProgress enables progress lines with --progress, or when stderr is a
// terminal.
func newProgress(cmd string, w io.Writer, forced bool) *progress {
	on := forced
	if f, ok := w.(*os.File); ok && !on {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			on = true
		}
	}
	return &progress{w: w, on: on, cmd: cmd, last: time.Now()}
}

// tick prints the line that line returns, if a second has passed (or
// always with force).
func (p *progress) tick(force bool, line func() string) {
	if !p.on {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if !force && time.Since(p.last) < time.Second {
		return
	}
	p.last = time.Now()
	fmt.Fprintf(p.w, "%s: %s\n", p.cmd, line())
}

// adminKeyFlag is the key of --key, else PODIUM_ADMIN_KEY.
func adminKeyFlag(cmd, key string) (string, error) {
	if key != "" {
		return key, nil
	}
	if k := os.Getenv("PODIUM_ADMIN_KEY"); k != "" {
		return k, nil
	}
	return "", &setupError{msg: "no admin key to ask the server with: set PODIUM_ADMIN_KEY (or --key, which other users can see in ps)"}
}
