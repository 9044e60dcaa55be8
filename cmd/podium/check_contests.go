package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/contest"
	"github.com/podiumhq/podium/ctf"
)

// noPlayers is the Players of an offline check, which reads no names.
type noPlayers struct{}

func (noPlayers) Player(id string) (podium.Player, error) {
	return podium.Player{}, podium.Errorf(podium.ECodeNotFound, "no players in a check")
}

// checkContests checks the CTF contests of a store against their solves
// (package ctf, Service.Check): each contest's head and every stored
// standings snapshot, recomputed from the solves. It reports under what
// and returns the number of problems.
func checkContests(ctx context.Context, w io.Writer, store podium.Store, what string) (int, error) {
	cs, ok := store.(contest.Store)
	if !ok {
		return 0, nil
	}
	svc := ctf.New(ctf.Config{Store: cs, Players: noPlayers{}, Poll: -1, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	problems, err := svc.Check(ctx)
	if err != nil {
		return 0, fmt.Errorf("check contests: %w", err)
	}
	report(w, what, problemLines(problems))
	return len(problems), nil
}

func problemLines(ps []ctf.Problem) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = "contest " + p.Contest + ": " + p.What
	}
	return out
}
