// Package ctf runs CTF contests: it keeps each contest (its definition,
// challenges and solves) in memory, answers reads from there, writes every
// attempt through a contest.Store, takes standings snapshots, and follows
// what other nodes on the same database commit.
//
// The database is the authority. A writer holds the contest's lock in the
// database (contest.Store.Attempt) while it catches up with the solves
// other nodes committed and decides, so a team never solves a challenge
// twice and seqs are never reused; the other nodes learn of the solve by
// seq, from a broker notice or by polling.
//
// The locks and their order are listed in docs/LOCKS.md.
package ctf

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/podiumhq/podium"
	"github.com/podiumhq/podium/contest"
)

// Players tells the service who the teams are: their names and hidden
// flags. *engine.Engine is one.
type Players interface {
	// Player returns a player; an unknown one is an error.
	Player(id string) (podium.Player, error)
}

// playersVersion is an optional ability of Players (*engine.Engine has
// it): a number that moves after any player changes. With it, a read
// learns that no team was hidden or shown since it last looked in O(1),
// instead of asking for every team.
type playersVersion interface {
	PlayersVersion() uint64
}

// Config configures a Service. Zero values mean the defaults.
type Config struct {
	Store   contest.Store // required
	Players Players       // required
	Now     podium.Clock  // default time.Now
	Logger  *slog.Logger
	// Broker, when set, carries notices between nodes on one database: a
	// node publishes one after each solve and wakes on the others'.
	Broker podium.Broker
	Node   string // this node's name in notices
	// Poll is how often the service reads the database for what other
	// nodes changed (default 1 s; negative: never, for a single node).
	Poll time.Duration
	// SnapshotEvery is the interval of standings snapshots (default 5
	// minutes), SnapshotDelay how long after a snapshot's time the service
	// waits before taking it, for attempts in flight and clock skew
	// between nodes (default 10 s).
	SnapshotEvery time.Duration
	SnapshotDelay time.Duration
}

// Service runs the contests. Its methods are safe for concurrent use.
type Service struct {
	store   contest.Store
	players Players
	now     podium.Clock
	log     *slog.Logger
	broker  podium.Broker
	node    string
	poll    time.Duration
	every   time.Duration
	delay   time.Duration

	// mu guards contests (the map, not the states).
	mu       sync.RWMutex
	contests map[string]*state
	// gone holds, by id, the contests this node dropped (delete.go):
	// their creation time and the drops count when they went. drops
	// counts drops; a Sync that read the list before a drop does not
	// load the dropped contest again from that list.
	gone  map[string]goneContest
	drops uint64

	listenMu  sync.Mutex
	listeners []func(id string)

	wake chan struct{}
	// ctx ends at Close: the context of the background work Start starts
	// (a Module's ends with the engine's Host.Go instead).
	ctx    context.Context
	cancel context.CancelFunc
	// done joins every goroutine Start starts, the broker subscription
	// included: once Close returns, none of them uses the store or the
	// broker.
	done sync.WaitGroup
}

// state is one contest in memory.
type state struct {
	// wmu makes this node's writers of the contest take turns; it is held
	// across their database transaction.
	wmu sync.Mutex

	// mu guards the fields below.
	mu         sync.Mutex
	def        contest.Contest
	version    int64
	challenges []contest.Challenge
	// shown is challenges without the hidden ones: those the standings
	// count (contest.Visible; challenges itself when none is hidden).
	shown  []contest.Challenge
	solves []contest.Solve
	solved map[pair]bool
	teams  []string // every team with a solve, first solve first
	known  map[string]bool
	// cache holds computed standings by cutoff (unix ms; 0 for live),
	// valid while the hidden teams are those it was computed with.
	cache map[int64]*cached
	// live is the live standings kept up to date solve by solve (nil
	// until a read needs it, and after a change of the definition or of
	// the hidden teams); liveVer is the players' version at which its
	// hidden teams were last found right (liveChecked: ever).
	live        *contest.Live
	liveVer     uint64
	liveChecked bool
	// snapped is the time of the newest snapshot stored, from this node
	// or another.
	snapped time.Time
	// playerSig is a hash of the names and hidden flags of the teams, as
	// last seen by watchPlayers.
	playerSig uint64
}

type pair struct{ team, challenge string }

type cached struct {
	standings  *contest.Standings
	hidden     []string
	challenges []contest.Challenge // never modified: refresh replaces the slice
	// ver is the players' version at which hidden was last found right
	// (checked: ever; live standings do not use these, st.live does).
	ver     uint64
	checked bool
}

