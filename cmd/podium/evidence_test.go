package main

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestEvidenceFlags: a budget that is not N/window is a usage error naming
// the flag; "off" is accepted.
func TestEvidenceFlags(t *testing.T) {
	for _, args := range [][]string{
		{"--evidence-player-budget", "lots"},
		{"--evidence-global-budget", "5/1y"},
		{"--evidence-player-concurrent", "-1"},
	} {
		code, _, errs := runCLI(t, append([]string{"serve", "--data", t.TempDir()}, args...)...)
		if code != 2 || !strings.Contains(errs, "--evidence-") {
			t.Fatalf("%v: %d %q", args, code, errs)
		}
	}
	c := EvidenceConfig{PlayerBudget: "off", GlobalBudget: "100/1s"}
	b, err := c.budgets()
	if err != nil || !b.PlayerBytes.Unlimited() || b.GlobalBytes.Quota != 100 {
		t.Fatalf("budgets %+v %v", b, err)
	}
}

// TestClusterEvidenceBudget: the --evidence-player-budget spent on node A
// refuses on node B (the buckets are in PostgreSQL).
func TestClusterEvidenceBudget(t *testing.T) {
	t.Parallel() // its own schema, env and processes; mostly waiting
	c := newClusterWith(t, 2, "", func(int, string) []string { return []string{"--evidence-player-budget", "10/1h"} })
	a, b := c.nodes[0].url, c.nodes[1].url
	if st, body, _ := do(a, "PUT", "/v1/boards/ev", clusterKey, `{"keys":[{"name":"n","order":"desc"}]}`); st != 201 {
		t.Fatalf("create board: %d %s", st, body)
	}
	var seqs []string
	for i := range 2 {
		st, body, _ := do(a, "POST", "/v1/boards/ev/scores", clusterKey, fmt.Sprintf(`{"player":"p","keys":[%d]}`, i))
		if st != 200 {
			t.Fatalf("score: %d %s", st, body)
		}
		seqs = append(seqs, string(bytes.TrimSuffix(bytes.SplitN(bytes.SplitN(body, []byte(`"seq":`), 2)[1], []byte(","), 2)[0], []byte("}"))))
	}
	put := func(base, seq, tag string) (int, string) {
		var plain strings.Builder
		h := sha256.Sum256([]byte(tag))
		for i := range 180 { // about 7 KiB once gzipped
			h = sha256.Sum256(h[:])
			fmt.Fprintf(&plain, "{\"i\":%d,\"r\":%q}\n", i, hex.EncodeToString(h[:]))
		}
		var z bytes.Buffer
		w := gzip.NewWriter(&z)
		w.Write([]byte(plain.String()))
		w.Close()
		cs, zs := sha256.Sum256([]byte(plain.String())), sha256.Sum256(z.Bytes())
		st, body, hdr := do(base, "PUT", fmt.Sprintf("/v1/boards/ev/entries/p/evidence?seq=%s&content_sha256=%x&compressed_sha256=%x", seq, cs, zs),
			clusterKey, z.String(), "Content-Type", "application/gzip")
		return st, string(body) + " Retry-After=" + hdr.Get("Retry-After")
	}
	if st, info := put(a, seqs[0], "a"); st != 201 {
		t.Fatalf("first upload: %d %s", st, info)
	}
	eventually(t, 10*time.Second, "node B refuses the second upload for the budget", func() string {
		if st, info := put(b, seqs[1], "b"); st != 429 || strings.HasSuffix(info, "Retry-After=") {
			return fmt.Sprintf("%d %s", st, info)
		}
		return ""
	})
}
