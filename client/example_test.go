package client_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/podiumhq/podium/client"
)

// The README's example; compiled with the tests so that it stays right.
// (It has no output to check: it needs a server at localhost:8080. The
// examples below run against a podium in the test process.)
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

// expertBoard creates the board of the examples, ms:expert (the lowest
// time wins, the higher 3BV breaks ties), and submits five players'
// times: alice 41.2 s, bob 39.9 s, carol 45.0 s, dave 52.3 s, erin 39.9 s
// with a higher 3BV than bob's.
func expertBoard(c *client.Client) {
	ctx := context.Background()
	_, _, err := c.PutBoard(ctx, "ms:expert", client.BoardSpec{Title: "Expert",
		Keys: []client.RankKey{{Name: "time_ms", Order: "asc", Format: "duration_ms"}, {Name: "bbbv", Order: "desc"}},
		Mode: "best", Public: client.Bool(true)})
	if err != nil {
		log.Fatal(err)
	}
	for _, s := range []client.Score{
		{Player: "alice", Keys: []int64{41200, 150}}, {Player: "bob", Keys: []int64{39900, 140}},
		{Player: "carol", Keys: []int64{45000, 160}}, {Player: "dave", Keys: []int64{52300, 120}},
		{Player: "erin", Keys: []int64{39900, 170}},
	} {
		if _, err := c.Submit(ctx, "ms:expert", s); err != nil {
			log.Fatal(err)
		}
	}
}

