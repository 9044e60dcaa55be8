package engine

import "github.com/podiumhq/podium"

// evidenceFollow says where an approval's held evidence goes: to the
// approved seq, promoted at the approval's time to the board's retention
// (nil when the store keeps no evidence). On the writer. The approval's
// batch carries it, so the move commits with the approval; the rest of
// evidence is a module (package evidence).
func (e *Engine) evidenceFollow(s *Score) *podium.EvidenceFollow {
	if _, ok := e.store.(podium.EvidenceStore); !ok {
		return nil
	}
	var pol *podium.EvidencePolicy
	if bs := e.board(s.Board); bs != nil {
		pol = bs.def.Load().Evidence
	}
	return &podium.EvidenceFollow{Board: s.Board, Player: s.Player, Expires: pol.RetentionEnd(s.approval.At)}
}
