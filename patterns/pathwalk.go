package patterns

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"scout/localtrace"
	"scout/replay"
)

// The critical path's walk (criticalpath.go) is solved at one location
// from what every location knows once the synchpoints are complete,
// instead of being handed along, message by message, in bwc: where the
// path goes depends on the wait states and their partners only, which
// are known after fws. Every location lists its path points, the events
// where the path may leave it or come to it, in the order bwc visits
// them (last event first):
//
//	leave:  a Late Sender's receive, a Late Receiver's send completion,
//	        a collective's end where it waited (communicator, instance),
//	        a fork or OpenMP barrier of its team (the team's k-th)
//	arrive: an LS-matched send (from the receive's rank and event), a
//	        receive request a Late Receiver waited for (from the send
//	        completion's rank and event), the end of a collective it
//	        delayed (from every member that left there), a team synchpoint
//	        where it takes the path (from every thread that left there)
//	the start at the last rank's Leave of MPI_Finalize and the end at
//	        MPI_Init's Leave
//
// Location 0 gathers the lists and runs each location through its
// points, a location waiting at an arrival until every partner that may
// hand the path over there has passed its leave (the dependencies of bwc,
// which does not deadlock). It returns each location its segments (from
// a leave to the point it joined the path), in the order bwc met them;
// the location sums its share over them as bwc did (pathShare).

// CpathSolve is the topic of the critical path's pass.
var CpathSolve = replay.NewTopic("CpathSolve")

// Kinds of path points.
const (
	ptFinalize   = iota // the path starts here
	ptInit              // the share up to MPI_Init's Leave
	ptLeave             // a point-to-point wait state
	ptArrive            // from a wait state (rank, event)
	ptCollLeave         // a collective wait state (communicator, instance)
	ptCollPass          // a collective that is no wait state (communicator, instance)
	ptCollArrive        // a collective it delayed (communicator, instance)
	ptTeamLeave         // the team's next synchpoint
	ptTeamTake          // takes the path at the team's last synchpoint
	numPointKinds
)

// cpathTag is the tag of the points the ranks send location 0 and of
// the segments it sends them back.
const cpathTag = 0x435041

// pathKeys are what the passes before bwc record for the critical path:
// the partners' events of the location's arrivals.
type pathKeys struct {
	// lsRecv is, by lsSends, the receiver's event of the message
	lsRecv []int32
	// lrReqs are the receive requests a Late Receiver waited for, with
	// the sender's rank and send completion event
	lrReqs []lrKey
}

type lrKey struct{ req, rank, cmp int32 }

