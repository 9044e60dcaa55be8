package sqlstore

// ReviewCols are the columns of a review item, in the order the stores
// scan and insert them.
const ReviewCols = "id, board, period, player, keys, meta, submitted_ms, reason, status, decided_ms, decided_by, note, seq"

// Moderation (podium.ReviewStore): review items and freezes.
// SelectReviewItems is the head of a query the stores complete with a
// filter.
var (
	DeleteFreeze = New("DELETE FROM frozen_players WHERE player = ?")
	PutFreeze    = New(`INSERT INTO frozen_players (player, frozen_by, reason, at_ms) VALUES (?, ?, ?, ?)
		ON CONFLICT (player) DO UPDATE SET frozen_by = excluded.frozen_by, reason = excluded.reason, at_ms = excluded.at_ms`)
	ReviewItem        = New("SELECT " + ReviewCols + " FROM review_items WHERE id = ?")
	SelectReviewItems = New("SELECT " + ReviewCols + " FROM review_items")
	Freezes           = New("SELECT player, frozen_by, reason, at_ms FROM frozen_players ORDER BY player")
	LoadFreeze        = New("SELECT player, frozen_by, reason, at_ms FROM frozen_players WHERE player = ?")
)
