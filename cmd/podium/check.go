package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/podiumhq/podium/engine"
	"github.com/podiumhq/podium/sqlite"
)

type opsFlags struct {
	Data string
	URL  string
}

func (o *opsFlags) flags(fsName string, stderr io.Writer, summary string) *flag.FlagSet {
	fs := newFlagSet(fsName, summary, stderr)
	fs.StringVar(&o.Data, "data", "./podium-data", "data directory of the server")
	fs.StringVar(&o.URL, "url", "", "base URL of a running server (e.g. http://localhost:8080) to check or reload its in-memory indexes")
	return fs
}

func openStore(data string) (*sqlite.Store, error) {
	path := filepath.Join(data, "podium.db")
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("no database at %s (is --data right?)", path)
	}
	return sqlite.Open(path, sqlite.Options{})
}

func checkCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var o opsFlags
	fs := o.flags("check", stderr, `Checks that what podium serves matches its database of record:
  1. the entries table against a replay of the append-only submissions log;
  2. rank indexes built from the database (in this process) for order and content;
  3. with --url, the running server's in-memory indexes against the database.
Prints every difference and exits 1 if there is any.`)
	if err := parse(fs, args); err != nil {
		return err
	}
	store, err := openStore(o.Data)
	if err != nil {
		return err
	}
	defer store.Close()
	bad := 0
	diffs, err := engine.CheckStore(ctx, store)
	if err != nil {
		return err
	}
	report(stdout, "entries vs log", diffs)
	bad += len(diffs)

	eng := engine.New(engine.Config{Store: store, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err := eng.Start(ctx); err != nil {
		return err
	}
	diffs, err = eng.CheckIndexes(ctx)
	eng.Close()
	if err != nil {
		return err
	}
	report(stdout, "indexes built from the database", diffs)
	bad += len(diffs)

	if o.URL != "" {
		diffs, err := remoteCheck(ctx, o.URL, o.Data)
		if err != nil {
			return err
		}
		report(stdout, "server "+o.URL+" indexes vs database", diffs)
		bad += len(diffs)
	}
	if bad > 0 {
		fmt.Fprintf(stdout, "check: %d difference(s)\n", bad)
		return errMismatch
	}
	fmt.Fprintln(stdout, "check: ok")
	return nil
}

func report(w io.Writer, what string, diffs []engine.Diff) {
	if len(diffs) == 0 {
		fmt.Fprintf(w, "ok    %s\n", what)
		return
	}
	fmt.Fprintf(w, "FAIL  %s: %d difference(s)\n", what, len(diffs))
	for _, d := range diffs {
		fmt.Fprintf(w, "      %s\n", d)
	}
}

func rebuildCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var o opsFlags
	fs := o.flags("rebuild", stderr, `Rebuilds derived state from the database of record.
Without --url: recomputes the entries table of every board from the append-only
submissions log. Run it with the server stopped.
With --url: makes the running server reload its in-memory indexes from the database.`)
	if err := parse(fs, args); err != nil {
		return err
	}
	if o.URL != "" {
		if _, err := adminCall(ctx, o.URL, o.Data, "/v1/admin/reload"); err != nil {
			return err
		}
		fmt.Fprintln(stdout, "rebuild: server reloaded its indexes from the database")
		return nil
	}
	store, err := openStore(o.Data)
	if err != nil {
		return err
	}
	defer store.Close()
	t0 := time.Now()
	n, err := engine.RebuildStore(ctx, store)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "rebuild: %d entries recomputed from the log in %s\n", n, time.Since(t0).Round(time.Millisecond))
	return nil
}

// adminKeyFor finds the admin key: PODIUM_ADMIN_KEY or the data directory.
func adminKeyFor(data string) (string, error) {
	if k := os.Getenv("PODIUM_ADMIN_KEY"); k != "" {
		return k, nil
	}
	b, err := os.ReadFile(filepath.Join(data, "admin.key"))
	if err != nil {
		return "", fmt.Errorf("no admin key: set PODIUM_ADMIN_KEY or point --data at the server's data directory")
	}
	return strings.TrimSpace(string(b)), nil
}

func adminCall(ctx context.Context, base, data, path string) ([]byte, error) {
	key, err := adminKeyFor(data)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, "POST", strings.TrimRight(base, "/")+path, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: %s: %s", path, resp.Status, strings.TrimSpace(string(body)))
	}
	return body, nil
}

func remoteCheck(ctx context.Context, base, data string) ([]engine.Diff, error) {
	body, err := adminCall(ctx, base, data, "/v1/admin/check")
	if err != nil {
		return nil, err
	}
	var out struct {
		Differences []engine.Diff `json:"differences"`
	}
	if err := json.Unmarshal(body, &out); err != nil {
		return nil, fmt.Errorf("check answer: %w", err)
	}
	return out.Differences, nil
}
