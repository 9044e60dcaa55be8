package client_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strconv"
	"testing"

	"github.com/podiumhq/podium/client"
)

// BenchmarkSubmit measures a submission through the client against one
// made with net/http and a prepared body, on the same in-process server:
// the difference is what the client costs (encoding, the key, decoding).
func BenchmarkSubmit(b *testing.B) {
	srv := newTestServer(b, nil)
	ctx := context.Background()
	c := client.New(srv.URL, client.WithKey(adminKey))
	if _, _, err := c.PutBoard(ctx, "bench", client.BoardSpec{Keys: []client.RankKey{{Name: "n", Order: "desc"}}}); err != nil {
		b.Fatal(err)
	}
	b.Run("client", func(b *testing.B) {
		b.ReportAllocs()
		for i := range b.N {
			if _, err := c.Submit(ctx, "bench", client.Score{Player: "p" + strconv.Itoa(i%1000), Score: score(int64(i))}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("net/http", func(b *testing.B) {
		b.ReportAllocs()
		hc := &http.Client{}
		for i := range b.N {
			body := []byte(`{"player":"p` + strconv.Itoa(i%1000) + `","score":` + strconv.Itoa(i) + `}`)
			req, _ := http.NewRequest(http.MethodPost, srv.URL+"/v1/boards/bench/scores", bytes.NewReader(body))
			req.Header.Set("Authorization", "Bearer "+adminKey)
			req.Header.Set("Idempotency-Key", client.NewIdempotencyKey())
			resp, err := hc.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 {
				b.Fatal(resp.Status)
			}
		}
	})
}
