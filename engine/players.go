package engine

import (
	"encoding/json"
	"sync"
	"sync/atomic"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/intern"
)

// players interns player ids for the rank indexes and holds the registered
// players' names and hidden flags. Names are joined at read time, so a
// rename shows everywhere at once.
type players struct {
	mu  sync.RWMutex
	ids *intern.Table
	reg map[uint32]*podium.Player // registered players only
	// ver moves after every change of a registered player (etag.go): a
	// read's ETag takes it before the answer reads names.
	ver atomic.Uint64
}

func newPlayers() *players {
	return &players{ids: intern.New(1024), reg: map[uint32]*podium.Player{}}
}

// intern returns the id of player, adding it.
func (p *players) intern(player string) uint32 {
	p.mu.RLock()
	id, ok := p.ids.Lookup(player)
	p.mu.RUnlock()
	if ok {
		return id
	}
	p.mu.Lock()
	id = p.ids.Intern(player)
	p.mu.Unlock()
	return id
}

// internHidden interns player and tells whether it is hidden, under one
// lock in the common case (a player seen before): the score path's one
// visit to the players.
func (p *players) internHidden(player string) (id uint32, hidden bool) {
	p.mu.RLock()
	id, ok := p.ids.Lookup(player)
	if ok {
		r := p.reg[id]
		p.mu.RUnlock()
		return id, r != nil && r.Hidden
	}
	p.mu.RUnlock()
	p.mu.Lock()
	defer p.mu.Unlock()
	id = p.ids.Intern(player)
	r := p.reg[id]
	return id, r != nil && r.Hidden
}

// internAll interns a batch of players under one lock, writing their ids
// and hidden flags (the startup path reads a million rows).
func (p *players) internAll(names []string, ids []uint32, hidden []bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i, n := range names {
		id := p.ids.Intern(n)
		ids[i] = id
		r := p.reg[id]
		hidden[i] = r != nil && r.Hidden
	}
}

// reserve makes room for n more players.
func (p *players) reserve(n int) {
	p.mu.Lock()
	p.ids.Reserve(n)
	p.mu.Unlock()
}

// lookup returns the id of player if it was ever seen.
func (p *players) lookup(player string) (uint32, bool) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return p.ids.Lookup(player)
}

// put registers or replaces a player and returns its id.
func (p *players) put(pl *podium.Player) uint32 {
	p.mu.Lock()
	defer p.mu.Unlock()
	id := p.ids.Intern(pl.ID)
	cp := *pl
	p.reg[id] = &cp
	p.ver.Add(1)
	return id
}

// get returns a registered player.
func (p *players) get(player string) (podium.Player, bool) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	id, ok := p.ids.Lookup(player)
	if !ok {
		return podium.Player{}, false
	}
	r, ok := p.reg[id]
	if !ok {
		return podium.Player{}, false
	}
	return *r, true
}

// hidden reports whether id is a hidden player.
func (p *players) hidden(id uint32) bool {
	p.mu.RLock()
	defer p.mu.RUnlock()
	r := p.reg[id]
	return r != nil && r.Hidden
}

// names resolves ids to (player id, display name) under one lock. A player
// without a registered name shows its id.
type nameView struct {
	Player string
	Name   string
}

func (p *players) view(ids []uint32, out []nameView) []nameView {
	p.mu.RLock()
	defer p.mu.RUnlock()
	for _, id := range ids {
		out = append(out, p.nameLocked(id))
	}
	return out
}

// nameLocked resolves one id; the caller holds p.mu.
func (p *players) nameLocked(id uint32) nameView {
	s := p.ids.String(id)
	n := s
	if r := p.reg[id]; r != nil && r.Name != "" {
		n = r.Name
	}
	return nameView{Player: s, Name: n}
}

func (p *players) name(id uint32) nameView {
	var one [1]nameView
	return p.view([]uint32{id}, one[:0])[0]
}

// bytes estimates the heap held by the intern table.
func (p *players) bytes() int {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return p.ids.Bytes()
}

func (p *players) count() int {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return p.ids.Len()
}

var emptyMeta = json.RawMessage("{}")
