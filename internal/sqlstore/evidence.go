package sqlstore

// evidenceCols and evidenceWhere select an unexpired attachment of a
// submission with its content's hashes and sizes.
const (
	evidenceCols = `e.board, e.player, e.seq, e.content_sha256, c.compressed_sha256, c.bytes, c.inflated_bytes, c.events,
	e.created_ms, e.expires_ms, e.promoted_ms`
	evidenceWhere = ` FROM evidence e JOIN evidence_content c ON c.player = e.player AND c.content_sha256 = e.content_sha256
	WHERE e.board = ? AND e.player = ? AND e.seq = ? AND (e.expires_ms IS NULL OR e.expires_ms > ?)`
)

// Evidence uploads (podium.EvidenceStore).
var (
	Evidence      = New("SELECT " + evidenceCols + evidenceWhere)
	EvidenceData  = New("SELECT " + evidenceCols + ", c.data" + evidenceWhere)
	PlayerContent = New("SELECT compressed_sha256 FROM evidence_content WHERE player = ? AND content_sha256 = ?")

	InsertEvidence = New(`INSERT INTO evidence (board, player, seq, content_sha256, created_ms, expires_ms, promoted_ms)
		VALUES (?, ?, ?, ?, ?, ?, ?)`)
	InsertContent = New(`INSERT INTO evidence_content (player, content_sha256, compressed_sha256, bytes, inflated_bytes,
		events, data, refs, created_ms) VALUES (?, ?, ?, ?, ?, ?, ?, 1, ?)`)
	RefContent          = New("UPDATE evidence_content SET refs = refs + 1 WHERE player = ? AND content_sha256 = ?")
	UnrefContent        = New("UPDATE evidence_content SET refs = refs - ? WHERE player = ? AND content_sha256 = ?")
	DeleteUnusedContent = New("DELETE FROM evidence_content WHERE player = ? AND content_sha256 = ? AND refs <= 0")

	// PromoteEvidence's first and last parameters are both the time of
	// the promotion.
	PromoteEvidence = New(`UPDATE evidence SET promoted_ms = ?, expires_ms = ? WHERE board = ? AND player = ? AND seq = ?
		AND promoted_ms IS NULL AND (expires_ms IS NULL OR expires_ms > ?)`)
)
