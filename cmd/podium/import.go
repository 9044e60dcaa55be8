package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/podiumhq/podium/client"
)

type importFlags struct {
	URLs         urlList
	Key          string
	In           string
	CSV          bool
	Board        string
	Columns      string
	At           string
	SkipExisting bool
	Progress     bool
}

// Restores go in requests of at most restoreBatch entries and about
// restoreBytes of body (the server's default body limit is 1 MiB).
const (
	restoreBatch = 1000
	restoreBytes = 512 << 10
)

func importCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var o importFlags
	fs := newFlagSet("import", `Applies a dump that podium export wrote (or, with --csv, a CSV file that another
system produced) to a running server, idempotently: boards that do not exist
are created (one that exists with another ranking stops the import, unless
--skip-existing-boards), players are named and hidden as in the dump, and
entries are restored exactly, with their original times, in their periods
(POST /v1/boards/{board}/restore). Running it again changes nothing: equal
entries are reported unchanged. Needs an admin key.

Aggregate boards are created after the other boards' entries are restored, and
compute their entries from them. best_k, points and tournament boards take no
restores: their entries are reported refused (exit 1).

CSV (--csv --board ID): a header row, then one entry per row, into an existing
board. --columns names the player column, then one column per key of the board
in its order, then optionally the column of when the entry was reached (RFC
3339, or unix milliseconds); default: player, the board's key names, and at if
the header has it. The period is the one at falls in; a "period" column, if the
header has one, must agree with it, or without an at column times each row at
its period's start; with neither, --at TIME, else the start of the board's
current period (a board that never resets needs --at). A row that does not fit
is reported and counted refused.`, stdout)
	fs.Var(&o.URLs, "url", "base URL of the running server, e.g. http://localhost:8080")
	fs.StringVar(&o.Key, "key", "", "admin key (default PODIUM_ADMIN_KEY)")
	fs.StringVar(&o.In, "in", "-", "dump (or CSV) to read, - for stdin")
	fs.BoolVar(&o.CSV, "csv", false, "read a CSV file of entries for --board instead of a dump")
	fs.StringVar(&o.Board, "board", "", "with --csv: the board the entries go to")
	fs.StringVar(&o.Columns, "columns", "", "with --csv: player,key1[,key2...][,at] column names (see above)")
	fs.StringVar(&o.At, "at", "", "with --csv and no at column: the time of every entry (RFC 3339)")
	fs.BoolVar(&o.SkipExisting, "skip-existing-boards", false, "leave out (with their entries) boards that exist with another ranking, instead of stopping")
	fs.BoolVar(&o.Progress, "progress", false, "print progress on stderr even when it is not a terminal")
	if err := parse(fs, args); err != nil {
		return err
	}
	if len(o.URLs) != 1 {
		return usagef("import", "--url (one running server) is required")
	}
	if err := o.URLs.validate("import"); err != nil {
		return err
	}
	if o.CSV != (o.Board != "") {
		return usagef("import", "--csv and --board go together: --csv --board ID reads a CSV of entries for that board")
	}
	if !o.CSV && (o.Columns != "" || o.At != "") {
		return usagef("import", "--columns and --at are for --csv")
	}
	key, err := adminKeyFlag("import", o.Key)
	if err != nil {
		return err
	}
	var r io.Reader = os.Stdin
	if o.In != "-" {
		f, err := os.Open(o.In)
		if err != nil {
			return err
		}
		defer f.Close()
		r = f
	}
	x := &importer{c: client.New(o.URLs[0], client.WithKey(key), client.WithUserAgent("podium-import")),
		prog: newProgress("import", stderr, o.Progress), skipExisting: o.SkipExisting, stderr: stderr}
	if o.CSV {
		err = x.csv(ctx, r, o.Board, o.Columns, o.At)
	} else {
		err = x.dump(ctx, r)
	}
	if err != nil {
		return err
	}
	x.prog.tick(true, x.status)
	fmt.Fprintf(stdout, "import: boards %d created, %d kept, %d skipped; players %d updated, %d unchanged; entries %d restored, %d unchanged, %d refused",
		x.created, x.kept, x.skipped, x.playersPut, x.playersSame, x.restored, x.unchanged, x.refused)
	if x.skippedEntries > 0 {
		fmt.Fprintf(stdout, ", %d left out with their boards", x.skippedEntries)
	}
	if x.leagueTiers+x.leagueResults+x.leagueSkipped > 0 {
		fmt.Fprintf(stdout, "; league tiers %d, results %d restored", x.leagueTiers, x.leagueResults)
		if x.leagueSkipped > 0 {
			fmt.Fprintf(stdout, ", %d rows left out with their boards", x.leagueSkipped)
		}
	}
	if x.membersJoined+x.membersSame > 0 {
		fmt.Fprintf(stdout, "; group members %d joined, %d unchanged", x.membersJoined, x.membersSame)
	}
	fmt.Fprintln(stdout)
	if x.refused > 0 {
		return fmt.Errorf("%d entries were refused (see above)", x.refused)
	}
	return nil
}

