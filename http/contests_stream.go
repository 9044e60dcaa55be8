package http

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/ctf"
	"github.com/podiumhq/podium/engine"
	"github.com/podiumhq/podium/stream"
)

// Contest standings stream like boards, through a stream.Hub of their own
// (its windows are named by contest id, so they never meet a board's) over
// a stream.Source that reads the public view. A window is a contest's top
// N teams as a board with one key, the score; its seq is the last solve
// counted, so a frozen board sends nothing until it is revealed, and a
// change that moves scores without a solve (a challenge's value, a team
// hidden) restates the window as a snapshot.

// ContestStreamSource adapts the contest service to a stream hub.
func ContestStreamSource(c *ctf.Service, e *engine.Engine) stream.Source { return contestSource{c, e} }

type contestSource struct {
	c *ctf.Service
	e *engine.Engine
}

var scoreKeys = []podium.KeyDef{{Name: "score", Order: podium.Desc}}

func (s contestSource) View(ctx context.Context, window string, limit int) (stream.View, error) {
	id, live := liveContest(window)
	view := ctf.Public
	if live {
		view = ctf.Live
	}
	b, err := s.c.Standings(id, view)
	if err != nil {
		if podium.ErrorCode(err) == podium.ECodeNotFound {
			return stream.View{}, podium.Errorf(podium.ECodeBoardNotFound, "%s", podium.ErrorMessage(err))
		}
		return stream.View{}, err
	}
	// A contest deleted and made again is another generation: a new
	// chain, whose ids an old client's Last-Event-ID never resumes.
	v := stream.View{Board: window, Title: b.Contest.Title, Keys: scoreKeys, Public: b.Contest.Public || live,
		Generation: ctf.Generation(&b.Contest), Period: "all", Seq: b.Standings.Seq}
	for i := range b.Standings.Teams {
		t := &b.Standings.Teams[i]
		if t.Hidden {
			continue
		}
		v.Total++
		if len(v.Entries) == limit {
			continue
		}
		name := t.Team
		if p, err := s.e.Player(t.Team); err == nil && p.Name != "" {
			name = p.Name
		}
		at := t.LastAt
		if at.IsZero() {
			at = b.Contest.Start
		}
		v.Entries = append(v.Entries, stream.Entry{Rank: t.Rank, Player: t.Team, Name: name, Keys: []int64{t.Score},
			AtText: at.UTC().Format("2006-01-02T15:04:05.000Z07:00"), Meta: []byte("{}")})
	}
	return v, nil
}

// newContestHub returns the hub of c's streams, with the settings of the
// boards' hub, told of every change of a contest.
func newContestHub(c *ctf.Service, e *engine.Engine, boards *stream.Hub) *stream.Hub {
	hc := boards.Config()
	hc.ManualTick, hc.Now = false, nil
	h := stream.New(ContestStreamSource(c, e), hc)
	c.OnChange(func(id string) {
		h.Applied(id, "all", 0, nil)
		h.Applied(liveWindow(id), "all", 0, nil)
	})
	return h
}

// ContestHub returns the hub of the contest streams (nil without
// contests); its owner closes it, and tells it of revoked keys.
func (s *Server) ContestHub() *stream.Hub { return s.contestHub }

// contestSSE serves GET /v1/contests/{contest}/stream: Server-Sent Events
// of the top limit teams of the public standings, as a board's stream
// (snapshot and delta events, ids to resume with Last-Event-ID). The loop
// is sse's, kept apart so that the board stream's file stays as it is.
func (s *contestHandlers) contestSSE(w http.ResponseWriter, r *http.Request) error {
	if err := s.checkStreamOrigin(r); err != nil {
		return err
	}
	c, key, err := s.contestFor(r)
	if err != nil {
		return err
	}
	live, err := s.streamView(r, c.ID)
	if err != nil {
		return err
	}
	window := c.ID
	if live {
		window = liveWindow(c.ID)
	}
	limit, err := queryInt(r, "limit", 50, 1, s.contestHub.Config().MaxLimit)
	if err != nil {
		return err
	}
	lastID := r.Header.Get("Last-Event-ID")
	if lastID == "" {
		lastID, _ = queryValue(r, "last_event_id")
	}
	conn, err := s.contestHub.Connect(s.streamAddr(r), key)
	retryAfter(w, err)
	if err != nil {
		return err
	}
	defer conn.Close()
	if _, err := conn.Subscribe(r.Context(), window, limit, lastID); err != nil {
		retryAfter(w, err)
		return err
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	write := func(b []byte) bool {
		rc.SetWriteDeadline(time.Now().Add(s.streamCfg.StallTimeout))
		if _, err := w.Write(b); err != nil {
			return false
		}
		return rc.Flush() == nil
	}
	if !write([]byte("retry: " + strconv.Itoa(int(s.streamCfg.Retry/time.Millisecond)) + "\n\n")) {
		return nil
	}
	done := r.Context().Done()
	for {
		_, ev, ok := conn.Next(s.streamCfg.Heartbeat, done)
		switch {
		case !ok:
			if err := conn.Err(); err != nil {
				write(sseError(c.ID, err))
				return nil
			}
			write([]byte("retry: 1000\n: server restarting\n\n"))
			return nil
		case ev == nil:
			select {
			case <-done:
				return nil
			default:
			}
			if !write([]byte(": ping\n\n")) {
				return nil
			}
		default:
			if !write(ev.SSE) || ev.Type == "error" {
				return nil
			}
		}
	}
}
