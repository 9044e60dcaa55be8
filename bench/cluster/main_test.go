package main

import (
	"errors"
	"strings"
	"testing"
)

func env(kv map[string]string) func(string) string { return func(k string) string { return kv[k] } }

func TestRefusesToRunWithoutPostgreSQL(t *testing.T) {
	_, err := parseFlags(nil, env(nil))
	if !errors.Is(err, errNoDatabase) {
		t.Fatalf("no PODIUM_TEST_POSTGRES and no --db: err %v, want the refusal", err)
	}
	for _, want := range []string{"PODIUM_TEST_POSTGRES", "--db"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the refusal does not say %q: %v", want, err)
		}
	}
}

func TestDatabaseFromFlagOrEnvironment(t *testing.T) {
	const url = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"
	cfg, err := parseFlags(nil, env(map[string]string{"PODIUM_TEST_POSTGRES": url}))
	if err != nil || cfg.DB != url {
		t.Fatalf("from the environment: %v %+v", err, cfg)
	}
	cfg, err = parseFlags([]string{"--db", "postgres://u:secret@h/db"}, env(nil))
	if err != nil || cfg.DB != "postgres://u:secret@h/db" {
		t.Fatalf("from --db: %v %+v", err, cfg)
	}
	if strings.Contains(cfg.command, "secret") {
		t.Fatalf("the printed command shows the password: %s", cfg.command)
	}
	if len(cfg.Phases) != len(phaseNames) {
		t.Fatalf("default phases %v", cfg.Phases)
	}
}

func TestFlagErrors(t *testing.T) {
	db := []string{"--db", "postgres://h/db"}
	for name, args := range map[string][]string{
		"NotPostgres":   {"--db", "mysql://h/db"},
		"UnknownPhase":  append([]string{"--phases", "throughput,speed"}, db...),
		"NoPhase":       append([]string{"--phases", ","}, db...),
		"ZeroRuns":      append([]string{"--runs", "0"}, db...),
		"ShortDuration": append([]string{"--duration", "500ms"}, db...),
		"OneNode":       append([]string{"--nodes", "1"}, db...),
		"Arguments":     append([]string{"extra"}, db...),
	} {
		t.Run(name, func(t *testing.T) {
			if cfg, err := parseFlags(args, env(nil)); err == nil {
				t.Fatalf("%v accepted: %+v", args, cfg)
			}
		})
	}
	cfg, err := parseFlags(append([]string{"--phases", "lag, lag,startup", "--poll-only-flags", "--notify=false"}, db...), env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(cfg.Phases, ",") != "lag,startup" || strings.Join(cfg.LagArgs["poll"], " ") != "--notify=false" {
		t.Fatalf("phases %v, poll-only flags %v", cfg.Phases, cfg.LagArgs["poll"])
	}
}

func TestWithParams(t *testing.T) {
	got, err := withParams("postgres://u@h:5432/db?sslmode=disable", "search_path", "s1", "application_name", "s1-n1")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"sslmode=disable", "search_path=s1", "application_name=s1-n1", "postgres://u@h:5432/db?"} {
		if !strings.Contains(got, want) {
			t.Errorf("%s lacks %s", got, want)
		}
	}
	got, _ = withDatabase("postgres://u@h:5432/test?sslmode=disable", "podium_bench_1")
	if got != "postgres://u@h:5432/podium_bench_1?sslmode=disable" {
		t.Errorf("withDatabase: %s", got)
	}
}