// New returns a service; Start loads the contests.
func New(cfg Config) *Service {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Poll == 0 {
		cfg.Poll = time.Second
	}
	if cfg.SnapshotEvery <= 0 {
		cfg.SnapshotEvery = 5 * time.Minute
	}
	if cfg.SnapshotDelay <= 0 {
		cfg.SnapshotDelay = 10 * time.Second
	}
	s := &Service{store: cfg.Store, players: cfg.Players, now: cfg.Now, log: cfg.Logger, broker: cfg.Broker,
		node: cfg.Node, poll: cfg.Poll, every: cfg.SnapshotEvery, delay: cfg.SnapshotDelay,
		contests: map[string]*state{}, gone: map[string]goneContest{}, wake: make(chan struct{}, 1)}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	return s
}

// Start loads every contest from the store and starts the background work:
// following other nodes (when Poll is positive or a Broker is set) and
// taking snapshots.
func (s *Service) Start(ctx context.Context) error {
	if err := s.Sync(ctx); err != nil {
		return err
	}
	s.run(func(fn func(ctx context.Context)) { s.done.Go(func() { fn(s.ctx) }) })
	return nil
}

// run starts the background work, each part by spawn, which runs it in a
// goroutine with a context that ends when the work must stop: following
// other nodes, snapshots, and the broker subscription.
func (s *Service) run(spawn func(fn func(ctx context.Context))) {
	spawn(s.follow)
	spawn(s.snapshots)
	if s.broker != nil {
		spawn(func(ctx context.Context) {
			if err := s.broker.Subscribe(ctx, s.notice); err != nil && ctx.Err() == nil {
				s.log.Warn("ctf: broker subscription ended", "err", err)
			}
		})
	}
}

// Close stops the background work Start started and waits for all of it.
func (s *Service) Close() error {
	s.cancel()
	s.done.Wait()
	return nil
}

// OnChange registers fn, called (without locks held) after a contest
// changed: a solve, an attempt, a new definition. fn must not block.
func (s *Service) OnChange(fn func(id string)) {
	s.listenMu.Lock()
	defer s.listenMu.Unlock()
	s.listeners = append(s.listeners, fn)
}

func (s *Service) changed(id string) {
	s.listenMu.Lock()
	ls := slices.Clone(s.listeners)
	s.listenMu.Unlock()
	for _, fn := range ls {
		fn(id)
	}
}

func (s *Service) get(id string) (*state, error) {
	s.mu.RLock()
	st := s.contests[id]
	s.mu.RUnlock()
	if st == nil {
		return nil, errNotFound(id)
	}
	return st, nil
}

func errNotFound(id string) error {
	return podium.Errorf(podium.ECodeNotFound, "contest %q does not exist", id)
}

// ContestNotFound is the ECodeNotFound error of a contest id that does not
// exist, word for word; the HTTP API gives it for a private contest the
// caller may not read too (docs/API.md, "Private ids").
func ContestNotFound(id string) error { return errNotFound(id) }

