package main

import (
	"flag"
	"strings"
)

// "Did you mean" for a mistyped command or flag: the closest known name by
// edit distance (at most a third of the longer name, so "serv" finds serve
// but "x" finds nothing), or a name people commonly reach for that podium
// spells differently (--port is --addr).

// commands are podium's commands, in the order the usage lists them.
var commands = []string{"serve", "check", "rebuild", "backup", "restore", "migrate", "version", "healthcheck", "export", "import"}

// flagSynonyms maps names users try, from other servers' flags, to
// podium's. Only a synonym that the flag set defines is suggested.
var flagSynonyms = map[string][]string{
	"port":          {"addr"},
	"listen":        {"addr"},
	"address":       {"addr"},
	"host":          {"addr"},
	"bind":          {"addr"},
	"database":      {"db", "data"},
	"postgres":      {"db"},
	"dsn":           {"db"},
	"dir":           {"data", "from"},
	"data-dir":      {"data"},
	"datadir":       {"data"},
	"verbose":       {"log-level"},
	"debug":         {"log-level", "debug-addr"},
	"log":           {"log-level", "log-format"},
	"key":           {"admin-key"},
	"output":        {"to", "out"},
	"input":         {"in", "from"},
	"server":        {"url"},
	"cors":          {"allowed-origins"},
	"origins":       {"allowed-origins"},
	"pprof":         {"debug-addr"},
	"redis-url":     {"redis"},
	"node-name":     {"node"},
	"env-name":      {"env"},
	"timeout":       {"shutdown-timeout", "request-timeout"},
	"max-body-size": {"max-body"},
}

// suggestCommand is the command name closest to s, or "".
func suggestCommand(s string) string {
	return closest(strings.ToLower(strings.TrimLeft(s, "-")), commands)
}

// suggestFlag is the flag of fs that a user typing --name most likely
// meant, or "".
func suggestFlag(fs *flag.FlagSet, name string) string {
	var names []string
	fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
	name = strings.ToLower(name)
	if s := closest(name, names); s != "" {
		return s
	}
	for _, syn := range flagSynonyms[name] {
		if fs.Lookup(syn) != nil {
			return syn
		}
	}
	return ""
}

// closest is the candidate nearest to s by edit distance, or "" when none
// is near enough to be a typo of it. A candidate that s is a prefix of (at
// least 3 letters) counts as near.
func closest(s string, candidates []string) string {
	best, bestD := "", 0
	for _, c := range candidates {
		d := editDistance(s, c)
		limit := max(len(s), len(c)) / 3
		if len(s) >= 3 && strings.HasPrefix(c, s) {
			d = min(d, 1)
			limit = max(limit, 1)
		}
		if d == 0 || d > limit {
			continue
		}
		if best == "" || d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance between a and b, with a swap
// of two neighbouring letters counting as one edit.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev2 := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}
