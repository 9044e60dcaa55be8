package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/podiumhq/podium/client"
)

type exportFlags struct {
	URLs     urlList
	Key      string
	Boards   urlList
	Out      string
	Progress bool
}

// exportRetries is how many times a period whose export was not
// consistent (the board took writes meanwhile) is read again.
const exportRetries = 3

func exportCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var o exportFlags
	fs := newFlagSet("export", `Writes the boards, players and entries of a running server to one JSON Lines
dump that podium import reads: a header line, then per board its definition,
the players its entries name and its entries, every period, hidden players
included, with their original times and meta. Needs an admin key.

A period that takes writes while it is read is read again (up to 3 times);
then the export fails naming it. Progress goes to stderr every second when
stderr is a terminal, or with --progress.`, stdout)
	fs.Var(&o.URLs, "url", "base URL of the running server, e.g. http://localhost:8080")
	fs.StringVar(&o.Key, "key", "", "admin key (default PODIUM_ADMIN_KEY)")
	fs.Var(&o.Boards, "board", "board to export (repeat or comma-separate; default every board)")
	fs.StringVar(&o.Out, "out", "-", "file to write, - for stdout")
	fs.BoolVar(&o.Progress, "progress", false, "print progress on stderr even when it is not a terminal")
	if err := parse(fs, args); err != nil {
		return err
	}
	if len(o.URLs) != 1 {
		return usagef("export", "--url (one running server) is required")
	}
	if err := o.URLs.validate("export"); err != nil {
		return err
	}
	key, err := adminKeyFlag("export", o.Key)
	if err != nil {
		return err
	}
	var w io.Writer = stdout
	var f *os.File
	if o.Out != "-" {
		// Written beside, renamed when complete: a failed export leaves
		// no dump that looks whole.
		if f, err = os.OpenFile(o.Out+".partial", os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600); err != nil {
			return err
		}
		defer func() {
			f.Close()
			os.Remove(f.Name()) // gone after a successful rename
		}()
		w = f
	}
	c := client.New(o.URLs[0], client.WithKey(key), client.WithUserAgent("podium-export"))
	x := &exporter{c: c, w: bufio.NewWriterSize(w, 256<<10), seen: map[string]bool{}, prog: newProgress("export", stderr, o.Progress)}
	if err := x.run(ctx, o.URLs[0], o.Boards); err != nil {
		return err
	}
	if err := x.w.Flush(); err != nil {
		return err
	}
	if f != nil {
		if err := f.Sync(); err != nil {
			return err
		}
		if err := f.Close(); err != nil {
			return err
		}
		if err := os.Rename(f.Name(), o.Out); err != nil {
			return err
		}
	}
	x.prog.tick(true, x.status)
	fmt.Fprintf(stderr, "export: %d boards, %d players, %d entries", x.boards, x.players, x.entries)
	if x.leagueRows > 0 {
		fmt.Fprintf(stderr, ", %d league rows", x.leagueRows)
	}
	fmt.Fprintln(stderr)
	return nil
}

type exporter struct {
	c       *client.Client
	w       *bufio.Writer
	seen    map[string]bool // players written
	prog    *progress
	total   int
	boards  int
	players int
	entries int
	// leagueRows counts the league_tier, league_period and league_result
	// lines written.
	leagueRows int
}

func (x *exporter) status() string {
	return fmt.Sprintf("%d entries, %d/%d boards", x.entries, x.boards, x.total)
}

func (x *exporter) line(l dumpLine) error {
	b, err := json.Marshal(l)
	if err != nil {
		return err
	}
	x.w.Write(b)
	return x.w.WriteByte('\n')
}

func (x *exporter) run(ctx context.Context, source string, ids []string) error {
	var boards []client.Board
	if len(ids) == 0 {
		all, err := x.c.ListBoards(ctx)
		if err != nil {
			return fmt.Errorf("list boards: %w", err)
		}
		boards = all
	}
	for _, id := range ids {
		b, err := x.c.GetBoard(ctx, id)
		if err != nil {
			return fmt.Errorf("board %s: %w", id, err)
		}
		boards = append(boards, *b)
	}
	x.total = len(boards)
	now := time.Now().UTC()
	if err := x.line(dumpLine{Dump: dumpVersion, At: &now, Source: source}); err != nil {
		return err
	}
	for i := range boards {
		if err := x.board(ctx, &boards[i]); err != nil {
			return err
		}
		x.boards++
		x.prog.tick(false, x.status)
	}
	return nil
}

