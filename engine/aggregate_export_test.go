package engine

// SetAggChunkPlayersForTest sets how many players a step of an aggregate
// recompute visits, and returns what restores it.
func SetAggChunkPlayersForTest(n int) func() {
	old := aggChunkPlayers
	aggChunkPlayers = n
	return func() { aggChunkPlayers = old }
}
