package ctf

import (
	"hash/maphash"
)

// Teams are players, and players change outside the service: renamed,
// hidden or shown (PUT /v1/players). Reads check the hidden teams each
// time, but live streams only read again when told; watchPlayers, run
// every few seconds, tells them when a contest's teams look different.

var playerSeed = maphash.MakeSeed()

// watchPlayers calls the listeners of every contest whose teams' names or
// hidden flags changed since its last run.
func (s *Service) watchPlayers() {
	s.mu.RLock()
	sts := make(map[string]*state, len(s.contests))
	for id, st := range s.contests {
		sts[id] = st
	}
	s.mu.RUnlock()
	for id, st := range sts {
		st.mu.Lock()
		var h maphash.Hash
		h.SetSeed(playerSeed)
		for _, t := range st.teams {
			p, err := s.players.Player(t)
			h.WriteString(t)
			h.WriteByte(0)
			if err == nil {
				h.WriteString(p.Name)
				if p.Hidden {
					h.WriteByte(1)
				}
			}
			h.WriteByte(0)
		}
		sig := h.Sum64()
		moved := sig != st.playerSig
		st.playerSig = sig
		st.mu.Unlock()
		if moved {
			s.changed(id)
		}
	}
}
