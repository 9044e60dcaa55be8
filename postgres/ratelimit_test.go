package postgres

import (
	"testing"

	"github.com/podiumhq/podium/ratelimit"
	"github.com/podiumhq/podium/ratelimit/ratelimittest"
)

func TestRateLimitsContract(t *testing.T) {
	ratelimittest.Run(t, func(t *testing.T) ratelimit.Store {
		s, _ := openTest(t, Options{})
		return s.RateLimits()
	})
}
