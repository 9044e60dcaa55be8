package sqlstore

// Leagues (podium.LeagueStore): placements, periods, results and tiers,
// and what deleting a board deletes of them.
var (
	DeleteBoardLeaguePeriods = New("DELETE FROM league_periods WHERE board = ?")
	DeleteBoardLeagueMembers = New("DELETE FROM league_members WHERE board = ?")
	DeleteBoardLeagueResults = New("DELETE FROM league_results WHERE board = ?")
	DeleteBoardLeagueTiers   = New("DELETE FROM league_tiers WHERE board = ?")

	LeagueMembers = New(`SELECT player, tier, cohort, seq, at_ms FROM league_members
		WHERE board = ? AND period = ? AND seq > ? ORDER BY seq`)
	// LeagueCohort names its index on SQLite: without it the planner
	// walks the period's placements in seq order (league_members_seq, or
	// the primary key) to avoid sorting ≤ cohort_size rows, 85 ms at
	// 100,000 placements (BenchmarkLeagueCohortRead), where the cohort's
	// index finds them directly.
	LeagueCohort = Stmt{SQLite: `SELECT player, tier, cohort, seq, at_ms FROM league_members INDEXED BY league_members_cohort
		WHERE board = ? AND period = ? AND tier = ? AND cohort = ? ORDER BY seq`,
		Postgres: Dollar(`SELECT player, tier, cohort, seq, at_ms FROM league_members
		WHERE board = ? AND period = ? AND tier = ? AND cohort = ? ORDER BY seq`)}
	LeagueMember = New(`SELECT player, tier, cohort, seq, at_ms FROM league_members
		WHERE board = ? AND period = ? AND player = ?`)
	LeagueCohorts = New(`SELECT cohort, count(*) FROM league_members WHERE board = ? AND period = ? AND tier = ?
		GROUP BY cohort ORDER BY cohort LIMIT ? OFFSET ?`)
	LeagueTierCounts = New("SELECT tier, count(*) FROM league_members WHERE board = ? AND period = ? GROUP BY tier ORDER BY tier")
	LeagueTiers      = New("SELECT player, tier FROM league_tiers WHERE board = ? ORDER BY player")
	// LeagueTiersPage is the league export's page of tiers: a keyset on
	// the primary key (board, player), so a page reads limit rows however
	// many players the league has.
	LeagueTiersPage  = New("SELECT player, tier FROM league_tiers WHERE board = ? AND player > ? ORDER BY player LIMIT ?")
	LeaguePlayerTier = New("SELECT tier FROM league_tiers WHERE board = ? AND player = ?")
	LeaguePeriods    = New(`SELECT period, start_ms, settled_ms, players, promoted, relegated, epoch, holder
		FROM league_periods WHERE board = ? ORDER BY start_ms`)
	LeagueResults = Stmt{SQLite: `SELECT player, tier, cohort, rank, outcome, new_tier FROM league_results INDEXED BY league_results_period
		WHERE board = ? AND period = ? ORDER BY player`,
		Postgres: Dollar(`SELECT player, tier, cohort, rank, outcome, new_tier FROM league_results
		WHERE board = ? AND period = ? ORDER BY player`)}
	// LeagueResultsPage is the league export's page of a period's results,
	// served by league_results_period (board, period, player): migration
	// 0160. The primary key (board, player, period) would walk every
	// period's rows of the players after the cursor to find one period's,
	// and SQLite's planner, without statistics, prefers it (EXPLAIN QUERY
	// PLAN: "USING PRIMARY KEY (board=? AND player>?)"), so the SQLite
	// statement, and LeagueResults', name the index.
	LeagueResultsPage = Stmt{SQLite: `SELECT player, tier, cohort, rank, outcome, new_tier FROM league_results INDEXED BY league_results_period
		WHERE board = ? AND period = ? AND player > ? ORDER BY player LIMIT ?`,
		Postgres: Dollar(`SELECT player, tier, cohort, rank, outcome, new_tier FROM league_results
		WHERE board = ? AND period = ? AND player > ? ORDER BY player LIMIT ?`)}
	LeagueHistory = New(`SELECT period, tier, cohort, rank, outcome, new_tier FROM league_results
		WHERE board = ? AND player = ? ORDER BY period DESC LIMIT ?`)

	InsertLeaguePeriod = New(`INSERT INTO league_periods (board, period, start_ms) VALUES (?, ?, ?)
		ON CONFLICT (board, period) DO NOTHING`)
	SettleLeaguePeriod = New(`INSERT INTO league_periods (board, period, start_ms, settled_ms, players, promoted, relegated, epoch, holder)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (board, period) DO UPDATE SET settled_ms = excluded.settled_ms,
		players = excluded.players, promoted = excluded.promoted, relegated = excluded.relegated, epoch = excluded.epoch,
		holder = excluded.holder`)
	InsertLeagueMember = New(`INSERT INTO league_members (board, period, player, tier, cohort, seq, at_ms) VALUES (?, ?, ?, ?, ?, ?, ?)`)
	InsertLeagueResult = New(`INSERT INTO league_results (board, player, period, tier, cohort, rank, outcome, new_tier)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (board, player, period) DO UPDATE SET tier = excluded.tier,
		cohort = excluded.cohort, rank = excluded.rank, outcome = excluded.outcome, new_tier = excluded.new_tier`)
	UpsertLeagueTier = New(`INSERT INTO league_tiers (board, player, tier) VALUES (?, ?, ?)
		ON CONFLICT (board, player) DO UPDATE SET tier = excluded.tier`)
)
