package sqlstore

// The columns of a contest and of an attempt, in the order the stores
// scan them.
const (
	contestCols = "id, body, created_ms, updated_ms, version, seq"
	attemptCols = "id, challenge, team, result, at_ms, key_id, seq, coalesce(idem, ''), correct"
)

// CTF contests (contest.Store).
var (
	DeleteChallenge = New("DELETE FROM contest_challenges WHERE contest = ? AND id = ?")
	DeleteContest   = New("DELETE FROM contests WHERE id = ?")
	PutChallenge    = New(`INSERT INTO contest_challenges (contest, id, body, ord, created_ms, updated_ms)
		VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (contest, id) DO UPDATE SET body = excluded.body, ord = excluded.ord,
		created_ms = excluded.created_ms, updated_ms = excluded.updated_ms`)
	PutSnapshot = New(`INSERT INTO contest_snapshots (contest, at_ms, seq, body) VALUES (?, ?, ?, ?)
		ON CONFLICT (contest, at_ms) DO NOTHING`)
	InsertSolve = New("INSERT INTO contest_solves (contest, seq, challenge, team, at_ms) VALUES (?, ?, ?, ?, ?)")
	PutContest  = New(`INSERT INTO contests (id, body, created_ms, updated_ms, version) VALUES (?, ?, ?, ?, 1)
		ON CONFLICT (id) DO UPDATE SET body = excluded.body, created_ms = excluded.created_ms,
		updated_ms = excluded.updated_ms, version = contests.version + 1`)
	SnapshotTimes = New("SELECT at_ms FROM contest_snapshots WHERE contest = ? ORDER BY at_ms")
	SnapshotAt    = New(`SELECT at_ms, seq, body FROM contest_snapshots WHERE contest = ? AND at_ms <= ?
		ORDER BY at_ms DESC LIMIT 1`)
	ChallengeSolves = New("SELECT count(*) FROM contest_solves WHERE contest = ? AND challenge = ?")
	Contests        = New("SELECT " + contestCols + " FROM contests ORDER BY id")
	LoadContest     = New("SELECT " + contestCols + " FROM contests WHERE id = ?")
	Challenges      = New(`SELECT id, body, ord, created_ms, updated_ms FROM contest_challenges
		WHERE contest = ? ORDER BY ord, id`)
	Attempts = New("SELECT " + attemptCols + ` FROM contest_attempts
		WHERE contest = ? AND id > ? ORDER BY id LIMIT ?`)
	AttemptByKey = New("SELECT " + attemptCols + ` FROM contest_attempts
		WHERE contest = ? AND key_id = ? AND idem = ?`)
	Solves = New(`SELECT seq, challenge, team, at_ms FROM contest_solves
		WHERE contest = ? AND seq > ? ORDER BY seq`)
	SetContestSeq      = New("UPDATE contests SET seq = ? WHERE id = ?")
	BumpContestVersion = New("UPDATE contests SET version = version + 1 WHERE id = ?")
)
