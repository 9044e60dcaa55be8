package http

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/engine"
)

// entryHandlers serves the reads of a board's entries: a page, one
// player, around a player, a delete, the export (export.go) and a player's
// history (history.go).
type entryHandlers struct {
	*base
	eng         entryReader
	hist        historyReader   // the review module (history.go)
	pages       *pageCache      // encoded ranking pages by ETag (pagecache.go)
	exportPause func(chunk int) // tests: runs after each export chunk is written
	groups      groupModule     // the groups module (groups.go): group= of the members view
}

// entryReader is what the entry handlers call.
type entryReader interface {
	Board(id string) (engine.BoardInfo, error)
	TopEach(ctx context.Context, q engine.Query, offset, limit int, head func(*engine.Page), each func(*engine.EntryView)) error
	PageTag(q engine.Query) string
	Players(ctx context.Context, q engine.Query, players []string) (engine.Page, error)
	Entry(ctx context.Context, q engine.Query, player string) (engine.Page, error)
	Around(ctx context.Context, q engine.Query, player string, radius int) (engine.Page, error)
	DeleteEntry(ctx context.Context, board, period, player string) error
}

// MaxPlayersPerRead caps players= on the entries endpoint.
const MaxPlayersPerRead = 1000

// readQuery checks read access to the board in the path and parses the
// selectors every ranking read shares.
func (s *entryHandlers) readQuery(r *http.Request) (engine.Query, error) {
	q, _, err := s.readBoardQuery(r)
	return q, err
}

// readBoardQuery is readQuery that also returns the board it read.
func (s *entryHandlers) readBoardQuery(r *http.Request) (engine.Query, engine.BoardInfo, error) {
	bi, k, err := s.readableBoard(r, r.PathValue("board"))
	if err != nil {
		return engine.Query{}, bi, err
	}
	period, _ := queryValue(r, "period")
	q := engine.Query{Board: bi.ID, Period: period}
	if q.IncludeHidden, err = queryBool(r, "include_hidden"); err != nil {
		return q, bi, err
	}
	if q.IncludeHidden && k == nil {
		return q, bi, podium.Errorf(podium.ECodeUnauthenticated, "include_hidden=true needs an admin key: send Authorization: Bearer <key>")
	}
	if q.IncludeHidden && !k.Allows(podium.ScopeAdmin, bi.ID) {
		return q, bi, podium.Errorf(podium.ECodeForbidden, "include_hidden=true needs an admin key")
	}
	return q, bi, nil
}

func (s *entryHandlers) entries(w http.ResponseWriter, r *http.Request) error {
	q, bi, err := s.readBoardQuery(r)
	if err != nil {
		return err
	}
	if q.TopPercent, err = queryPercent(r, "top_percent"); err != nil {
		return err
	}
	if ref, ok := queryValue(r, "group"); ok { // groups.go: the members view
		if _, both := queryValue(r, "players"); both || q.TopPercent > 0 {
			return podium.Errorf(podium.ECodeInvalid, "group cannot be used with players or top_percent")
		}
		list, err := s.groupMembers(r, ref)
		if err != nil {
			return err
		}
		page, err := s.eng.Players(r.Context(), q, list)
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, appendPage(make([]byte, 0, 256+len(page.Entries)*160), &page))
		return nil
	}
	if players, ok := queryValue(r, "players"); ok {
		if q.TopPercent > 0 {
			return podium.Errorf(podium.ECodeInvalid, "top_percent and players cannot be used together")
		}
		list := strings.Split(players, ",")
		if len(list) > MaxPlayersPerRead {
			return podium.Errorf(podium.ECodeInvalid, "players lists more than %d players", MaxPlayersPerRead)
		}
		for _, p := range list {
			if err := podium.ValidPlayerRef(p); err != nil {
				return podium.Errorf(podium.ECodeInvalid, "players: %s", podium.ErrorMessage(err))
			}
		}
		page, err := s.eng.Players(r.Context(), q, list)
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, appendPage(make([]byte, 0, 256+len(page.Entries)*160), &page))
		return nil
	}
	offset, limit, err := queryPage(r)
	if err != nil {
		return err
	}
	cache := cachePrivate
	if bi.Public && !q.IncludeHidden {
		// A shared cache (a CDN) may serve it for a second, then revalidate.
		cache = cachePublic
	}
	tag := s.eng.PageTag(q)
	if tag != "" && etagMatches(r.Header.Get("If-None-Match"), tag) {
		h := w.Header()
		h.Set("ETag", tag)
		h["Cache-Control"] = cache
		w.WriteHeader(http.StatusNotModified)
		return nil
	}
	if tag != "" {
		// A page with a tag: its bytes are shared by every reader until
		// the tag moves (pagecache.go).
		ctx := context.WithoutCancel(r.Context()) // the encoding serves every reader waiting for it
		p, err := s.pages.page(tag, offset, limit, q, func() (cachedPage, error) {
			var out cachedPage
			b := make([]byte, 0, 256+limit*100)
			n := 0
			err := s.eng.TopEach(ctx, q, offset, limit, func(p *engine.Page) {
				out.tag = p.Tag
				b = appendPageHead(b, p)
				b = append(b, `,"entries":[`...)
			}, func(e *engine.EntryView) {
				if n > 0 {
					b = append(b, ',')
				}
				b = appendEntry(b, e)
				n++
			})
			out.body = slices.Clip(append(b, "]}\n"...)) // shared once cached: never appended to
			return out, err
		})
		if err != nil {
			return err
		}
		// Header values made once with the page, assigned under their
		// canonical keys (pagecache.go): nothing allocated per reader.
		h := w.Header()
		if p.etag != nil {
			h["Etag"] = p.etag
			h["Cache-Control"] = cache
		}
		h["Content-Type"] = jsonContentType
		h["Content-Length"] = p.length
		w.WriteHeader(http.StatusOK)
		w.Write(p.body)
		return nil
	}
	buf := pageBufs.Get().(*[]byte)
	defer pageBufs.Put(buf)
	b := (*buf)[:0]
	n := 0
	err = s.eng.TopEach(r.Context(), q, offset, limit, func(p *engine.Page) {
		if p.Tag != "" {
			w.Header().Set("ETag", p.Tag)
			w.Header()["Cache-Control"] = cache
		}
		b = appendPageHead(b, p)
		b = append(b, `,"entries":[`...)
	}, func(e *engine.EntryView) {
		if n > 0 {
			b = append(b, ',')
		}
		b = appendEntry(b, e)
		n++
	})
	if err != nil {
		return err
	}
	b = append(b, "]}"...)
	writeJSON(w, http.StatusOK, b)
	*buf = b
	return nil
}