// PutBoard creates a board (created is true) or updates it, keeping what
// the spec leaves out. A board ranks by its RankKeys in turn: here the
// lowest time, then the highest 3BV. Mode best keeps each player's best
// submission; reset every day starts a new period at midnight in TZ.
func ExampleClient_PutBoard() {
	url, stop := startPodium()
	defer stop()
	ctx := context.Background()
	admin := client.New(url, client.WithKey(adminKey))

	b, created, err := admin.PutBoard(ctx, "ms:daily", client.BoardSpec{
		Title: "Expert, today",
		Keys: []client.RankKey{
			{Name: "time_ms", Order: "asc", Label: "Time", Format: "duration_ms"},
			{Name: "bbbv", Order: "desc", Label: "3BV"},
		},
		Mode:   "best",
		Reset:  &client.Reset{Every: "day", TZ: "UTC"},
		Public: client.Bool(true),
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(b.ID, "created:", created, "mode:", b.Mode, "reset:", b.Reset.Every, "keys:", b.Keys[0].Name, b.Keys[1].Name)

	// A second PUT updates: only the title changes.
	b, created, err = admin.PutBoard(ctx, "ms:daily", client.BoardSpec{Title: "Expert (daily)"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(b.Title, "created:", created, "keys kept:", len(b.Keys))
	// Output:
	// ms:daily created: true mode: best reset: day keys: time_ms bbbv
	// Expert (daily) created: false keys kept: 2
}

// Submit ranks a player's result and answers the entry it left, with the
// player's rank: res.Entry.Rank. Improved says whether the submission
// changed the entry (on a best board, whether it beat the player's best).
func ExampleClient_Submit() {
	url, stop := startPodium()
	defer stop()
	ctx := context.Background()
	admin := client.New(url, client.WithKey(adminKey))
	expertBoard(admin)

	res, err := admin.Submit(ctx, "ms:expert", client.Score{Player: "frank", Keys: []int64{40000, 155}})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("frank is #", res.Entry.Rank, "improved:", res.Improved)

	// A slower time does not replace frank's best: his rank stays.
	res, err = admin.Submit(ctx, "ms:expert", client.Score{Player: "frank", Keys: []int64{60000, 155}})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("frank is #", res.Entry.Rank, "improved:", res.Improved, "best:", res.Entry.Keys)
	// Output:
	// frank is # 3 improved: true
	// frank is # 3 improved: false best: [40000 155]
}

// SubmitBatch sends submissions to several boards in one request. Each
// result has its own Error: the others are applied regardless.
func ExampleClient_SubmitBatch() {
	url, stop := startPodium()
	defer stop()
	ctx := context.Background()
	admin := client.New(url, client.WithKey(adminKey))
	expertBoard(admin)

	results, err := admin.SubmitBatch(ctx, []client.Score{
		{Board: "ms:expert", Player: "frank", Keys: []int64{38000, 150}},
		{Board: "ms:expert", Player: "gina", Keys: []int64{1}}, // one key on a two-key board
		{Board: "ms:nope", Player: "hal", Keys: []int64{1, 2}},
	})
	if err != nil {
		log.Fatal(err)
	}
	for i, r := range results {
		if r.Error != nil {
			fmt.Println(i, "refused:", r.Error.Code)
			continue
		}
		fmt.Println(i, r.Player, "is #", r.Entry.Rank)
	}
	// Output:
	// 0 frank is # 1
	// 1 refused: invalid_argument
	// 2 refused: board_not_found
}

// Top reads a page of the ranking: Top(ctx, board, offset, limit, ...)
// skips offset entries and answers at most limit (the server caps it at
// 1,000). Total counts every entry, for paging.
func ExampleClient_Top() {
	url, stop := startPodium()
	defer stop()
	ctx := context.Background()
	reader := client.New(url) // a public board: no key needed to read
	expertBoard(client.New(url, client.WithKey(adminKey)))

	for offset := 0; ; offset += 2 {
		page, err := reader.Top(ctx, "ms:expert", offset, 2, client.ReadOptions{})
		if err != nil {
			log.Fatal(err)
		}
		for _, e := range page.Entries {
			fmt.Printf("#%d %s %v\n", e.Rank, e.Player, e.Keys)
		}
		if offset+2 >= page.Total {
			break
		}
	}
	// Output:
	// #1 erin [39900 170]
	// #2 bob [39900 140]
	// #3 alice [41200 150]
	// #4 carol [45000 160]
	// #5 dave [52300 120]
}

// Entry reads one player's entry and rank; a player without one is a 404
// (client.IsNotFound).
func ExampleClient_Entry() {
	url, stop := startPodium()
	defer stop()
	ctx := context.Background()
	c := client.New(url)
	expertBoard(client.New(url, client.WithKey(adminKey)))

	e, err := c.Entry(ctx, "ms:expert", "carol", client.ReadOptions{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(e.Entry.Player, "is #", e.Entry.Rank, "of", e.Total)

	_, err = c.Entry(ctx, "ms:expert", "nobody", client.ReadOptions{})
	fmt.Println("nobody:", client.IsNotFound(err), client.CodeOf(err))
	// Output:
	// carol is # 4 of 5
	// nobody: true entry_not_found
}

// Around reads the entries around a player: radius above and below.
func ExampleClient_Around() {
	url, stop := startPodium()
	defer stop()
	ctx := context.Background()
	expertBoard(client.New(url, client.WithKey(adminKey)))

	page, err := client.New(url).Around(ctx, "ms:expert", "alice", 1, client.ReadOptions{})
	if err != nil {
		log.Fatal(err)
	}
	for _, e := range page.Entries {
		fmt.Printf("#%d %s\n", e.Rank, e.Player)
	}
	// Output:
	// #2 bob
	// #3 alice
	// #4 carol
}

// Watch follows a board's top N live. fn gets the whole window (s) and
// what changed (u) after the first snapshot and after every change. Watch
// reconnects and resumes by itself; it returns nil when its context ends,
// its normal stop, and an error only when retrying cannot help (the board
// was deleted, the key revoked).
func ExampleClient_Watch() {
	url, stop := startPodium()
	defer stop()
	admin := client.New(url, client.WithKey(adminKey))
	expertBoard(admin)

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err := client.New(url).Watch(ctx, "ms:expert", client.WatchOptions{Limit: 3}, func(s client.State, u client.Update) {
		fmt.Print(u.Type, ":")
		for _, e := range s.Entries {
			fmt.Printf(" #%d %s", e.Rank, e.Player)
		}
		fmt.Println()
		if u.Initial {
			// frank enters the top 3 at #3: a delta follows.
			if _, err := admin.Submit(ctx, "ms:expert", client.Score{Player: "frank", Keys: []int64{40000, 155}}); err != nil {
				log.Fatal(err)
			}
			return
		}
		for _, ch := range u.Changed {
			fmt.Printf("changed: %s to #%d\n", ch.Entry.Player, ch.Entry.Rank)
		}
		for _, l := range u.Left {
			fmt.Println("left:", l.Player)
		}
		cancel() // done: Watch returns nil
	})
	fmt.Println("Watch returned", err)
	// Output:
	// snapshot: #1 erin #2 bob #3 alice
	// delta: #1 erin #2 bob #3 frank
	// changed: frank to #3
	// left: alice
	// Watch returned <nil>
}

// ListBoards lists the boards the key may read (all of them for the
// admin key; public ones without a key), in id order, every page.
func ExampleClient_ListBoards() {
	url, stop := startPodium()
	defer stop()
	ctx := context.Background()
	admin := client.New(url, client.WithKey(adminKey))
	for _, id := range []string{"ms:expert", "ms:beginner", "internal"} {
		spec := client.BoardSpec{Keys: []client.RankKey{{Name: "time_ms", Order: "asc"}}, Public: client.Bool(id != "internal")}
		if _, _, err := admin.PutBoard(ctx, id, spec); err != nil {
			log.Fatal(err)
		}
	}
	all, err := admin.ListBoards(ctx)
	if err != nil {
		log.Fatal(err)
	}
	public, err := client.New(url).ListBoards(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("admin:", len(all), "boards; without a key:", len(public))
	for _, b := range public {
		fmt.Println(b.ID)
	}
	// Output:
	// admin: 3 boards; without a key: 2
	// ms:beginner
	// ms:expert
}

// CreateKey makes an API key (an APIKeySpec: name, scopes, board-id
// prefixes) for a game server: it may submit to and read the ms: boards,
// nothing else. Its secret, Key, is in this answer only.
func ExampleClient_CreateKey() {
	url, stop := startPodium()
	defer stop()
	ctx := context.Background()
	admin := client.New(url, client.WithKey(adminKey))
	expertBoard(admin)

	k, err := admin.CreateKey(ctx, client.APIKeySpec{Name: "game-server", Scopes: []string{"submit", "read"}, Boards: []string{"ms:"}})
	if err != nil {
		log.Fatal(err)
	}
	game := client.New(url, client.WithKey(k.Key))
	res, err := game.Submit(ctx, "ms:expert", client.Score{Player: "frank", Keys: []int64{50000, 100}})
	fmt.Println("submit:", err == nil, "rank", res.Entry.Rank)
	_, _, err = game.PutBoard(ctx, "ms:other", client.BoardSpec{Keys: []client.RankKey{{Name: "n", Order: "asc"}}})
	fmt.Println("create a board:", errors.Is(err, client.ErrForbidden))

	keys, err := admin.ListKeys(ctx)
	if err != nil {
		log.Fatal(err)
	}
	for _, k := range keys {
		fmt.Println(k.Name, k.Scopes, k.Boards, "secret shown:", k.Key != "")
	}
	// Output:
	// submit: true rank 5
	// create a board: true
	// game-server [submit read] [ms:] secret shown: false
}

// PutPlayer sets a player's display name (and hidden flag, meta); every
// board shows the name beside the player's id.
func ExampleClient_PutPlayer() {
	url, stop := startPodium()
	defer stop()
	ctx := context.Background()
	admin := client.New(url, client.WithKey(adminKey))
	expertBoard(admin)

	if _, err := admin.PutPlayer(ctx, "erin", client.PlayerSpec{Name: "Erin"}); err != nil {
		log.Fatal(err)
	}
	top, err := admin.Top(ctx, "ms:expert", 0, 1, client.ReadOptions{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(top.Entries[0].Player, top.Entries[0].Name)
	// Output:
	// erin Erin
}

// A CTF contest: PutContest, its challenges (PutChallenge), the judge's
// attempts (Attempt, with a key of scope submit) and the standings.
func ExampleClient_PutContest() {
	url, stop := startPodium()
	defer stop()
	ctx := context.Background()
	admin := client.New(url, client.WithKey(adminKey))

	now := time.Now()
	if _, _, err := admin.PutContest(ctx, "ctf:quals", client.ContestSpec{Title: "Quals",
		Start: now.Add(-time.Hour), End: now.Add(2 * time.Hour), Public: true}); err != nil {
		log.Fatal(err)
	}
	for id, value := range map[string]int64{"web": 100, "pwn": 300} {
		if _, _, err := admin.PutChallenge(ctx, "ctf:quals", id, client.ChallengeSpec{Name: id, Scoring: client.Scoring{Value: value}}); err != nil {
			log.Fatal(err)
		}
	}
	for _, a := range []struct {
		team, challenge string
		correct         bool
	}{{"alpha", "web", true}, {"beta", "pwn", false}, {"beta", "pwn", true}, {"alpha", "pwn", true}} {
		res, err := admin.Attempt(ctx, "ctf:quals", a.team, a.challenge, a.correct)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(a.team, a.challenge, res.Attempt.Result)
	}
	st, err := client.New(url).Standings(ctx, "ctf:quals", client.StandingsOptions{})
	if err != nil {
		log.Fatal(err)
	}
	for _, s := range st.Standings {
		fmt.Printf("#%d %s %d points, %d solved\n", *s.Rank, s.Team, s.Score, s.Solved)
	}
	// Output:
	// alpha web solved
	// beta pwn wrong
	// beta pwn solved
	// alpha pwn solved
	// #1 alpha 400 points, 2 solved
	// #2 beta 300 points, 1 solved
}
