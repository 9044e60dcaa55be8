package postgres

import (
	"testing"
	"time"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/storetest"
)

// suiteLockTimeout is the lock timeout of the stores the shared contract
// suite runs on: long enough for its short holds on a loaded machine,
// short enough for its one wait for the timeout.
const suiteLockTimeout = 2 * time.Second

func TestSharedContract(t *testing.T) {
	storetest.RunShared(t, func(t *testing.T) podium.SharedStore {
		s, _ := openTest(t, Options{LockTimeout: suiteLockTimeout})
		return s
	})
}
