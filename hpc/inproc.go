package hpc

import (
	"errors"
	"fmt"
	"runtime/debug"
	"strings"
	"sync"
)

// RunInProcess runs fn on n ranks, each in its own goroutine with its own
// world communicator (rank 0..n-1 of n), and returns when all have
// returned. The result joins the ranks' errors in rank order, each
// prefixed with its rank unless it already names it.
//
// A rank that returns an error or panics makes every other rank's
// pending and later calls fail with ErrAborted. A deadlock (see
// ErrDeadlock) makes them fail with ErrDeadlock, naming every rank's
// state. RunInProcess therefore returns as long as fn itself returns
// after its calls fail.
func RunInProcess(n int, fn func(world Comm) error) error {
	if n < 1 {
		return fmt.Errorf("hpc: RunInProcess with %d ranks, need at least 1", n)
	}
	h := &hub{ranks: make([]*rankState, n), alive: n}
	world := newCommState("WORLD", make([]int, n))
	world.world = true
	for r := range n {
		world.members[r] = r
		h.ranks[r] = &rankState{rank: r, wake: make(chan struct{}, 1)}
	}
	errs := make([]error, n)
	var wg sync.WaitGroup
	for r := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[r] = h.run(h.ranks[r], newHandle(h, h.ranks[r], world, r), fn)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// hub is the shared state of one RunInProcess: every field of every
// rankState, commState, slot and msgQueue is guarded by mu.
type hub struct {
	mu      sync.Mutex
	ranks   []*rankState // by world rank
	alive   int          // ranks whose fn has not returned
	waiting int          // ranks blocked in block and not woken
	failure *failure     // first abort or deadlock; never reset
}

// rankState is one rank (goroutine).
type rankState struct {
	rank   int
	wake   chan struct{} // signalled when wait may have become ready
	wait   waiter        // what the rank is blocked on, nil if running
	woken  bool          // wait became ready and r was signalled
	exited bool          // fn has returned
	self   *handle       // lazily made by Self
}

// run calls fn for rank r, turning a panic into an error, and records the
// exit.
func (h *hub) run(r *rankState, world *handle, fn func(Comm) error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = &opError{kind: ErrPanic, rank: r.rank,
				msg: fmt.Sprintf("hpc: rank %d panicked: %v\n%s", r.rank, p, debug.Stack())}
		}
		h.exit(r, err)
		if err != nil && !namesRank(err, r.rank) {
			err = fmt.Errorf("rank %d: %w", r.rank, err)
		}
	}()
	return fn(world)
}

// exit records that r's fn returned err; a failure aborts the others.
func (h *hub) exit(r *rankState, err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	r.exited = true
	h.alive--
	if err != nil && h.failure == nil {
		h.failure = &failure{kind: ErrAborted, rank: r.rank, cause: err}
	}
	// Waiters re-check: their peer may be gone, or the run aborted.
	h.wakeAll()
	h.detect()
}

// commState is a communicator shared by its members.
type commState struct {
	name    string
	members []int // world rank by communicator rank
	world   bool  // the world communicator
	self    bool  // a Self communicator
	queues  map[p2pKey]*msgQueue
	slots   map[int]*slot // pending collectives by call number
}

func newCommState(name string, members []int) *commState {
	return &commState{name: name, members: members, queues: map[p2pKey]*msgQueue{}, slots: map[int]*slot{}}
}

// handle is one rank's view of a communicator; it implements Comm.
type handle struct {
	h     *hub
	me    *rankState
	c     *commState
	rank  int    // in c
	name  string // this rank's name for c
	seq   int    // number of collectives called on c so far; guarded by h.mu
	freed bool   // guarded by h.mu
}

func newHandle(h *hub, me *rankState, c *commState, rank int) *handle {
	return &handle{h: h, me: me, c: c, rank: rank, name: c.name}
}

// Rank returns the calling rank's number in the communicator.
func (c *handle) Rank() int { return c.rank }

// Size returns the number of ranks in the communicator.
func (c *handle) Size() int { return len(c.c.members) }

// Name returns the communicator's name.
func (c *handle) Name() string {
	c.h.mu.Lock()
	defer c.h.mu.Unlock()
	return c.name
}

// SetName names the communicator in this rank's error messages.
func (c *handle) SetName(name string) {
	c.h.mu.Lock()
	defer c.h.mu.Unlock()
	c.name = name
}

// Self returns the rank's size-1 communicator.
func (c *handle) Self() Comm {
	c.h.mu.Lock()
	defer c.h.mu.Unlock()
	if c.me.self == nil {
		s := newCommState("SELF", []int{c.me.rank})
		s.self = true
		c.me.self = newHandle(c.h, c.me, s, 0)
	}
	return c.me.self
}

// Free marks the communicator as released.
func (c *handle) Free() error {
	c.h.mu.Lock()
	defer c.h.mu.Unlock()
	switch {
	case c.c.world || c.c.self:
		return fmt.Errorf("hpc: rank %d: Free of %s: not allowed", c.me.rank, c.where())
	case c.freed:
		return &opError{kind: ErrFreed, rank: c.me.rank,
			msg: fmt.Sprintf("hpc: rank %d: Free of %s: already freed", c.me.rank, c.where())}
	}
	c.freed = true
	return nil
}

// usable returns an error if the call op cannot start: the communicator
// is freed or, for a non-blocking call, the run failed (blocking calls
// learn that in block). The caller holds h.mu.
func (c *handle) usable(op fmt.Stringer, blocking bool) error {
	if c.freed {
		return &opError{kind: ErrFreed, rank: c.me.rank,
			msg: fmt.Sprintf("hpc: rank %d: %v on %s: communicator freed", c.me.rank, op, c.where())}
	}
	if !blocking && c.h.failure != nil {
		return c.h.failed(c.me, fmt.Sprintf("%v on %s", op, c.where()), false)
	}
	return nil
}

// where describes the communicator for messages, e.g. "comm WORLD" or
// "comm WORLD.2 (rank 0 of 3)".
func (c *handle) where() string {
	if c.c.world {
		return "comm " + c.name
	}
	return fmt.Sprintf("comm %s (rank %d of %d)", c.name, c.rank, len(c.c.members))
}

// who names communicator rank r by its world rank, e.g. "rank 5".
func (c *handle) who(r int) string {
	return fmt.Sprintf("rank %d", c.c.members[r])
}

// rankList formats world ranks, shortening long lists.
func rankList(ranks []int) string {
	const maxShown = 8
	var b strings.Builder
	for i, r := range ranks {
		if i == maxShown {
			fmt.Fprintf(&b, " and %d more", len(ranks)-maxShown)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprint(&b, r)
	}
	return b.String()
}

// checkRank validates a communicator rank argument.
func (c *handle) checkRank(what string, r int) error {
	if r < 0 || r >= len(c.c.members) {
		return fmt.Errorf("%s %d out of range [0, %d)", what, r, len(c.c.members))
	}
	return nil
}

// clone returns a copy of b that is never nil.
func clone(b []byte) []byte {
	out := make([]byte, len(b))
	copy(out, b)
	return out
}
