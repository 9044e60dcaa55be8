package sqlstore

// Tournaments (podium.TourneyStore): joins, payouts, settlements and
// leases, and what deleting a board deletes of them.
var (
	DeleteBoardJoins      = New("DELETE FROM tournament_joins WHERE board = ?")
	DeleteBoardPayouts    = New("DELETE FROM tournament_payouts WHERE board = ?")
	DeleteBoardSettlement = New("DELETE FROM tournament_settlements WHERE board = ?")
	Settlements           = New(`SELECT board, settled_ms, runs, players, paid, epoch, holder FROM tournament_settlements ORDER BY board`)
	Lease                 = New("SELECT holder, epoch, expires_ms FROM leases WHERE name = ?")
	Joins                 = New("SELECT player, n, at_ms FROM tournament_joins WHERE board = ? AND n > ? ORDER BY n")
	Payouts               = New(`SELECT player, rank, points, at_ms FROM tournament_payouts WHERE board = ? ORDER BY player`)
	ReleaseLease          = New("UPDATE leases SET expires_ms = 0 WHERE name = ? AND holder = ? AND epoch = ?")
)
