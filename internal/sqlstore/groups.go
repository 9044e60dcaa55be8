package sqlstore

// Groups (podium.GroupStore): the membership changes of group sets.
var (
	GroupChanges      = New("SELECT n, grp, player, joined, at_ms FROM group_changes WHERE set_board = ? AND n > ? ORDER BY n")
	DeleteGroupSet    = New("DELETE FROM group_changes WHERE set_board = ?")
	InsertGroupChange = New("INSERT INTO group_changes (set_board, n, grp, player, joined, at_ms) VALUES (?, ?, ?, ?, ?, ?)")
)