// Contest returns a contest's definition. A missing one is ECodeNotFound.
func (s *Service) Contest(id string) (contest.Contest, error) {
	st, err := s.get(id)
	if err != nil {
		return contest.Contest{}, err
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.def, nil
}

// Contests lists every contest, ordered by id.
func (s *Service) Contests() []contest.Contest {
	s.mu.RLock()
	sts := make([]*state, 0, len(s.contests))
	for _, st := range s.contests {
		sts = append(sts, st)
	}
	s.mu.RUnlock()
	out := make([]contest.Contest, 0, len(sts))
	for _, st := range sts {
		st.mu.Lock()
		out = append(out, st.def)
		st.mu.Unlock()
	}
	slices.SortFunc(out, func(a, b contest.Contest) int { return cmp.Compare(a.ID, b.ID) })
	return out
}

// Challenges lists a contest's challenges in their order.
func (s *Service) Challenges(id string) ([]contest.Challenge, error) {
	st, err := s.get(id)
	if err != nil {
		return nil, err
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	return slices.Clone(st.challenges), nil
}

// Sync brings every contest in memory up to the database: new contests,
// changed definitions and challenges, solves committed by other nodes,
// contests deleted (or deleted and made again) by other nodes.
func (s *Service) Sync(ctx context.Context) error {
	heads, err := s.store.Contests(ctx)
	if err != nil {
		return err
	}
	s.mu.RLock()
	drops := s.drops
	s.mu.RUnlock()
	changed := []string{}
	listed := make(map[string]bool, len(heads))
	for i := range heads {
		h := &heads[i]
		listed[h.ID] = true
		s.mu.RLock()
		st := s.contests[h.ID]
		s.mu.RUnlock()
		var old *state
		if st != nil && !st.createdAt().Equal(h.CreatedAt) {
			// Deleted and made again since this node loaded it: the new
			// one is loaded from scratch and takes the old one's place.
			old, st = st, nil
		}
		if st == nil {
			// A new contest is loaded before it is shown.
			st = &state{solved: map[pair]bool{}, known: map[string]bool{}, cache: map[int64]*cached{}, version: -1}
			times, err := s.store.SnapshotTimes(ctx, h.ID)
			if err != nil {
				return err
			}
			if len(times) > 0 {
				st.snapped = times[len(times)-1]
			}
			if _, err := s.refresh(ctx, st, h); err != nil {
				return err
			}
			s.mu.Lock()
			cur, fresh := s.contests[h.ID], s.gone[h.ID].drop <= drops
			if fresh && (cur == nil || cur == old) {
				s.contests[h.ID] = st
			}
			s.mu.Unlock()
			changed = append(changed, h.ID)
			continue
		}
		moved, err := s.refresh(ctx, st, h)
		if err != nil {
			return err
		}
		if moved {
			changed = append(changed, h.ID)
		}
	}
	// Contests deleted by another node. One made here since the list was
	// read is not in it: only one the database does not have goes.
	s.mu.RLock()
	var missing []string
	for id := range s.contests {
		if !listed[id] {
			missing = append(missing, id)
		}
	}
	s.mu.RUnlock()
	for _, id := range missing {
		h, err := s.store.LoadContest(ctx, id)
		if err != nil {
			return err
		}
		if h == nil {
			s.mu.RLock()
			st := s.contests[id]
			s.mu.RUnlock()
			if st != nil {
				s.drop(id, st)
			}
		}
	}
	for _, id := range changed {
		s.changed(id)
	}
	return nil
}

// refresh brings st up to head h: its definition and challenges when the
// version moved, its solves when the seq did. It reports whether anything
// changed.
func (s *Service) refresh(ctx context.Context, st *state, h *contest.Stored) (bool, error) {
	st.wmu.Lock()
	defer st.wmu.Unlock()
	st.mu.Lock()
	version, seq := st.version, st.seq()
	st.mu.Unlock()
	moved := false
	if h.Version != version {
		chals, err := s.store.Challenges(ctx, h.ID)
		if err != nil {
			return false, err
		}
		st.mu.Lock()
		st.def, st.version, st.challenges, st.shown = h.Contest, h.Version, chals, contest.Visible(chals)
		st.invalidate()
		st.mu.Unlock()
		moved = true
	}
	if h.Seq > seq {
		if err := s.store.Solves(ctx, h.ID, seq, st.apply); err != nil {
			return false, err
		}
		moved = true
	}
	return moved, nil
}

// seq is the last solve's seq; the caller holds mu.
func (st *state) seq() uint64 {
	if len(st.solves) == 0 {
		return 0
	}
	return st.solves[len(st.solves)-1].Seq
}

// apply adds a solve read from the database, if it is the next one.
func (st *state) apply(sv *contest.Solve) error {
	st.mu.Lock()
	defer st.mu.Unlock()
	if sv.Seq <= st.seq() {
		return nil // already known
	}
	if sv.Seq != st.seq()+1 {
		return errors.New("ctf: solves out of order")
	}
	st.solves = append(st.solves, *sv)
	if !st.known[sv.Team] {
		st.known[sv.Team] = true
		st.teams = append(st.teams, sv.Team)
	}
	st.solved[pair{sv.Team, sv.Challenge}] = true
	// The live standings take the solve in place (contest.Live: its cost
	// does not grow with the teams); the standings cut before the solve's
	// time do not count it and stay.
	if st.live != nil {
		st.live.Add(*sv)
	}
	for key := range st.cache {
		if key == 0 || podium.Millis(sv.At) < key {
			delete(st.cache, key)
		}
	}
	return nil
}

// invalidate drops the computed standings; the caller holds mu.
func (st *state) invalidate() {
	clear(st.cache)
	st.live, st.liveChecked = nil, false
}
