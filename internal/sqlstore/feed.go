package sqlstore

// The activity feed (podium.FeedStore).
var (
	FeedBoardsOver = New("SELECT board FROM feed GROUP BY board HAVING count(*) > ?")
	SelectFeed     = New("SELECT board, seq, kind, at_ms, period, player, keys, old, other, data FROM feed")
)
