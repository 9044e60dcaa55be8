package ratelimit_test

import (
	"testing"

	"github.com/podiumhq/podium/ratelimit"
)

func TestBucketName(t *testing.T) {
	for _, tc := range []struct {
		b      ratelimit.Bucket
		values []string
		want   string
	}{
		{ratelimit.AuthFail, []string{"203.0.113.7"}, "auth:ip:203.0.113.7"},
		{ratelimit.Submit, []string{"key", "k_1", "chess"}, "submit:key:k_1:chess"},
		{ratelimit.Request, []string{"player", ""}, "request:player:-"},
		{ratelimit.EvidenceGlobal, nil, "evidence:global"},
	} {
		if got := tc.b.Name(tc.values...); got != tc.want {
			t.Errorf("%q.Name(%q) = %q, want %q", tc.b.Pattern, tc.values, got, tc.want)
		}
	}
	for _, values := range [][]string{{"a"}, {"a", "b", "c", "d"}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Submit.Name(%q) did not panic", values)
				}
			}()
			ratelimit.Submit.Name(values...)
		}()
	}
}