// pathPoints appends the location's path points to out, encoded: the
// number of its point-to-point leaves and their events (each as its
// distance from the previous one's, from the trace's end), then per
// point its kind, the distance of its event from the previous point's
// and its arguments, as unsigned varints. (The leaves' events come
// first so that location 0 can find a leave by its event before it
// decodes the points, which it decodes once, as it walks.)
func (rc *rootCause) pathPoints(c *replay.Ctx, out []byte) []byte {
	t := c.Trace
	sp := &rc.sp
	keys := &rc.keys
	slices.SortFunc(keys.lrReqs, func(a, b lrKey) int { return int(a.req) - int(b.req) })
	// the collectives' instances on their communicators, counted down
	var comms, left []uint32 // (few communicators)
	for _, ev := range rc.colls.ev {
		comm := t.Collective(int(ev)).Comm
		if k := slices.Index(comms, comm); k >= 0 {
			left[k]++
		} else {
			comms, left = append(comms, comm), append(left, 1)
		}
	}
	instance := func(comm uint32) int {
		k := slices.Index(comms, comm)
		left[k]--
		return int(left[k])
	}
	me := c.Loc.Rank
	pts := make([]byte, 0, 6*(len(sp.events)+len(rc.colls.ev)+len(rc.omp.sps)+2))
	var leaves []byte
	prev, lprev, nleaves := len(t.Events), len(t.Events), 0
	put := func(kind, ev int, args ...int) {
		pts = append(pts, byte(kind))
		pts = binary.AppendUvarint(pts, uint64(prev-ev))
		for _, a := range args {
			pts = binary.AppendUvarint(pts, uint64(a))
		}
		prev = ev
		if kind == ptLeave {
			leaves = binary.AppendUvarint(leaves, uint64(lprev-ev))
			lprev = ev
			nleaves++
		}
	}
	ls := len(rc.lsSends) - 1
	lr := len(keys.lrReqs) - 1
	// the sources, each descending: the point-to-point synchpoints, the
	// collectives, the team's synchpoints, MPI_Finalize and MPI_Init
	s, k, o := len(sp.events)-1, len(rc.colls.ev)-1, len(rc.omp.sps)-1
	fin, init := rc.finLeave, rc.initLeave
	var lastComm uint32
	var members []int // of lastComm
	if !rc.finLatest {
		fin = -1
	}
	for {
		evS, evK, evO := -1, -1, -1
		if s >= 0 {
			evS = int(sp.events[s])
		}
		if k >= 0 {
			evK = int(rc.colls.ev[k])
		}
		if o >= 0 {
			evO = rc.omp.sps[o]
		}
		ev := max(evS, evK, evO, fin, init)
		if ev < 0 {
			break
		}
		switch ev {
		case fin:
			put(ptFinalize, fin)
			fin = -1
		case init:
			put(ptInit, init)
			init = -1
		case evK:
			rec := rc.colls.rec[k]
			comm := t.Collective(ev).Comm
			inst := instance(comm)
			if ev == evS && sp.sps[s].wait > 0 {
				put(ptCollLeave, ev, int(comm), inst)
			} else {
				put(ptCollPass, ev, int(comm), inst)
			}
			if comm != lastComm || members == nil {
				lastComm, members = comm, c.Env.CommMembers[comm]
			}
			if int(rec.delayer) < len(members) && members[rec.delayer] == me {
				put(ptCollArrive, ev, int(comm), inst)
			}
			k--
			if ev == evS {
				s--
			}
		case evO:
			if _, fork := rc.tm.fork[ev]; fork {
				put(ptTeamLeave, ev)
				if c.Loc.Thread == 0 {
					put(ptTeamTake, ev)
				}
			} else if _, ok := rc.omp.latest[ev]; ok {
				put(ptTeamLeave, ev)
				if !(sp.waitOf(ev) > 0) {
					put(ptTeamTake, ev)
				}
			}
			o--
			if ev == evS {
				s--
			}
		default: // evS
			s--
			p := &sp.sps[s+1]
			kind := t.Events[ev].Kind
			switch {
			case p.omp():
			case (kind == localtrace.KindRecv || kind == localtrace.KindIrecv) && c.IsMessage(ev):
				if p.wait > 0 {
					put(ptLeave, ev)
				} else if kind == localtrace.KindRecv {
					lr = rc.lrArrive(put, ev, lr)
				}
			case (kind == localtrace.KindSend || kind == localtrace.KindIsend) && c.IsMessage(ev):
				for ls >= 0 && int(rc.lsSends[ls]) > ev {
					ls--
				}
				if ls >= 0 && int(rc.lsSends[ls]) == ev && ls < len(keys.lsRecv) && keys.lsRecv[ls] >= 0 {
					m := t.Message(ev)
					put(ptArrive, ev, worldRank(c, m.Comm, int(m.Peer)), int(keys.lsRecv[ls]))
				}
				if kind == localtrace.KindSend && p.wait > 0 {
					put(ptLeave, ev)
				}
			case kind == localtrace.KindIsendComplete:
				if p.wait > 0 && t.Link(ev) != localtrace.None {
					put(ptLeave, ev)
				}
			case kind == localtrace.KindIrecvRequest:
				if !(p.wait > 0) && t.Link(ev) != localtrace.None {
					lr = rc.lrArrive(put, ev, lr)
				}
			}
		}
	}
	out = binary.AppendUvarint(out, uint64(nleaves))
	out = append(out, leaves...)
	return append(out, pts...)
}

