package webhooks

import (
	"context"
	"encoding/json"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/contest"
	"github.com/podiumhq/podium/ctf"
	"github.com/podiumhq/podium/engine"
)

// Sending the timed events (timed.go): which node, when, and what they
// hold.
//
// One node sends them: the holder of the worker's lease ("webhooks"),
// from the worker's loop. A node that does not hold it keeps its due
// instants and looks again next round, so that if the holder dies the
// next one sends what it left (within the retry window). Two nodes that
// both send one (the lease moved between them) store the same id, and
// the outbox keeps the first.
//
// Final. A period.ended event is computed as an engine.Work on the
// writer, once the grace after the boundary has passed: in shared mode
// the Work locks the boards and catches up with everything committed to
// them before it reads (as a tournament's settlement does); on one node
// it first lets every group before it be applied (Group.WaitApplied).
// The top is then read through the engine's read API for that past
// period, and the event rides the Work's commit. A contest's events are
// read after Sync brings this node up to the database's solves.

// contestSource is the module that keeps the contests (ctf.Module).
type contestSource interface{ Service() *ctf.Service }

// timed is the module's state of the timed events.
type timed struct {
	sch      schedule
	contests *ctf.Service // nil: no contests
	// refused is when (host clock, unix ns) this node last found the lease
	// held by another: it asks the database again only leaseTTL/3 later,
	// rather than at every round while its own instants wait.
	refused atomic.Int64
}

// timedLease reports whether this node holds the worker's lease: the one
// the last round took, while it lasts, or else the database's answer.
func (m *Module) timedLease(ctx context.Context, now time.Time) bool {
	if m.lease == nil {
		return true
	}
	m.w.mu.Lock()
	l := m.w.lease
	m.w.mu.Unlock()
	if l.Epoch != 0 && l.Expires.After(now) {
		return true
	}
	if r := m.tm.refused.Load(); r != 0 && now.Sub(time.Unix(0, r)) < leaseTTL/3 && !now.Before(time.Unix(0, r)) {
		return false
	}
	if m.holdLease(ctx) {
		m.tm.refused.Store(0)
		return true
	}
	m.tm.refused.Store(now.UnixNano())
	return false
}

// loadTimed fills the schedule at Load: every periodic board and every
// contest, and hooks the contests' changes.
func (m *Module) loadTimed() {
	m.tm.sch.init()
	now, grace, window := m.host.Now(), m.cfg.TimedGrace, m.cfg.Backoff.Window
	eng := m.host.Engine()
	infos, _ := eng.ListBoards("", 0, 0, periodic)
	for i := range infos {
		m.tm.sch.loadBoard(&infos[i].Board, now, grace, window)
	}
	for _, mod := range eng.Modules() {
		if cs, ok := mod.(contestSource); ok && cs.Service() != nil {
			m.tm.contests = cs.Service()
		}
	}
	if svc := m.tm.contests; svc != nil {
		for _, c := range svc.Contests() {
			m.tm.sch.contestChanged(c.ID, &c, now, grace, window)
		}
		svc.OnChange(m.contestChanged)
	}
}

// contestChanged hears a contest's change (every solve among them: it
// costs a map lookup unless the freeze or the end moved).
func (m *Module) contestChanged(id string) {
	c, err := m.tm.contests.Contest(id)
	cp := &c
	if err != nil {
		cp = nil
	}
	m.tm.sch.contestChanged(id, cp, m.host.Now(), m.cfg.TimedGrace, m.cfg.Backoff.Window)
}

// timedTypes reports whether an enabled endpoint takes a timed event.
func (s *endpointSet) timedTypes() bool {
	return len(s.byType[TypePeriodEnded])+len(s.byType[TypeContestFrozen])+len(s.byType[TypeContestEnded]) > 0
}

// EmitDue sends the timed events whose instant (plus the grace) has come
// and returns how many it wrote to the outbox (one already there, from
// another node or before a restart, is written again and kept once). The worker's loop calls it each round;
// tests call it with a fake clock. With nothing due it costs a look at the
// schedule's top; with no endpoint taking a timed event, the instants
// are only moved on.
func (m *Module) EmitDue(ctx context.Context) (int, error) {
	if m.store == nil {
		return 0, nil
	}
	now := m.host.Now()
	if at, ok := m.tm.sch.next(); !ok || at.After(now) {
		return 0, nil
	}
	eps := m.eps.Load()
	if eps.timedTypes() && !m.timedLease(ctx, now) {
		return 0, nil // another node sends them; this one looks again next round
	}
	items := m.tm.sch.popDue(now, timedBatch)
	var jobs []periodJob
	var cs []dueItem
	for _, it := range items {
		switch it.key.kind {
		case duePeriod:
			if j, ok := m.periodDue(it, now); ok {
				jobs = append(jobs, j)
			}
		default:
			cs = append(cs, it)
		}
	}
	n, err := m.emitPeriods(ctx, jobs, now)
	k, cerr := m.emitContests(ctx, cs, now)
	if err == nil {
		err = cerr
	}
	if more, ok := m.tm.sch.next(); ok && !more.After(now) {
		m.Poke() // more than a batch was due
	}
	return n + k, err
}

