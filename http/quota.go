package http

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/podiumhq/podium"
)

// Board quotas and key bounds in the API (issue 9, sections 2 and 3).

// appendKeyBounds writes a key definition's "min" and "max" when set.
func appendKeyBounds(b []byte, k *podium.KeyDef) []byte {
	if k.Min != nil {
		b = append(b, `,"min":`...)
		b = strconv.AppendInt(b, *k.Min, 10)
	}
	if k.Max != nil {
		b = append(b, `,"max":`...)
		b = strconv.AppendInt(b, *k.Max, 10)
	}
	return b
}

// appendQuota writes a board's "quota" when it has one.
func appendQuota(b []byte, q *podium.Quota) []byte {
	if q == nil {
		return b
	}
	b = append(b, `,"quota":{"max":`...)
	b = strconv.AppendInt(b, int64(q.Max), 10)
	return append(b, '}')
}

// quotaError returns err's *podium.QuotaError, nil if it has none.
func quotaError(err error) *podium.QuotaError {
	var qe *podium.QuotaError
	if errors.As(err, &qe) {
		return qe
	}
	return nil
}

// setQuotaRetry sets Retry-After to the whole seconds until the quota
// resets, at least 1 (the contract never sends 0), and makes the
// rate-limit headers describe the quota that refused, not the request's
// rate-limit bucket: that bucket had room (its RateLimit would say r=5999
// beside a 429), so on a quota refusal RateLimit-Policy is the quota,
// "quota";q=<max>;w=<window seconds>, and RateLimit its state, spent:
// "quota";r=0;t=<seconds to the reset>.
func setQuotaRetry(h http.Header, qe *podium.QuotaError) {
	t := strconv.FormatInt(max(1, ceilSeconds(qe.RetryAfter)), 10)
	h.Set("Retry-After", t)
	h.Set("RateLimit-Policy", `"quota";q=`+strconv.Itoa(qe.Max)+";w="+strconv.FormatInt(max(1, ceilSeconds(qe.Window)), 10))
	h.Set("RateLimit", `"quota";r=0;t=`+t)
}

// appendQuotaErrorBody writes the error envelope of a quota refusal: the
// usual code and message, and "resets_at", when the player may submit
// again.
func appendQuotaErrorBody(b []byte, qe *podium.QuotaError) []byte {
	b = append(b, `{"error":{"code":`...)
	b = appendString(b, qe.Err.Code)
	b = append(b, `,"message":`...)
	b = appendString(b, qe.Err.Message)
	b = append(b, `,"resets_at":`...)
	b = appendTime(b, qe.ResetsAt)
	return append(b, "}}"...)
}
