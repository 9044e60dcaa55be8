package webhooks_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/podiumhq/podium/webhooks"
)

// The Standard Webhooks specification's published vector: a receiver
// using any of its libraries verifies podium's deliveries.
const (
	vecSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	vecID     = "msg_p5jXN8AQM9LWM0D4loKWxJek"
	vecTS     = 1614265330
	vecBody   = `{"test": 2432232314}`
	vecSig    = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
)

func TestSignVector(t *testing.T) {
	key, err := webhooks.ParseSecret(vecSecret)
	if err != nil {
		t.Fatal(err)
	}
	if got := webhooks.Sign(key, vecID, vecTS, []byte(vecBody)); got != vecSig {
		t.Fatalf("Sign = %s, want %s", got, vecSig)
	}
}

func TestVerify(t *testing.T) {
	at := time.Unix(vecTS, 0)
	cases := []struct {
		name      string
		secret    string
		id, ts    string
		sig, body string
		now       time.Time
		want      error
	}{
		{"OK", vecSecret, vecID, "1614265330", vecSig, vecBody, at, nil},
		{"WithoutPrefix", strings.TrimPrefix(vecSecret, "whsec_"), vecID, "1614265330", vecSig, vecBody, at, nil},
		{"Rotation", vecSecret, vecID, "1614265330", "v1,AAAA " + vecSig, vecBody, at.Add(time.Minute), nil},
		{"TamperedBody", vecSecret, vecID, "1614265330", vecSig, `{"test": 2432232315}`, at, webhooks.ErrNoSignature},
		{"OtherID", vecSecret, "msg_other", "1614265330", vecSig, vecBody, at, webhooks.ErrNoSignature},
		{"OtherTimestamp", vecSecret, vecID, "1614265331", vecSig, vecBody, at, webhooks.ErrNoSignature},
		{"OtherVersion", vecSecret, vecID, "1614265330", "v2," + strings.TrimPrefix(vecSig, "v1,"), vecBody, at, webhooks.ErrNoSignature},
		{"Stale", vecSecret, vecID, "1614265330", vecSig, vecBody, at.Add(6 * time.Minute), webhooks.ErrBadTimestamp},
		{"Future", vecSecret, vecID, "1614265330", vecSig, vecBody, at.Add(-6 * time.Minute), webhooks.ErrBadTimestamp},
		{"BadTimestamp", vecSecret, vecID, "soon", vecSig, vecBody, at, webhooks.ErrBadTimestamp},
		{"BadSecret", "whsec_c2hvcnQ=", vecID, "1614265330", vecSig, vecBody, at, webhooks.ErrBadSecret},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := webhooks.Verify(c.secret, c.id, c.ts, c.sig, []byte(c.body), c.now, 0)
			if !errors.Is(err, c.want) {
				t.Fatalf("Verify = %v, want %v", err, c.want)
			}
		})
	}
}

func TestNewSecret(t *testing.T) {
	a, b := webhooks.NewSecret(), webhooks.NewSecret()
	if a == b || !strings.HasPrefix(a, "whsec_") {
		t.Fatalf("NewSecret = %q, %q", a, b)
	}
	key, err := webhooks.ParseSecret(a)
	if err != nil || len(key) != 32 {
		t.Fatalf("ParseSecret(NewSecret()) = %d bytes, %v", len(key), err)
	}
}