// periodJob is one period.ended to compute.
type periodJob struct {
	board  string
	period podium.Period
	cause  string
}

// periodDue moves a board's instant on to the end of its current period
// and returns the period that ended, if its event is to be sent: the
// latest one that ended (a node down for several periods sends only the
// last), within the retry window, on a board made before it ended, that
// an endpoint takes.
func (m *Module) periodDue(it dueItem, now time.Time) (periodJob, bool) {
	bs := m.host.Engine().Lookup(it.key.id)
	if bs == nil {
		return periodJob{}, false
	}
	def := bs.Def()
	if !periodic(def) {
		return periodJob{}, false
	}
	cur := podium.PeriodAt(def.Reset, now.Add(-m.cfg.TimedGrace))
	m.tm.sch.set(it.key, cur.End, cur.End.Add(m.cfg.TimedGrace))
	last := cur.Start // the latest boundary past the grace
	if last.Before(it.at) || !last.After(def.CreatedAt) || now.Sub(last) > m.cfg.Backoff.Window {
		return periodJob{}, false
	}
	if len(m.eps.Load().match(TypePeriodEnded, def.ID)) == 0 {
		return periodJob{}, false
	}
	p := podium.PeriodAt(def.Reset, last.Add(-time.Nanosecond))
	// The period and the board's creation (a board deleted and made again
	// has periods of the same ids) identify the event on every node.
	cause := p.ID + "/" + strconv.FormatInt(podium.Millis(def.CreatedAt), 10)
	return periodJob{board: def.ID, period: p, cause: cause}, true
}

// ranked is one entry of an event's top.
type ranked struct {
	Rank   int     `json:"rank"`
	Player string  `json:"player"`
	Name   string  `json:"name"`
	Keys   []int64 `json:"keys"`
}

// periodData is a period.ended event's data.
type periodData struct {
	Board  string   `json:"board"`
	Period string   `json:"period"`
	Start  string   `json:"start"`
	End    string   `json:"end"`
	Total  int      `json:"total"`
	Top    []ranked `json:"top"`
}

// emitPeriods computes and stores the period.ended events of jobs in one
// engine.Work; on a failure each is tried again after timedRetry.
func (m *Module) emitPeriods(ctx context.Context, jobs []periodJob, now time.Time) (int, error) {
	if len(jobs) == 0 {
		return 0, nil
	}
	eng := m.host.Engine()
	ids := make([]string, len(jobs))
	for i, j := range jobs {
		ids[i] = j.board
	}
	var evs []podium.WebhookEvent
	w := &engine.Work{Boards: ids, Compute: func(g *engine.Group) error {
		g.WaitApplied() // one node: every score before this group is in the index
		var out []podium.WebhookEvent
		for _, j := range jobs {
			bs := g.Board(j.board)
			if bs == nil {
				continue // deleted since
			}
			if err := g.Hold(bs, j.period.ID); err != nil {
				return err
			}
			page, err := eng.Top(ctx, engine.Query{Board: j.board, Period: j.period.ID}, 0, m.cfg.PeriodTop)
			if err != nil {
				return err
			}
			d := periodData{Board: j.board, Period: j.period.ID, Start: millis(j.period.Start), End: millis(j.period.End),
				Total: page.Total, Top: make([]ranked, len(page.Entries))}
			for i, en := range page.Entries {
				d.Top[i] = ranked{en.Rank, en.Player, en.Name, en.Keys}
			}
			for len(d.Top) > 0 && jsonSize(d) > podium.MaxWebhookPayload {
				d.Top = d.Top[:len(d.Top)/2] // long names: fewer entries rather than no event
			}
			if ev, ok := m.newEvent(TypePeriodEnded, j.board, j.cause, j.period.End, d); ok {
				out = append(out, ev)
			}
		}
		evs = out
		if len(out) > 0 { // last: nothing can fail after it
			o, _ := g.Slot(m).(*outbox) // the group's scores may have events of their own
			if o == nil {
				o = &outbox{}
				g.SetSlot(m, o)
			}
			o.events = append(o.events, out...)
		}
		return nil
	}}
	if err := eng.Do(ctx, w); err != nil {
		for _, j := range jobs {
			m.tm.sch.set(dueKey{duePeriod, j.board}, j.period.End, now.Add(timedRetry))
		}
		if ctx.Err() == nil {
			m.log.Warn("webhooks: period.ended events not stored; retrying", "boards", len(jobs), "err", err, "retry_in", timedRetry)
		}
		return 0, err
	}
	return len(evs), nil
}

