package http_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/engine"
	podiumhttp "github.com/podiumhq/podium/http"
	"github.com/podiumhq/podium/modules"
	"github.com/podiumhq/podium/sqlite"
)

// failingStore is the SQLite store whose commits can fail cleanly (a full
// disk: nothing stored) or with an unknown outcome (a failed fsync).
type failingStore struct {
	*sqlite.Store
	full, fsync atomic.Bool
}

func (f *failingStore) CommitDeferred(ctx context.Context, b *podium.Batch) (uint64, error) {
	if f.full.Load() && len(b.Submissions) > 0 {
		return 0, errors.New("database or disk is full (injected)")
	}
	return f.Store.CommitDeferred(ctx, b)
}

func (f *failingStore) Sync(ctx context.Context, ticket uint64) error {
	if f.fsync.Load() {
		return podium.OutcomeUnknown(fmt.Errorf("sync: %w", &os.PathError{Op: "fdatasync", Path: "/data/podium.db-wal", Err: syscall.EIO}))
	}
	return f.Store.Sync(ctx, ticket)
}

// TestReadinessAfterStorageFailures: /readyz and the API say what happened
// to the storage. While commits fail cleanly, writes get 503 "nothing was
// applied", reads work and /readyz says degraded; after an fsync failure,
// the write gets outcome_unknown, later writes are refused until a restart,
// reads still work, and /readyz is 503 with the reason, as is a metric.
func TestReadinessAfterStorageFailures(t *testing.T) {
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "podium.db"), sqlite.Options{Sync: "normal"})
	if err != nil {
		t.Fatal(err)
	}
	fs := &failingStore{Store: st}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	reg := prometheus.NewRegistry()
	eng := modules.Engine(engine.Config{Store: fs, Logger: log, Registerer: reg})
	eng.Keys().SetAdminSecret(adminKey)
	if err := eng.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	srv := podiumhttp.New(podiumhttp.Config{Engine: eng, Store: fs, Logger: log, Registry: reg})
	eng.SetListener(srv.Hub())
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(func() { srv.Hub().Close(); ts.Close(); eng.Close(); st.Close() })
	s := &server{t: t, url: ts.URL, eng: eng}

	s.mkBoard("b", `{"keys":[{"name":"n","order":"desc"}],"public":true}`)
	s.must(200, s.do("POST", "/v1/boards/b/scores", adminKey, `{"player":"a","score":1}`))
	ready := s.must(200, s.do("GET", "/readyz", "", nil)).json(t)
	if ready["status"] != "ready" {
		t.Fatalf("readyz: %v", ready)
	}

	fs.full.Store(true)
	r := s.do("POST", "/v1/boards/b/scores", adminKey, `{"player":"b","score":2}`)
	if r.status != 503 || r.errCode(t) != "unavailable" || !strings.Contains(string(r.body), "nothing was applied") {
		t.Fatalf("write on a full disk: %d %s", r.status, r.body)
	}
	ready = s.must(200, s.do("GET", "/readyz", "", nil)).json(t)
	if ready["status"] != "degraded" || !strings.Contains(fmt.Sprint(ready["checks"]), "failing since") {
		t.Fatalf("readyz while commits fail: %v", ready)
	}
	fs.full.Store(false)
	s.must(200, s.do("POST", "/v1/boards/b/scores", adminKey, `{"player":"b","score":2}`))
	if ready = s.must(200, s.do("GET", "/readyz", "", nil)).json(t); ready["status"] != "ready" {
		t.Fatalf("readyz once commits work again: %v", ready)
	}

	fs.fsync.Store(true)
	r = s.do("POST", "/v1/boards/b/scores", adminKey, `{"player":"c","score":3}`)
	if r.status != 503 || r.errCode(t) != "outcome_unknown" || r.header.Get("Retry-After") == "" {
		t.Fatalf("write whose fsync failed: %d %s", r.status, r.body)
	}
	fs.fsync.Store(false)
	r = s.do("POST", "/v1/boards/b/scores", adminKey, `{"player":"d","score":4}`)
	if r.status != 503 || r.errCode(t) != "unavailable" || !strings.Contains(string(r.body), "fdatasync: input/output error") {
		t.Fatalf("write after the fsync failure: %d %s", r.status, r.body)
	}
	top := s.must(200, s.do("GET", "/v1/boards/b/entries", "", nil)).json(t)
	if n := len(top["entries"].([]any)); n != 2 {
		t.Fatalf("reads after the fsync failure: %v", top)
	}
	r = s.do("GET", "/readyz", "", nil)
	if r.status != 503 || !strings.Contains(string(r.body), "restart") || strings.Contains(string(r.body), "podium.db") {
		t.Fatalf("readyz after the fsync failure: %d %s", r.status, r.body)
	}
	metrics := string(s.must(200, s.do("GET", "/metrics", "", nil)).body)
	for _, want := range []string{"podium_storage_failed 1", `podium_commit_failures_total{outcome="unknown"} 1`, `podium_commit_failures_total{outcome="not_stored"} 1`} {
		if !strings.Contains(metrics, want) {
			t.Errorf("metrics lack %q", want)
		}
	}
}
