package client_test

import (
	"context"
	"fmt"
	"os"

	"github.com/podiumhq/podium/client"
)

// The README's example; compiled with the tests so that it stays right.
func Example() {
	ctx := context.Background()
	c := client.New("http://localhost:8080", client.WithKey(os.Getenv("PODIUM_KEY")))
	res, err := c.Submit(ctx, "ms:expert", client.Score{Player: "alice", Keys: []int64{41234, 150}})
	if err == nil {
		fmt.Println("rank", res.Entry.Rank, "improved", res.Improved)
	}
	top, err := c.Top(ctx, "ms:expert", 0, 10, client.ReadOptions{})
	_, err = c.Entry(ctx, "ms:expert", "bob", client.ReadOptions{}) // client.IsNotFound(err) if none
	err = c.Watch(ctx, "ms:expert", client.WatchOptions{Limit: 10}, func(s client.State, u client.Update) {
		fmt.Println(s.Seq, s.Entries) // the live top 10: snapshots, deltas, resume and resync handled
	})
	_, _ = top, err
}
