package http

import (
	"context"
	"time"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/engine"
	"github.com/podiumhq/podium/league"
	"github.com/podiumhq/podium/tournament"
)

// The groups of routes that a module serves (player sessions, evidence,
// review),
// on an engine without that module: wire gives them these, which answer
// every route 503 unavailable, as a store that keeps neither did.

// noSessions serves a server whose engine has no sessions module: every
// route answers 503, as with a store that keeps none.
type noSessions struct{}

var errNoSessions = podium.Errorf(podium.ECodeUnavailable, "this server keeps no player sessions")

func (noSessions) SessionDefaults() (time.Duration, time.Duration, int) {
	return podium.DefaultSessionTTL, podium.DefaultSessionMaxTTL, podium.DefaultSessionCap
}
func (noSessions) IssueSession(context.Context, string, string, time.Duration, string) (podium.Session, string, error) {
	return podium.Session{}, "", errNoSessions
}
func (noSessions) SessionByMarker(context.Context, string) (*podium.Session, error) {
	return nil, errNoSessions
}
func (noSessions) PlayerSessions(context.Context, string) ([]podium.Session, error) {
	return nil, errNoSessions
}
func (noSessions) RevokeSessions(context.Context, string, string) ([]string, error) {
	return nil, errNoSessions
}
func (noSessions) RefreshSession(context.Context, string, string) (podium.Session, string, error) {
	return podium.Session{}, "", errNoSessions
}

// noEvidence serves a server whose engine has no evidence module: the
// routes answer 503, as with a store that keeps none, and the review queue
// shows no evidence.
type noEvidence struct{}

var errNoEvidence = podium.Errorf(podium.ECodeUnavailable, "this server keeps no evidence")

func (noEvidence) EvidenceTarget(context.Context, string, string, uint64) (uint64, string, engine.BoardInfo, error) {
	return 0, "", engine.BoardInfo{}, errNoEvidence
}
func (noEvidence) HeldEvidenceTarget(context.Context, string, string, string) (uint64, engine.BoardInfo, error) {
	return 0, engine.BoardInfo{}, errNoEvidence
}
func (noEvidence) Evidence(context.Context, string, string, uint64) (*podium.Evidence, error) {
	return nil, errNoEvidence
}
func (noEvidence) EvidenceData(context.Context, string, string, uint64) (*podium.Evidence, []byte, error) {
	return nil, nil, errNoEvidence
}
func (noEvidence) PlayerContent(context.Context, string, string) (string, bool, error) {
	return "", false, errNoEvidence
}
func (noEvidence) StoreEvidence(context.Context, podium.Evidence, []byte, string) (podium.Evidence, podium.EvidenceOutcome, error) {
	return podium.Evidence{}, 0, errNoEvidence
}
func (noEvidence) HeldItem(context.Context, string, string, string) (*podium.ReviewItem, error) {
	return nil, errNoEvidence
}
func (noEvidence) ItemEvidence(context.Context, *podium.ReviewItem) (*podium.Evidence, error) {
	return nil, errNoEvidence
}
func (noEvidence) ItemEvidenceData(context.Context, *podium.ReviewItem) (*podium.Evidence, []byte, error) {
	return nil, nil, errNoEvidence
}

// noReview serves a server whose engine has no review module: every route
// answers 503, as with a store that keeps no review queue, and no player
// is frozen.
type noReview struct{}

var errNoReview = podium.Errorf(podium.ECodeUnavailable, "this store keeps no review queue")

func (noReview) ReviewItems(context.Context, podium.ReviewFilter) ([]podium.ReviewItem, error) {
	return nil, errNoReview
}
func (noReview) ReviewItem(context.Context, string) (*podium.ReviewItem, error) {
	return nil, errNoReview
}
func (noReview) Approve(context.Context, string, string, string) (*podium.ReviewItem, engine.Result, error) {
	return nil, engine.Result{}, errNoReview
}
func (noReview) Reject(context.Context, string, string, string) (*podium.ReviewItem, error) {
	return nil, errNoReview
}
func (noReview) History(context.Context, string, string, uint64, int) ([]podium.HistoryRow, uint64, error) {
	return nil, 0, errNoReview
}
func (noReview) ReviewEvidence(context.Context, string, string, uint64, string) ([]byte, bool, error) {
	return nil, false, nil
}
func (noReview) Freeze(context.Context, string, string, string) (podium.Freeze, error) {
	return podium.Freeze{}, errNoReview
}
func (noReview) Unfreeze(context.Context, string) error { return errNoReview }
func (noReview) Frozen(string) *podium.Freeze           { return nil }

// noTournaments serves the tournaments of a server whose engine has no
// tournament module: they answer 503, as with a store that keeps none,
// and the admin's check and reload find no settlements to check.
type noTournaments struct{}

var errNoTournaments = podium.Errorf(podium.ECodeUnavailable, "this server keeps no tournaments")

func (noTournaments) Join(context.Context, string, string) (tournament.JoinResult, error) {
	return tournament.JoinResult{}, errNoTournaments
}
func (noTournaments) Joined(context.Context, string, int, int) ([]podium.Join, int64, error) {
	return nil, 0, errNoTournaments
}
func (noTournaments) Payouts(context.Context, string) ([]podium.Payout, error) {
	return nil, errNoTournaments
}
func (noTournaments) Tournament(context.Context, string) (tournament.TournamentStatus, error) {
	return tournament.TournamentStatus{}, errNoTournaments
}
func (noTournaments) Settle(context.Context, string) (tournament.SettleReport, error) {
	return tournament.SettleReport{}, errNoTournaments
}
func (noTournaments) CheckSettlements(context.Context) ([]engine.Diff, error) { return nil, nil }
func (noTournaments) RepairSettlements(context.Context) ([]string, error)     { return nil, nil }

// noLeagues serves the leagues of a server whose engine has no league
// module: 503.
type noLeagues struct{}

var errNoLeagues = podium.Errorf(podium.ECodeUnavailable, "this server keeps no leagues")

func (noLeagues) Status(context.Context, string) (league.Status, error) {
	return league.Status{}, errNoLeagues
}
func (noLeagues) Standing(context.Context, string, string, string) (league.Standing, error) {
	return league.Standing{}, errNoLeagues
}
func (noLeagues) Cohort(context.Context, string, string, int, int) (league.Cohort, error) {
	return league.Cohort{}, errNoLeagues
}
func (noLeagues) Cohorts(context.Context, string, string, int, int, int) ([]podium.CohortCount, int64, string, error) {
	return nil, 0, "", errNoLeagues
}
func (noLeagues) History(context.Context, string, string) ([]league.HistoryItem, error) {
	return nil, errNoLeagues
}
func (noLeagues) Settle(context.Context, string) ([]league.SettleReport, error) {
	return nil, errNoLeagues
}
