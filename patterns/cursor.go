package patterns

import "scout/localtrace"

// cursor is where a walk of the what-if model (the prediction, the
// reduction) stands in a location's events: the first event not
// handled, the last handled one's measured time, the call path of the
// interval since, the open region instances (their Enters) and the last
// collective begin. The walker keeps its own value (its differences) for
// each open instance, by position, and for the collective begin.
type cursor struct {
	t     *localtrace.Trace
	next  int
	prevT float64
	cp    uint32
	open  []mark
	coll  mark // (i −1: none)
}

// mark is an event of the walk and its measured time.
type mark struct {
	i int
	t float64
}

// place puts the cursor before the first event of t.
func (c *cursor) place(t *localtrace.Trace) {
	c.t, c.cp, c.coll = t, localtrace.None, mark{i: -1}
	if len(t.Events) > 0 {
		c.prevT = t.Time(0)
	}
}

// step records event j as handled and says what it did to the open
// instances: +1 it opened one (an Enter), −1 it closed one (a Leave),
// else 0.
func (c *cursor) step(j int) int {
	e := &c.t.Events[j]
	tj := c.t.Time(j)
	c.prevT, c.next = tj, j+1
	switch e.Kind {
	case localtrace.KindEnter:
		c.cp = e.Arg
		c.open = append(c.open, mark{j, tj})
		return 1
	case localtrace.KindLeave:
		c.cp = c.t.Callpaths[e.Arg].Parent
		if n := len(c.open); n > 0 {
			c.open = c.open[:n-1]
			return -1
		}
	case localtrace.KindCollBegin:
		c.coll = mark{j, tj}
	}
	return 0
}

// innermost returns the position in open of the innermost open
// instance if its Enter is event i, else −1.
func (c *cursor) innermost(i int) int {
	if n := len(c.open); n > 0 && c.open[n-1].i == i {
		return n - 1
	}
	return -1
}

// begin returns the begin of the collective that event i ends (its
// begin event, or its Enter) and whether it is the last collective
// begin (else the innermost open instance's Enter, at position at).
func (c *cursor) begin(i int) (m mark, isColl bool, at int, ok bool) {
	b := beginOf(c.t, i)
	if b == c.coll.i {
		return c.coll, true, -1, true
	}
	if at := c.innermost(b); at >= 0 {
		return c.open[at], false, at, true
	}
	return mark{i: b}, false, -1, false
}