// lrArrive puts the arrival at receive request q from the Late
// Receiver that waited for it, found among rc.keys.lrReqs below lr
// (descending); it returns where the search ended.
func (rc *rootCause) lrArrive(put func(kind, ev int, args ...int), q, lr int) int {
	keys := rc.keys.lrReqs
	for lr >= 0 && int(keys[lr].req) > q {
		lr--
	}
	if lr >= 0 && int(keys[lr].req) == q && keys[lr].cmp >= 0 && keys[lr].rank >= 0 {
		put(ptArrive, q, int(keys[lr].rank), int(keys[lr].cmp))
	}
	return lr
}

// eventKey is the event a PartnerEvent field gave, -1 for none.
func eventKey(v uint64, ok bool) int32 {
	if !ok || v >= 1<<31 {
		return -1
	}
	return int32(v)
}

// pathPoint is a decoded path point.
type pathPoint struct {
	ev   int32
	kind uint8
	a, b int32 // ptArrive: rank, event; ptColl*: communicator, instance
}

// simLoc is a location in the walk: its points, decoded one at a time.
type simLoc struct {
	data   []byte // the points not yet decoded
	prev   uint64 // the event of the last decoded point
	cur    pathPoint
	has    bool    // cur is the next point
	leaves []int32 // the events of its point-to-point leaves, descending
	left   []bool  // by leave: the path left there
	passed int     // the leaves passed
	on     bool
	end    int32
	segs   []int32 // (from, to) pairs
	team   int
	k      int // team synchpoints passed
	scan   int // where the search for a member that holds up cur stopped
	steps  int // points passed
	done   bool
	// the last instance passed on each communicator (few)
	commComm []uint32
	commInst []int32
}

// groupState counts, by instance of a collective or team synchpoint,
// the members that passed it and whether one of them left the path
// there.
type groupState struct {
	arrived []int32
	held    []bool
}

func (g *groupState) pass(k int, left bool) {
	if k >= len(g.arrived) {
		n := k + 1
		g.arrived = slices.Grow(g.arrived, n-len(g.arrived))[:n]
		g.held = slices.Grow(g.held, n-len(g.held))[:n]
	}
	g.arrived[k]++
	g.held[k] = g.held[k] || left
}

func (g *groupState) count(k int) int {
	if k < len(g.arrived) {
		return int(g.arrived[k])
	}
	return 0
}

func (g *groupState) heldAt(k int) bool { return k < len(g.held) && g.held[k] }

// pathWalk is the walk at location 0.
type pathWalk struct {
	env    *replay.Env
	locs   []simLoc
	master []int   // by world rank: its master's location
	teams  [][]int // by rank: its threads' locations
	// by team (rank) and by communicator: the synchpoints passed
	teamState []groupState
	commState map[uint32]*groupState
}

// next decodes location l's next point into cur.
func (loc *simLoc) next() (bool, error) {
	if loc.has {
		return true, nil
	}
	data := loc.data
	if len(data) == 0 {
		return false, nil
	}
	kind := data[0]
	data = data[1:]
	if kind >= numPointKinds {
		return false, fmt.Errorf("bad path point kind %d", kind)
	}
	var args [3]uint64
	n := 1
	switch kind {
	case ptArrive, ptCollLeave, ptCollPass, ptCollArrive:
		n = 3
	}
	for i := range n {
		var v uint64
		k := 1
		if len(data) > 0 && data[0] < 0x80 {
			v = uint64(data[0]) // (most values: a byte)
		} else if v, k = binary.Uvarint(data); k <= 0 {
			return false, errors.New("truncated path points")
		}
		if v > 1<<31 {
			return false, fmt.Errorf("bad path point value %d", v)
		}
		args[i], data = v, data[k:]
	}
	if args[0] > loc.prev {
		return false, errors.New("bad path point: events out of order")
	}
	loc.prev -= args[0]
	loc.data = data
	loc.cur = pathPoint{ev: int32(loc.prev), kind: kind, a: int32(args[1]), b: int32(args[2])}
	loc.has = true
	return true, nil
}

