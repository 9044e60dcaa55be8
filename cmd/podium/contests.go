package main

import (
	"github.com/podiumhq/podium/ctf"
	"github.com/podiumhq/podium/engine"
	"github.com/podiumhq/podium/stream"
)

// listeners tells the board hub what the engine applies, and both hubs
// (boards, contests) of revoked keys, whose streams must end at once.
type listeners struct {
	boards, contests *stream.Hub
}

var _ engine.Listener = listeners{}

func (l listeners) Applied(board, period string, seq uint64, players []uint32) {
	l.boards.Applied(board, period, seq, players)
}

func (l listeners) KeyRevoked(id string) {
	l.boards.KeyRevoked(id)
	l.contests.KeyRevoked(id)
}

// contestService returns the service of e's contests module (package ctf),
// nil if its store keeps no contests. The engine runs it: its Start loads
// the contests and starts their background work, its Close stops it.
func contestService(e *engine.Engine) *ctf.Service {
	for _, mod := range e.Modules() {
		if c, ok := mod.(*ctf.Module); ok {
			return c.Service()
		}
	}
	return nil
}
