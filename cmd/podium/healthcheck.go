package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"sort"
	"strings"
	"time"
)

// healthcheckCmd asks a server on this machine whether it is ready, for a
// container's HEALTHCHECK: the image holds only podium, no curl or wget.
// It exits 0 when /readyz answers 200 ("ready", or "degraded": the node
// still serves reads, and restarting it would not bring the database
// back), 1 otherwise (503 while loading or shutting down, no answer).
func healthcheckCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("healthcheck", "Asks the server at --addr on this machine for GET /readyz: exit 0 when it answers 200\n(ready or degraded), 1 otherwise. For container health checks; reads PODIUM_ADDR like serve.", stdout)
	addr := fs.String("addr", ":8080", "the address the server listens on (its --addr); an empty or wildcard host means 127.0.0.1")
	timeout := fs.Duration("timeout", 3*time.Second, "give up after this long")
	if err := parse(fs, args); err != nil {
		return err
	}
	if err := checkAddr(*addr, ":8080, 127.0.0.1:8080"); err != nil {
		return usagef("healthcheck", "--addr: %v", err)
	}
	host, port, _ := net.SplitHostPort(*addr)
	if *timeout <= 0 {
		return usagef("healthcheck", "--timeout must be positive")
	}
	if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	url := "http://" + net.JoinHostPort(host, port) + "/readyz"
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("%s: %w", url, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	var ready struct {
		Status string            `json:"status"`
		Checks map[string]string `json:"checks"`
	}
	_ = json.Unmarshal(body, &ready) // an answer that is not podium's still has a status code
	line := fmt.Sprintf("%s: %d %s", url, resp.StatusCode, ready.Status)
	var notes []string
	for k, v := range ready.Checks {
		if v != "ok" && v != "loaded" {
			notes = append(notes, k+": "+v)
		}
	}
	sort.Strings(notes)
	if len(notes) > 0 {
		line += " (" + strings.Join(notes, "; ") + ")"
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s", line)
	}
	fmt.Fprintln(stdout, line)
	return nil
}