func (x *exporter) board(ctx context.Context, b *client.Board) error {
	spec := boardSpecOf(b)
	if err := x.line(dumpLine{Board: &spec}); err != nil {
		return err
	}
	if b.Aggregate != nil || b.GroupBoard != nil {
		return nil // its entries are computed from its sources (a group board's from its set and source)
	}
	if b.GroupSet != nil {
		return x.members(ctx, b.ID) // its entries follow from its memberships
	}
	ps, err := x.c.Periods(ctx, b.ID)
	if err != nil {
		return fmt.Errorf("board %s: periods: %w", b.ID, err)
	}
	// Oldest first, so that an import restores history in order.
	for i := len(ps.Periods) - 1; i >= 0; i-- {
		if err := x.period(ctx, b.ID, ps.Periods[i].ID); err != nil {
			return err
		}
	}
	if b.League != nil {
		return x.league(ctx, b.ID)
	}
	return nil
}

// members exports the memberships of a group set: its groups (the set's
// entries), each group's members in join order.
func (x *exporter) members(ctx context.Context, set string) error {
	for off := 0; ; off += 1000 {
		p, err := x.c.Top(ctx, set, off, 1000, client.ReadOptions{IncludeHidden: true})
		if err != nil {
			return fmt.Errorf("group set %s: %w", set, err)
		}
		for _, g := range p.Entries {
			for moff := 0; ; moff += 1000 {
				ms, err := x.c.Groups().Members(ctx, set, g.Player, moff, 1000)
				if err != nil {
					return fmt.Errorf("group set %s group %s: %w", set, g.Player, err)
				}
				for _, m := range ms.Members {
					if err := x.line(dumpLine{Member: &dumpMember{Set: set, Group: g.Player, Player: m.Player}}); err != nil {
						return err
					}
				}
				if len(ms.Members) < 1000 {
					break
				}
			}
		}
		if len(p.Entries) < 1000 {
			return nil
		}
	}
}

// spooled fills a temporary file with fill until fill reports a
// consistent read, at most exportRetries times (then the error busy
// gives), and hands the file, rewound, to use; the file is removed after.
// An export so writes nothing of a read it has to retry.
func spooled(pattern string, fill func(w io.Writer) (consistent bool, err error), busy func() error, use func(f *os.File) error) error {
	tmp, err := os.CreateTemp("", pattern)
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	defer tmp.Close()
	for try := 1; ; try++ {
		if _, err := tmp.Seek(0, io.SeekStart); err != nil {
			return err
		}
		if err := tmp.Truncate(0); err != nil {
			return err
		}
		ok, err := fill(tmp)
		if err != nil {
			return err
		}
		if ok {
			break
		}
		if try == exportRetries {
			return busy()
		}
	}
	if _, err := tmp.Seek(0, io.SeekStart); err != nil {
		return err
	}
	return use(tmp)
}

// period exports one period of a board through a temporary file, so that
// an inconsistent read is retried before anything of it is written.
func (x *exporter) period(ctx context.Context, board, period string) error {
	fill := func(w io.Writer) (bool, error) {
		ok, err := x.c.ExportBoard(ctx, board, client.ExportOptions{Format: "jsonl", Period: period, IncludeHidden: true}, w)
		if err != nil {
			return false, fmt.Errorf("board %s period %s: export: %w", board, period, err)
		}
		return ok, nil
	}
	busy := func() error {
		return fmt.Errorf("board %s period %s: the board took writes during each of %d exports; stop writes to it (or export it later) and retry", board, period, exportRetries)
	}
	return spooled("podium-export-*.jsonl", fill, busy, func(tmp *os.File) error { return x.periodLines(board, period, tmp) })
}

// periodLines writes a period's exported lines into the dump.
func (x *exporter) periodLines(board, period string, tmp *os.File) error {
	// Two passes: the players first (an import registers them before it
	// restores their entries), then the entries.
	for pass := 0; pass < 2; pass++ {
		if _, err := tmp.Seek(0, io.SeekStart); err != nil {
			return err
		}
		sc := bufio.NewScanner(tmp)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			var e struct {
				client.Entry
				Export *string `json:"export"`
				End    *bool   `json:"end"`
			}
			if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
				return fmt.Errorf("board %s period %s: export line: %w", board, period, err)
			}
			if e.Export != nil || e.End != nil {
				continue
			}
			if pass == 0 {
				if !x.seen[e.Player] {
					x.seen[e.Player] = true
					x.players++
					if err := x.line(dumpLine{Player: &dumpPlayer{ID: e.Player, Name: e.Name, Hidden: e.Hidden}}); err != nil {
						return err
					}
				}
				continue
			}
			de := dumpEntry{Board: board, Period: period, Player: e.Player, Name: e.Name, Keys: e.Keys, At: e.At.UTC(), Hidden: e.Hidden}
			if m := string(e.Meta); m != "" && m != "{}" && m != "null" {
				de.Meta = e.Meta
			}
			if err := x.line(dumpLine{Entry: &de}); err != nil {
				return err
			}
			x.entries++
			x.prog.tick(false, x.status)
		}
		if err := sc.Err(); err != nil {
			return fmt.Errorf("board %s period %s: %w", board, period, err)
		}
	}
	return nil
}