func jsonSize(v any) int {
	b, _ := json.Marshal(v)
	return len(b)
}

// team is one line of a contest event's top.
type team struct {
	Rank   int    `json:"rank"`
	Team   string `json:"team"`
	Score  int64  `json:"score"`
	Solved int    `json:"solved"`
}

// contestData is a contest event's data.
type contestData struct {
	Contest string  `json:"contest"`
	Title   string  `json:"title"`
	Start   string  `json:"start"`
	End     string  `json:"end"`
	Freeze  *string `json:"freeze"`
	// Teams is the number of ranked (visible) teams.
	Teams int    `json:"teams"`
	Top   []team `json:"top"`
}

// emitContests stores the contest events of items: each contest's
// standings at its freeze (contest.frozen) or at its end, every solve
// counted (contest.ended), after this node caught up with the database.
func (m *Module) emitContests(ctx context.Context, items []dueItem, now time.Time) (int, error) {
	svc := m.tm.contests
	if len(items) == 0 || svc == nil {
		return 0, nil
	}
	retry := func(err error) (int, error) {
		for _, it := range items {
			m.tm.sch.set(it.key, it.at, now.Add(timedRetry))
		}
		if ctx.Err() == nil {
			m.log.Warn("webhooks: contest events not stored; retrying", "contests", len(items), "err", err, "retry_in", timedRetry)
		}
		return 0, err
	}
	eps := m.eps.Load()
	var evs []podium.WebhookEvent
	synced := false
	for _, it := range items {
		typ := TypeContestFrozen
		if it.key.kind == dueEnd {
			typ = TypeContestEnded
		}
		if now.Sub(it.at) > m.cfg.Backoff.Window || len(eps.match(typ, it.key.id)) == 0 {
			continue
		}
		if !synced {
			if err := svc.Sync(ctx); err != nil {
				return retry(err)
			}
			synced = true
		}
		c, err := svc.Contest(it.key.id)
		if err != nil {
			continue // deleted
		}
		var cutoff time.Time
		switch {
		case typ == TypeContestFrozen && (c.Freeze == nil || !c.Freeze.Equal(it.at) || c.Revealed):
			continue // moved (its new instant is scheduled) or revealed before it froze
		case typ == TypeContestFrozen:
			cutoff = it.at
		case !c.End.Equal(it.at):
			continue
		}
		b, err := svc.StandingsAt(c.ID, cutoff)
		if err != nil {
			continue
		}
		d := contestDataOf(&c, b.Standings, m.cfg.PeriodTop)
		for len(d.Top) > 0 && jsonSize(d) > podium.MaxWebhookPayload {
			d.Top = d.Top[:len(d.Top)/2]
		}
		// The contest's creation tells it from an earlier one of the same
		// id; the instant, from an earlier freeze or end that moved.
		cause := strconv.FormatInt(podium.Millis(it.at), 10) + "/" + strconv.FormatUint(ctf.Generation(&c), 10)
		if ev, ok := m.newEvent(typ, c.ID, cause, it.at, d); ok {
			evs = append(evs, ev)
		}
	}
	if len(evs) == 0 {
		return 0, nil
	}
	if err := m.host.Store().Commit(ctx, &podium.Batch{Parts: []podium.Part{m.store.WebhookPart(evs)}}); err != nil {
		return retry(err)
	}
	for _, ev := range evs {
		m.m.events.WithLabelValues(ev.Type).Inc()
	}
	m.Poke()
	return len(evs), nil
}

// contestDataOf is the data of a contest event with the first n ranked
// teams of s.
func contestDataOf(c *contest.Contest, s *contest.Standings, n int) contestData {
	d := contestData{Contest: c.ID, Title: c.Title, Start: millis(c.Start), End: millis(c.End), Top: []team{}}
	if c.Freeze != nil {
		f := millis(*c.Freeze)
		d.Freeze = &f
	}
	for i := range s.Teams {
		t := &s.Teams[i]
		if t.Hidden {
			continue
		}
		d.Teams++
		if len(d.Top) < n {
			d.Top = append(d.Top, team{t.Rank, t.Team, t.Score, t.Solved})
		}
	}
	return d
}
