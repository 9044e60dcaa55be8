package engine

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/podiumhq/podium"
)

// TestRowsThenLog: the rows notices carried are applied when they follow
// on from the node's seq; a gap before them, or rows that stop short of
// the head, send the reader to the log for what is missing.
func TestRowsThenLog(t *testing.T) {
	logged := func(from, to uint64) []string {
		var s []string
		for q := from; q <= to; q++ {
			s = append(s, fmt.Sprint("log", q))
		}
		return s
	}
	for _, tc := range []struct {
		name        string
		rows        []uint64
		after, head uint64
		want        []string
	}{
		{"follows on", []uint64{11, 12, 13}, 10, 13, []string{"row11", "row12", "row13"}},
		{"out of order and duplicated", []uint64{13, 11, 12, 12}, 10, 13, []string{"row11", "row12", "row13"}},
		{"already applied in part", []uint64{9, 10, 11}, 10, 11, []string{"row11"}},
		{"a gap before them", []uint64{12, 13}, 10, 13, logged(11, 13)},
		{"short of the head", []uint64{11, 12}, 10, 15, append([]string{"row11", "row12"}, logged(13, 15)...)},
		{"a gap inside", []uint64{11, 13}, 10, 13, append([]string{"row11"}, logged(12, 13)...)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var rows []podium.Row
			for _, q := range tc.rows {
				rows = append(rows, podium.Row{Seq: q, Period: "all", Player: fmt.Sprint("row", q), Keys: []int64{1}})
			}
			log := func(ctx context.Context, board string, after uint64, fn func(*podium.Submission) error) error {
				for q := after + 1; q <= tc.head; q++ {
					if err := fn(&podium.Submission{Seq: q, Board: board, Player: fmt.Sprint("log", q)}); err != nil {
						return err
					}
				}
				return nil
			}
			var got []string
			err := rowsThenLog(rows, tc.head, log)(context.Background(), "b", tc.after, func(s *podium.Submission) error {
				if s.Board != "b" {
					t.Fatalf("board %q", s.Board)
				}
				got = append(got, s.Player)
				return nil
			})
			if err != nil || fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Fatalf("read %v (%v), want %v", got, err, tc.want)
			}
		})
	}
}

// TestUpTo: a bounded read stops at the head, whatever the log holds past
// it, and passes on the reader's own errors.
func TestUpTo(t *testing.T) {
	log := func(ctx context.Context, board string, after uint64, fn func(*podium.Submission) error) error {
		for q := after + 1; q <= 20; q++ {
			if err := fn(&podium.Submission{Seq: q, Board: board}); err != nil {
				return err
			}
		}
		return nil
	}
	var got []uint64
	err := upTo(13, log)(context.Background(), "b", 10, func(s *podium.Submission) error {
		got = append(got, s.Seq)
		return nil
	})
	if err != nil || fmt.Sprint(got) != "[11 12 13]" {
		t.Fatalf("read %v (%v), want [11 12 13]", got, err)
	}
	stop := errors.New("stop")
	if err := upTo(13, log)(context.Background(), "b", 10, func(*podium.Submission) error { return stop }); err != stop {
		t.Fatalf("the reader's error: %v", err)
	}
}
