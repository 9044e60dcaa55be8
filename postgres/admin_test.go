package postgres

import (
	"testing"

	"github.com/podiumhq/podium"
)

// Two keys with one secret are a conflict at the boundary; replacing a key
// by id may change its secret.
func TestPutKeyDuplicateHash(t *testing.T) {
	s, _ := openTest(t, Options{})
	k1 := &podium.APIKey{ID: "k1", Name: "a", Scopes: []string{"read"}, Hash: "same"}
	k2 := &podium.APIKey{ID: "k2", Name: "b", Scopes: []string{"read"}, Hash: "same"}
	if err := s.PutKey(ctx, k1); err != nil {
		t.Fatal(err)
	}
	if err := s.PutKey(ctx, k2); podium.ErrorCode(err) != podium.ECodeConflict {
		t.Errorf("PutKey with another key's hash = %v, want %s", err, podium.ECodeConflict)
	}
	k1.Hash = "rotated"
	if err := s.PutKey(ctx, k1); err != nil {
		t.Fatalf("PutKey replacing k1: %v", err)
	}
	ks, err := s.Keys(ctx)
	if err != nil || len(ks) != 1 || ks[0].Hash != "rotated" {
		t.Fatalf("Keys = %+v, %v; want only k1 with the new hash", ks, err)
	}
	if ks[0].Boards == nil || len(ks[0].Boards) != 0 {
		t.Errorf("a key stored without boards reads back with Boards %#v, want an empty slice", ks[0].Boards)
	}
}