// readLeaves reads the events of the point-to-point leaves before the
// points in data and readies the location for the walk.
func (loc *simLoc) readLeaves(data []byte, events int) error {
	n, k := binary.Uvarint(data)
	if k <= 0 || n > uint64(len(data)) {
		return errors.New("truncated path points")
	}
	data = data[k:]
	loc.leaves = make([]int32, 0, n)
	prev := uint64(events)
	for range n {
		d, k := binary.Uvarint(data)
		if k <= 0 {
			return errors.New("truncated path points")
		}
		if d > prev {
			return errors.New("bad path point: leaves out of order")
		}
		prev -= d
		loc.leaves = append(loc.leaves, int32(prev))
		data = data[k:]
	}
	loc.left = make([]bool, n)
	loc.data, loc.prev = data, uint64(events)
	return nil
}

// leaveAt returns the index of location l's point-to-point leave at
// event ev, -1 for none.
func (w *pathWalk) leaveAt(l int, ev int32) int {
	lv := w.locs[l].leaves
	k, ok := slices.BinarySearchFunc(lv, ev, func(e, ev int32) int { return int(ev - e) })
	if !ok {
		return -1
	}
	return k
}

// commPassed returns the last instance location l passed on comm, -1
// for none.
func (loc *simLoc) commPassed(comm uint32) int {
	if k := slices.Index(loc.commComm, comm); k >= 0 {
		return int(loc.commInst[k])
	}
	return -1
}

func (loc *simLoc) setCommPassed(comm uint32, inst int32) {
	if k := slices.Index(loc.commComm, comm); k >= 0 {
		loc.commInst[k] = inst
		return
	}
	loc.commComm, loc.commInst = append(loc.commComm, comm), append(loc.commInst, inst)
}

func (w *pathWalk) comm(id uint32) *groupState {
	g := w.commState[id]
	if g == nil {
		g = &groupState{}
		w.commState[id] = g
	}
	return g
}

// advance runs location l through its points until it must wait for
// another location (returned) or is done (-1).
func (w *pathWalk) advance(l int) (int, error) {
	loc := &w.locs[l]
	for {
		ok, err := loc.next()
		if err != nil {
			return -1, err
		}
		if !ok {
			loc.done = true
			return -1, nil
		}
		p := &loc.cur
		switch p.kind {
		case ptFinalize:
			loc.on, loc.end = true, p.ev
		case ptInit:
			if loc.on {
				loc.segs = append(loc.segs, p.ev, loc.end)
			}
		case ptLeave, ptCollLeave, ptTeamLeave:
			left := loc.on
			if left {
				loc.segs = append(loc.segs, p.ev, loc.end)
				loc.on = false
			}
			switch p.kind {
			case ptLeave:
				if loc.passed < len(loc.left) {
					loc.left[loc.passed] = left
				}
				loc.passed++
			case ptCollLeave:
				w.comm(uint32(p.a)).pass(int(p.b), left)
				loc.setCommPassed(uint32(p.a), p.b)
			case ptTeamLeave:
				w.teamState[loc.team].pass(loc.k, left)
				loc.k++
			}
		case ptCollPass:
			w.comm(uint32(p.a)).pass(int(p.b), false)
			loc.setCommPassed(uint32(p.a), p.b)
		case ptArrive:
			if int(p.a) >= len(w.master) || p.a < 0 {
				return -1, fmt.Errorf("a message partner of rank %d outside the world", p.a)
			}
			src := w.master[p.a]
			if k := w.leaveAt(src, p.b); k >= 0 {
				if k >= w.locs[src].passed {
					return src, nil
				}
				if w.locs[src].left[k] {
					loc.on, loc.end = true, p.ev
				}
			}
		case ptCollArrive:
			members := w.env.CommMembers[uint32(p.a)]
			if len(members) == 0 {
				return -1, fmt.Errorf("a collective on communicator %d, which has no members", p.a)
			}
			g := w.comm(uint32(p.a))
			if g.count(int(p.b)) < len(members) {
				for ; loc.scan < len(members); loc.scan++ {
					m := members[loc.scan]
					if m < 0 || m >= len(w.master) {
						return -1, fmt.Errorf("a member of communicator %d of rank %d outside the world", p.a, m)
					}
					src := w.master[m]
					if x := w.locs[src].commPassed(uint32(p.a)); x < 0 || x > int(p.b) {
						return src, nil
					}
				}
				return -1, fmt.Errorf("instance %d of communicator %d: %d of its %d members passed it", p.b, p.a, g.count(int(p.b)), len(members))
			}
			if g.heldAt(int(p.b)) {
				loc.on, loc.end = true, p.ev
			}
		case ptTeamTake:
			g := &w.teamState[loc.team]
			k := loc.k - 1
			team := w.teams[loc.team]
			if k < 0 {
				return -1, errors.New("a team synchpoint taken before it was passed")
			}
			if g.count(k) < len(team) {
				for ; loc.scan < len(team); loc.scan++ {
					if j := team[loc.scan]; w.locs[j].k <= k {
						return j, nil
					}
				}
				return -1, errors.New("a team synchpoint that not every thread passes")
			}
			if g.heldAt(k) {
				loc.on, loc.end = true, p.ev
			}
		}
		loc.has, loc.scan = false, 0
		loc.steps++
	}
}

