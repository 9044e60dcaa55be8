package main

import (
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
