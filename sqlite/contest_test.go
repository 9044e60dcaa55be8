package sqlite

import (
	"testing"

	"github.com/podiumhq/podium/contest"
	"github.com/podiumhq/podium/storetest"
)

func TestContestContract(t *testing.T) {
	storetest.RunContests(t, func(t *testing.T) contest.Store { return openTest(t, Options{}) })
}