// The Cache-Control values of a ranking page; shared: never modified.
var (
	cachePrivate = []string{"private, no-cache"}
	cachePublic  = []string{"public, max-age=1"}
)

// pageBufs recycles the buffers of ranking answers (about 100 bytes an
// entry) so that a top-1000 read does not allocate a fresh 100 KB.
var pageBufs = sync.Pool{New: func() any { b := make([]byte, 0, 16<<10); return &b }}

// playerQuery is readQuery for the endpoints under /entries/{player}.
func (s *entryHandlers) playerQuery(r *http.Request) (engine.Query, string, error) {
	q, err := s.readQuery(r)
	if err != nil {
		return q, "", err
	}
	player := r.PathValue("player")
	return q, player, podium.ValidPlayerRef(player)
}

func (s *entryHandlers) entry(w http.ResponseWriter, r *http.Request) error {
	q, player, err := s.playerQuery(r)
	if err != nil {
		return err
	}
	page, err := s.eng.Entry(r.Context(), q, player)
	if err != nil {
		return err
	}
	e := &page.Entries[0]
	// The entry's fields sit at the top level and again under "entry", so
	// that a client can read either shape.
	b := appendPageHead(make([]byte, 0, 512), &page)
	b = append(b, ',')
	b = appendEntryFields(b, e)
	b = append(b, `,"entry":`...)
	b = appendEntry(b, e)
	b = append(b, '}')
	writeJSON(w, http.StatusOK, b)
	return nil
}

func (s *entryHandlers) around(w http.ResponseWriter, r *http.Request) error {
	q, player, err := s.playerQuery(r)
	if err != nil {
		return err
	}
	radius, err := queryInt(r, "radius", 5, 0, 500)
	if err != nil {
		return err
	}
	page, err := s.eng.Around(r.Context(), q, player, radius)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, appendPage(make([]byte, 0, 256+len(page.Entries)*160), &page))
	return nil
}

func (s *entryHandlers) deleteEntry(w http.ResponseWriter, r *http.Request) error {
	board := r.PathValue("board")
	if _, err := s.require(r, podium.ScopeAdmin, board); err != nil {
		return err
	}
	player := r.PathValue("player")
	if err := podium.ValidPlayerRef(player); err != nil {
		return err
	}
	period, _ := queryValue(r, "period")
	if err := s.eng.DeleteEntry(r.Context(), board, period, player); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// etagMatches reports whether an If-None-Match header lists tag (weak
// comparison, RFC 9110 §13.1.2: W/ prefixes are ignored) or is "*".
func etagMatches(header, tag string) bool {
	if header == "" {
		return false
	}
	opaque := strings.TrimPrefix(tag, "W/")
	for _, t := range strings.Split(header, ",") {
		t = strings.TrimSpace(t)
		if t == "*" || strings.TrimPrefix(t, "W/") == opaque {
			return true
		}
	}
	return false
}