// run walks every location to its end.
func (w *pathWalk) run() error {
	waiters := make([][]int, len(w.locs))
	queue := make([]int, 0, len(w.locs))
	for l := range w.locs {
		queue = append(queue, l)
	}
	for len(queue) > 0 {
		l := queue[len(queue)-1]
		queue = queue[:len(queue)-1]
		steps := w.locs[l].steps
		on, err := w.advance(l)
		if err != nil {
			return fmt.Errorf("location %d: %w", l, err)
		}
		if w.locs[l].steps > steps || w.locs[l].done {
			// (those waiting for l may go on, or wait again)
			queue = append(queue, waiters[l]...)
			waiters[l] = waiters[l][:0]
		}
		if on >= 0 {
			if on == l {
				return fmt.Errorf("location %d waits for itself", l)
			}
			waiters[on] = append(waiters[on], l)
		}
	}
	for l := range w.locs {
		if loc := &w.locs[l]; !loc.done {
			return fmt.Errorf("the critical path's hand-overs do not match: location %d stops at event %d", l, loc.cur.ev)
		}
	}
	return nil
}

// solvePath finds the location's segments of the critical path (at
// location 0, from every location's points) and sums its share over
// them, then computes the path's metrics.
func (rc *rootCause) solvePath(c *replay.Ctx) error {
	if rc.tm.fork != nil {
		rc.ompSpans(c.Trace) // (a worker's times count in its spans only)
	}
	// a part of its rank's message: its number of events, the length
	// of its points (4 bytes each) and its points
	mine := rc.pathPoints(c, make([]byte, partHeader))
	binary.LittleEndian.PutUint32(mine, uint32(len(c.Trace.Events)))
	binary.LittleEndian.PutUint32(mine[4:], uint32(len(mine)-partHeader))
	rc.keys = pathKeys{}
	// the threads' parts to the master, the ranks' messages to rank 0
	team := c.Loc.Team
	var segs []byte // this rank's segments, by thread
	if team != nil {
		parts, err := team.Gather(0, mine)
		if err != nil {
			return fmt.Errorf("critical path: gathering the threads' points: %w", err)
		}
		if c.Loc.Thread == 0 {
			mine = slices.Concat(parts...)
		}
	}
	if c.Loc.Thread == 0 {
		var err error
		if segs, err = rc.worldPath(c, mine); err != nil {
			return err
		}
	}
	if team != nil {
		out, err := team.Bcast(0, segs)
		if err != nil {
			return fmt.Errorf("critical path: handing the threads their segments: %w", err)
		}
		segs = out
	}
	// this thread's part
	for th := 0; ; th++ {
		n, k := binary.Uvarint(segs)
		if k <= 0 || uint64(len(segs)-k) < n {
			return fmt.Errorf("critical path: truncated segments for thread %d of rank %d", c.Loc.Thread, c.Loc.Rank)
		}
		if th == c.Loc.Thread {
			segs = segs[k : k+int(n)]
			break
		}
		segs = segs[k+int(n):]
	}
	for len(segs) > 0 {
		from, k := binary.Uvarint(segs)
		if k <= 0 {
			return errors.New("critical path: truncated segment")
		}
		d, j := binary.Uvarint(segs[k:])
		if j <= 0 || from+d > uint64(len(c.Trace.Events)) {
			return errors.New("critical path: bad segment")
		}
		segs = segs[k+j:]
		rc.pathShare(c, int(from), int(from+d))
	}
	return rc.finishPath(c)
}

