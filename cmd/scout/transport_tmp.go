package main

// Temporary in-process transport, replaced by package hpc.

import (
	"errors"
	"math"
	"sync"

	"scout/replay"
)

type tmpKey struct {
	comm, src, dst, tag int
}

type tmpHub struct {
	mu     sync.Mutex
	cond   *sync.Cond
	queues map[tmpKey][][]byte
	colls  map[[2]int]*tmpColl // (comm id, seq) → slot
	failed error
}

type tmpColl struct {
	vals []replay.TimeRank
	fs   []float64
	n    int
	done int
}

type tmpComm struct {
	hub     *tmpHub
	id      int
	rank    int
	members []int // world ranks
	seq     int
	nCreate int
}

func runInProcess(n int, fn func(w replay.World) error) error {
	h := &tmpHub{queues: map[tmpKey][][]byte{}, colls: map[[2]int]*tmpColl{}}
	h.cond = sync.NewCond(&h.mu)
	world := make([]int, n)
	for i := range world {
		world[i] = i
	}
	errs := make([]error, n)
	var wg sync.WaitGroup
	for r := 0; r < n; r++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[r] = fn(&tmpComm{hub: h, id: 0, rank: r, members: world})
			if errs[r] != nil {
				h.mu.Lock()
				if h.failed == nil {
					h.failed = errs[r]
				}
				h.cond.Broadcast()
				h.mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

func (c *tmpComm) Rank() int { return c.rank }
func (c *tmpComm) Size() int { return len(c.members) }

func (c *tmpComm) Send(dest, tag int, data []byte) error {
	h := c.hub
	h.mu.Lock()
	defer h.mu.Unlock()
	k := tmpKey{c.id, c.rank, dest, tag}
	h.queues[k] = append(h.queues[k], append([]byte(nil), data...))
	h.cond.Broadcast()
	return nil
}

func (c *tmpComm) Recv(src, tag int) ([]byte, error) {
	h := c.hub
	h.mu.Lock()
	defer h.mu.Unlock()
	k := tmpKey{c.id, src, c.rank, tag}
	for len(h.queues[k]) == 0 {
		if h.failed != nil {
			return nil, errors.New("aborted")
		}
		h.cond.Wait()
	}
	d := h.queues[k][0]
	h.queues[k] = h.queues[k][1:]
	return d, nil
}

// exchange contributes v and f and waits for all members' values.
func (c *tmpComm) exchange(v replay.TimeRank, f float64) ([]replay.TimeRank, []float64, error) {
	h := c.hub
	h.mu.Lock()
	defer h.mu.Unlock()
	key := [2]int{c.id, c.seq}
	c.seq++
	s := h.colls[key]
	if s == nil {
		s = &tmpColl{vals: make([]replay.TimeRank, len(c.members)), fs: make([]float64, len(c.members))}
		h.colls[key] = s
	}
	s.vals[c.rank], s.fs[c.rank] = v, f
	s.n++
	h.cond.Broadcast()
	for s.n < len(c.members) {
		if h.failed != nil {
			return nil, nil, errors.New("aborted")
		}
		h.cond.Wait()
	}
	s.done++
	if s.done == len(c.members) {
		delete(h.colls, key)
	}
	return s.vals, s.fs, nil
}

func (c *tmpComm) MaxLoc(v replay.TimeRank) (replay.TimeRank, error) {
	vs, _, err := c.exchange(v, 0)
	best := replay.TimeRank{Time: math.Inf(-1), Rank: math.MaxInt}
	for _, x := range vs {
		if x.Time > best.Time || (x.Time == best.Time && x.Rank < best.Rank) {
			best = x
		}
	}
	return best, err
}

func (c *tmpComm) MinLoc(v replay.TimeRank) (replay.TimeRank, error) {
	vs, _, err := c.exchange(v, 0)
	best := replay.TimeRank{Time: math.Inf(1), Rank: math.MaxInt}
	for _, x := range vs {
		if x.Time < best.Time || (x.Time == best.Time && x.Rank < best.Rank) {
			best = x
		}
	}
	return best, err
}

func (c *tmpComm) ScanMaxLoc(v replay.TimeRank) (replay.TimeRank, error) {
	vs, _, err := c.exchange(v, 0)
	best := replay.TimeRank{Time: math.Inf(-1), Rank: math.MaxInt}
	for _, x := range vs[:c.rank+1] {
		if x.Time > best.Time || (x.Time == best.Time && x.Rank < best.Rank) {
			best = x
		}
	}
	return best, err
}

func (c *tmpComm) Bcast(root int, v float64) (float64, error) {
	_, fs, err := c.exchange(replay.TimeRank{}, v)
	if err != nil {
		return 0, err
	}
	return fs[root], nil
}

func (c *tmpComm) Create(members []int) (replay.Comm, error) {
	// collective over world (id 0): every rank calls in the same order
	h := c.hub
	h.mu.Lock()
	c.nCreate++
	k := c.nCreate
	h.mu.Unlock()
	if _, _, err := c.exchange(replay.TimeRank{}, 0); err != nil {
		return nil, err
	}
	for i, w := range members {
		if w == c.rank {
			return &tmpComm{hub: h, id: k, rank: i, members: members}, nil
		}
	}
	return nil, nil
}
