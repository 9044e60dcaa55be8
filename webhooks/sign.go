package webhooks

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"strconv"
	"strings"
	"time"
)

// Signatures follow the Standard Webhooks convention
// (https://www.standardwebhooks.com): every delivery carries the headers
//
//	webhook-id:        the event's id (the same on every retry: deduplicate by it)
//	webhook-timestamp: the attempt's time, in unix seconds
//	webhook-signature: v1,<base64 of HMAC-SHA256(key, id + "." + timestamp + "." + body)>
//
// where key is the endpoint's secret "whsec_<base64 of the key>" decoded.
// While a secret is rotated the header may carry several signatures,
// separated by spaces; one that verifies is enough.

// Header names of a delivery.
const (
	HeaderID        = "webhook-id"
	HeaderTimestamp = "webhook-timestamp"
	HeaderSignature = "webhook-signature"
)

// secretPrefix starts every secret; keyBytes is the length of a key this
// module makes (the spec asks for 24 to 64 bytes).
const (
	secretPrefix = "whsec_"
	keyBytes     = 32
)

// DefaultTolerance is how far a delivery's timestamp may be from the
// receiver's clock before Verify refuses it (a replay).
const DefaultTolerance = 5 * time.Minute

// Errors of Verify and ParseSecret.
var (
	ErrBadSecret    = errors.New("webhooks: a secret is whsec_ followed by base64 of 24 to 64 bytes")
	ErrNoSignature  = errors.New("webhooks: no v1 signature matches")
	ErrBadTimestamp = errors.New("webhooks: the timestamp is missing, malformed or outside the tolerance")
)

// NewSecret returns a new random secret, "whsec_" and base64 of 32 bytes.
func NewSecret() string {
	b := make([]byte, keyBytes)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24+)
	return secretPrefix + base64.StdEncoding.EncodeToString(b)
}

// ParseSecret returns the key of a secret; the "whsec_" prefix is
// optional, as receivers often paste the secret without it. Errors:
// ErrBadSecret.
func ParseSecret(secret string) ([]byte, error) {
	s := strings.TrimPrefix(secret, secretPrefix)
	key, err := base64.StdEncoding.DecodeString(s)
	if err != nil || len(key) < 24 || len(key) > 64 {
		return nil, ErrBadSecret
	}
	return key, nil
}

// Sign returns the webhook-signature value of one delivery: "v1," and the
// base64 HMAC-SHA256 of id.timestamp.body under key.
func Sign(key []byte, id string, timestamp int64, body []byte) string {
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(id))
	mac.Write([]byte{'.'})
	mac.Write(strconv.AppendInt(nil, timestamp, 10))
	mac.Write([]byte{'.'})
	mac.Write(body)
	return "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil))
}

// Verify checks a delivery's headers against secret, as a receiver does:
// the timestamp within tolerance of now (0: DefaultTolerance) and one of
// the header's v1 signatures equal, in constant time, to the body's.
// Errors: ErrBadSecret, ErrBadTimestamp, ErrNoSignature.
func Verify(secret, id, timestamp, signatures string, body []byte, now time.Time, tolerance time.Duration) error {
	key, err := ParseSecret(secret)
	if err != nil {
		return err
	}
	if tolerance <= 0 {
		tolerance = DefaultTolerance
	}
	ts, err := strconv.ParseInt(timestamp, 10, 64)
	if err != nil {
		return ErrBadTimestamp
	}
	if d := now.Sub(time.Unix(ts, 0)); d > tolerance || d < -tolerance {
		return ErrBadTimestamp
	}
	want := []byte(Sign(key, id, ts, body))
	for _, sig := range strings.Fields(signatures) {
		if hmac.Equal([]byte(sig), want) {
			return nil
		}
	}
	return ErrNoSignature
}