type importer struct {
	c            *client.Client
	prog         *progress
	stderr       io.Writer
	skipExisting bool

	board    string // the board entries go to
	skip     bool   // its entries are left out (--skip-existing-boards)
	pending  []client.RestoreEntry
	size     int
	deferred []dumpBoard // aggregates, created last
	notes    int         // problem lines printed

	created, kept, skipped                       int
	playersPut, playersSame                      int
	restored, unchanged, refused, skippedEntries int
	membersJoined, membersSame                   int

	league                                    leagueBatch             // league rows to restore (league.go)
	leaguePeriod                              *client.LeaguePeriodRow // the last league_period line
	leagueTiers, leagueResults, leagueSkipped int
}

func (x *importer) status() string {
	return fmt.Sprintf("%d entries restored, %d unchanged, %d refused; %d boards created, %d kept", x.restored, x.unchanged, x.refused, x.created, x.kept)
}

// note prints a problem on stderr (the first 50).
func (x *importer) note(format string, args ...any) {
	x.notes++
	if x.notes <= 50 {
		fmt.Fprintf(x.stderr, "import: "+format+"\n", args...)
	} else if x.notes == 51 {
		fmt.Fprintln(x.stderr, "import: (more problems not shown)")
	}
}

func (x *importer) dump(ctx context.Context, r io.Reader) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	n := 0
	for sc.Scan() {
		n++
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		var l dumpLine
		d := json.NewDecoder(bytes.NewReader(sc.Bytes()))
		d.DisallowUnknownFields()
		if err := d.Decode(&l); err != nil {
			return fmt.Errorf("line %d: %v", n, err)
		}
		if n == 1 {
			if l.Dump != dumpVersion {
				return fmt.Errorf("line 1: not a podium dump (version %d) header: write dumps with podium export", dumpVersion)
			}
			continue
		}
		var err error
		switch {
		case l.Board != nil:
			if err = x.flush(ctx); err == nil {
				if err = x.flushLeague(ctx); err == nil {
					err = x.putBoard(ctx, l.Board)
				}
			}
		case l.LeagueTier != nil || l.LeaguePeriod != nil || l.LeagueResult != nil:
			if err = x.flush(ctx); err == nil { // the league's entries first
				err = x.addLeague(ctx, &l)
			}
		case l.Player != nil:
			err = x.putPlayer(ctx, l.Player)
		case l.Member != nil:
			if err = x.flush(ctx); err == nil {
				err = x.join(ctx, l.Member)
			}
		case l.Entry != nil:
			if l.Entry.Board != x.board {
				return fmt.Errorf("line %d: an entry of board %q outside that board's part of the dump", n, l.Entry.Board)
			}
			err = x.add(ctx, client.RestoreEntry{Period: l.Entry.Period, Player: l.Entry.Player, Keys: l.Entry.Keys, At: l.Entry.At, Meta: l.Entry.Meta})
		default:
			err = fmt.Errorf("an empty or second header line")
		}
		if err != nil {
			return fmt.Errorf("line %d: %w", n, err)
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	if n == 0 {
		return fmt.Errorf("the input is empty, not a podium dump")
	}
	if err := x.flush(ctx); err != nil {
		return err
	}
	if err := x.flushLeague(ctx); err != nil {
		return err
	}
	for i := range x.deferred {
		if _, err := x.ensureBoard(ctx, &x.deferred[i]); err != nil {
			return err
		}
	}
	return nil
}

// putBoard creates the board of a dump line, or keeps the one that exists.
func (x *importer) putBoard(ctx context.Context, b *dumpBoard) error {
	x.board, x.skip = b.ID, false
	if b.Aggregate != nil || b.GroupBoard != nil { // made once their sources' entries (and sets' members) are in
		x.deferred = append(x.deferred, *b)
		return nil
	}
	ok, err := x.ensureBoard(ctx, b)
	x.skip = !ok
	return err
}

// ensureBoard creates b if it does not exist; ok is false when a board of
// another ranking exists and is skipped.
func (x *importer) ensureBoard(ctx context.Context, b *dumpBoard) (ok bool, err error) {
	want := boardRanking(b.Keys, b.Mode, *b.Reset, b.Keep)
	cur, err := x.c.GetBoard(ctx, b.ID)
	if client.IsNotFound(err) {
		if _, _, err := x.c.PutBoard(ctx, b.ID, b.BoardSpec); err != nil {
			return false, fmt.Errorf("board %s: create: %w", b.ID, err)
		}
		x.created++
		return true, nil
	}
	if err != nil {
		return false, fmt.Errorf("board %s: %w", b.ID, err)
	}
	if have := boardRanking(cur.Keys, cur.Mode, cur.Reset, cur.Keep); have != want {
		if !x.skipExisting {
			return false, fmt.Errorf("board %s exists on the target with another ranking (%s; the dump has %s): rename or delete it there, or pass --skip-existing-boards", b.ID, have, want)
		}
		x.note("board %s exists with another ranking (%s): left out, with its entries", b.ID, have)
		x.skipped++
		return false, nil
	}
	x.kept++
	return true, nil
}

// join restores a membership of a group set (joining twice is no
// change).
func (x *importer) join(ctx context.Context, m *dumpMember) error {
	if m.Set != x.board {
		return fmt.Errorf("a member of group set %q outside that set's part of the dump", m.Set)
	}
	if x.skip {
		return nil // the set was left out (--skip-existing-boards)
	}
	r, err := x.c.Groups().Join(ctx, m.Set, m.Group, m.Player)
	if err != nil {
		return fmt.Errorf("group set %s group %s player %s: join: %w", m.Set, m.Group, m.Player, err)
	}
	if r.Already {
		x.membersSame++
	} else {
		x.membersJoined++
	}
	return nil
}

func (x *importer) putPlayer(ctx context.Context, p *dumpPlayer) error {
	if (p.Name == "" || p.Name == p.ID) && !p.Hidden {
		// Left at the defaults: nothing to say about this player, and
		// no request (a dump names every player of every entry).
		x.playersSame++
		return nil
	}
	cur, err := x.c.GetPlayer(ctx, p.ID)
	if err != nil && !client.IsNotFound(err) {
		return fmt.Errorf("player %s: %w", p.ID, err)
	}
	name := p.Name
	if name == p.ID {
		name = "" // the name pages show by default
	}
	if err == nil {
		curName := cur.Name
		if curName == p.ID {
			curName = ""
		}
		if cur.Hidden == p.Hidden && curName == name {
			x.playersSame++
			return nil
		}
	}
	if _, err := x.c.PutPlayer(ctx, p.ID, client.PlayerSpec{Name: name, Hidden: p.Hidden}); err != nil {
		return fmt.Errorf("player %s: %w", p.ID, err)
	}
	x.playersPut++
	return nil
}

// add queues an entry of the current board, restoring a full request.
func (x *importer) add(ctx context.Context, e client.RestoreEntry) error {
	x.pending = append(x.pending, e)
	x.size += 96 + len(e.Player) + len(e.Meta) + 21*len(e.Keys)
	if len(x.pending) >= restoreBatch || x.size >= restoreBytes {
		return x.flush(ctx)
	}
	return nil
}

// flush restores the queued entries.
func (x *importer) flush(ctx context.Context) error {
	batch := x.pending
	x.pending, x.size = x.pending[:0:0], 0
	if len(batch) == 0 {
		return nil
	}
	defer x.prog.tick(false, x.status)
	if x.skip {
		x.skippedEntries += len(batch)
		return nil
	}
	res, err := x.c.Restore(ctx, x.board, batch)
	if client.IsConflict(err) {
		// The board takes no restores (derived or several values per
		// entry); entries it already holds as they are are unchanged.
		return x.compare(ctx, batch, err)
	}
	if err != nil {
		return fmt.Errorf("board %s: restore: %w", x.board, err)
	}
	x.restored += res.Restored
	x.unchanged += res.Unchanged
	x.refused += res.Refused
	for i, r := range res.Results {
		if r.Error != nil && i < len(batch) {
			x.note("board %s period %s player %s: %s: %s", x.board, batch[i].Period, batch[i].Player, r.Error.Code, r.Error.Message)
		}
	}
	return nil
}

// compare counts, for a board that refused a restore, the entries that it
// holds exactly already as unchanged and the others as refused.
func (x *importer) compare(ctx context.Context, batch []client.RestoreEntry, why error) error {
	have := map[[2]string]client.Entry{}
	periods := map[string]bool{}
	for _, e := range batch {
		if periods[e.Period] {
			continue
		}
		periods[e.Period] = true
		for off := 0; ; off += 1000 {
			p, err := x.c.Top(ctx, x.board, off, 1000, client.ReadOptions{Period: e.Period, IncludeHidden: true})
			if err != nil {
				return fmt.Errorf("board %s: %w", x.board, err)
			}
			for _, en := range p.Entries {
				have[[2]string{e.Period, en.Player}] = en
			}
			if len(p.Entries) < 1000 {
				break
			}
		}
	}
	bad := 0
	for _, e := range batch {
		h, ok := have[[2]string{e.Period, e.Player}]
		if ok && h.At.Equal(e.At.Truncate(time.Millisecond)) && fmt.Sprint(h.Keys) == fmt.Sprint(e.Keys) && sameMeta(h.Meta, e.Meta) {
			x.unchanged++
			continue
		}
		bad++
	}
	if bad > 0 {
		x.refused += bad
		x.note("board %s: %d entries not restored: %v", x.board, bad, why)
	}
	return nil
}

func sameMeta(a, b json.RawMessage) bool {
	norm := func(m json.RawMessage) string {
		s := string(bytes.TrimSpace(m))
		if s == "" || s == "null" {
			return "{}"
		}
		var buf bytes.Buffer
		if json.Compact(&buf, m) == nil {
			return buf.String()
		}
		return s
	}
	return norm(a) == norm(b)
}