// partHeader is the length of a part's header.
const partHeader = 8

// worldPath sends the rank's points (msg: its threads' parts) to rank 0
// and returns the rank's segments (per thread: its length and its
// segments); rank 0 walks the path.
func (rc *rootCause) worldPath(c *replay.Ctx, msg []byte) ([]byte, error) {
	world := c.Loc.World
	if world == nil || world.Size() == 1 {
		out, err := walkPath(c.Env, [][]byte{msg})
		if err != nil {
			return nil, fmt.Errorf("critical path: %w", err)
		}
		return out[0], nil
	}
	if world.Rank() != 0 {
		if err := world.SendOwned(0, cpathTag, msg); err != nil {
			return nil, fmt.Errorf("critical path: sending rank 0 the points: %w", err)
		}
		segs, err := world.RecvOwned(0, cpathTag)
		if err != nil {
			return nil, fmt.Errorf("critical path: receiving the segments: %w", err)
		}
		return segs, nil
	}
	all := make([][]byte, world.Size())
	all[0] = msg
	for r := 1; r < len(all); r++ {
		data, err := world.RecvOwned(r, cpathTag)
		if err != nil {
			return nil, fmt.Errorf("critical path: receiving rank %d's points: %w", r, err)
		}
		all[r] = data
	}
	out, err := walkPath(c.Env, all)
	if err != nil {
		return nil, fmt.Errorf("critical path: %w", err)
	}
	for r := 1; r < len(out); r++ {
		if err := world.SendOwned(r, cpathTag, out[r]); err != nil {
			return nil, fmt.Errorf("critical path: sending rank %d its segments: %w", r, err)
		}
	}
	return out[0], nil
}

// walkPath walks the path through the points of every rank (by rank:
// its threads' parts) and returns each rank's segments.
func walkPath(env *replay.Env, ranks [][]byte) ([][]byte, error) {
	w := &pathWalk{env: env, master: make([]int, len(ranks)), commState: map[uint32]*groupState{}}
	type part struct {
		rank, events int
		data         []byte
	}
	var parts []part
	for r, msg := range ranks {
		w.master[r] = len(parts)
		var team []int
		for len(msg) > 0 {
			if len(msg) < partHeader {
				return nil, fmt.Errorf("rank %d: truncated points", r)
			}
			events, n := binary.LittleEndian.Uint32(msg), binary.LittleEndian.Uint32(msg[4:])
			if uint64(len(msg)-partHeader) < uint64(n) {
				return nil, fmt.Errorf("rank %d: truncated points", r)
			}
			team = append(team, len(parts))
			parts = append(parts, part{r, int(events), msg[partHeader : partHeader+int(n)]})
			msg = msg[partHeader+int(n):]
		}
		if len(team) == 0 {
			return nil, fmt.Errorf("rank %d sent no points", r)
		}
		w.teams = append(w.teams, team)
	}
	w.teamState = make([]groupState, len(ranks))
	w.locs = make([]simLoc, len(parts))
	for l, p := range parts {
		loc := &w.locs[l]
		loc.team = p.rank
		if err := loc.readLeaves(p.data, p.events); err != nil {
			return nil, fmt.Errorf("rank %d: %w", p.rank, err)
		}
	}
	if err := w.run(); err != nil {
		return nil, err
	}
	out := make([][]byte, len(ranks))
	var seg []byte
	for l, p := range parts {
		seg = seg[:0]
		s := w.locs[l].segs
		for i := 0; i < len(s); i += 2 {
			seg = binary.AppendUvarint(seg, uint64(s[i]))
			seg = binary.AppendUvarint(seg, uint64(s[i+1]-s[i]))
		}
		out[p.rank] = binary.AppendUvarint(out[p.rank], uint64(len(seg)))
		out[p.rank] = append(out[p.rank], seg...)
	}
	return out, nil
}
