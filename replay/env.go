package replay

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"

	"scout/localtrace/otf2"
)

// Region classes the patterns need, derived from region names and paradigm.
type RegionClass uint16

// Region class bits.
const (
	ClassMPI         RegionClass = 1 << iota // an MPI function
	ClassInit                                // MPI_Init, MPI_Init_thread
	ClassFinalize                            // MPI_Finalize
	ClassBlockSend                           // MPI_Send, MPI_Ssend
	ClassSendrecv                            // MPI_Sendrecv(_replace)
	ClassWaitSingle                          // MPI_Wait, MPI_Waitany
	ClassWaitMulti                           // MPI_Waitall, MPI_Waitsome
	ClassTest                                // MPI_Test*
	ClassRecv                                // MPI_Recv
	ClassOmp                                 // an OpenMP construct or lock-API call
	ClassOmpParallel                         // an OpenMP parallel region
	ClassOmpEBarrier                         // an explicit OpenMP barrier
	ClassOmpIBarrier                         // an implicit OpenMP barrier
	ClassOmpCritical                         // an OpenMP critical section (its lock is a critical's)
	// ClassOmpSync is OpenMP synchronization, as the report's
	// omp_synchronization and omp_flush count it: barriers, a critical
	// section's or atomic's entry (not its body), ordered, taskwait,
	// flush and the lock API.
	ClassOmpSync
)

// ClassOmpBarrier is either kind of OpenMP barrier.
const ClassOmpBarrier = ClassOmpEBarrier | ClassOmpIBarrier

// classify derives a region's classes from its definition.
func classify(defs *otf2.Defs, r *otf2.Region) RegionClass {
	name := defs.Str(r.Name)
	var c RegionClass
	if r.Paradigm == otf2.ParadigmMPI || strings.HasPrefix(name, "MPI_") {
		c |= ClassMPI
	} else {
		return classifyOmp(defs, r, name)
	}
	switch name {
	case "MPI_Init", "MPI_Init_thread":
		c |= ClassInit
	case "MPI_Finalize":
		c |= ClassFinalize
	case "MPI_Send", "MPI_Ssend":
		c |= ClassBlockSend
	case "MPI_Sendrecv", "MPI_Sendrecv_replace":
		c |= ClassSendrecv
	case "MPI_Wait", "MPI_Waitany":
		c |= ClassWaitSingle
	case "MPI_Waitall", "MPI_Waitsome":
		c |= ClassWaitMulti
	case "MPI_Test", "MPI_Testany", "MPI_Testall", "MPI_Testsome":
		c |= ClassTest
	case "MPI_Recv":
		c |= ClassRecv
	}
	return c
}

// classifyOmp derives the OpenMP classes of a region: OpenMP constructs
// are the regions named "!$omp ..." by the OPARI2 instrumentation and the
// lock-API wrappers (source file "OMP"); the construct is the name's
// start, before its source location (" @file:line").
func classifyOmp(defs *otf2.Defs, r *otf2.Region, name string) RegionClass {
	if !strings.HasPrefix(name, "!$omp") && defs.Str(r.File) != "OMP" {
		return 0
	}
	c := ClassOmp
	construct, _, _ := strings.Cut(strings.ToLower(name), " @")
	switch construct {
	case "!$omp parallel":
		c |= ClassOmpParallel
	case "!$omp barrier":
		c |= ClassOmpEBarrier
	case "!$omp ibarrier", "!$omp implicit barrier":
		c |= ClassOmpIBarrier
	}
	if r.Paradigm == otf2.ParadigmOpenMP && (r.Role == otf2.RoleCritical || r.Role == otf2.RoleCriticalSblock) {
		c |= ClassOmpCritical
	}
	if c&ClassOmpBarrier != 0 || ompLockAPI.MatchString(name) {
		c |= ClassOmpSync
	} else if r.Paradigm == otf2.ParadigmOpenMP {
		switch r.Role {
		case otf2.RoleBarrier, otf2.RoleImplicitBarrier, otf2.RoleAtomic, otf2.RoleCritical, otf2.RoleOrdered, otf2.RoleTaskWait, otf2.RoleFlush:
			c |= ClassOmpSync
		}
	}
	return c
}

// ompLockAPI matches the OpenMP lock-API functions.
var ompLockAPI = regexp.MustCompile(`^omp_(destroy|init|set|test|unset)(_nest)?_lock$`)

// Env is what every location's replay shares: the global definitions and
// what is derived from them.
type Env struct {
	Defs    *otf2.Defs
	classes []RegionClass          // by region id, for ids below denseRegions
	sparse  map[uint32]RegionClass // the others (ids a file may make up)
	defined RegionClass            // the classes of all regions together
	// CommMembers gives, for each communicator, the world ranks of its
	// members in communicator rank order; nil for a self communicator.
	CommMembers map[uint32][]int
	commOrder   []uint32
	commSelf    map[uint32]bool
	// Carts are the Cartesian topologies over MPI communicators, by
	// communicator (CartTopologies); nil for a trace without one.
	Carts map[uint32]*Cart

	// lists interns rank lists for the locations of this process
	// (InternFunc)
	mu    sync.Mutex
	lists map[uint64][][]int
}

// InternFunc returns a list of ints that every location of this
// process shares: the first one interned under hash h (see Hash) for
// which eq holds, or else build(), interned. The list must not be
// changed. Ranks that record the same set of partners (the members a
// collective synchronised, say) then hold one copy, not one each:
// memory O(ranks), not O(ranks²).
func (e *Env) InternFunc(h uint64, eq func([]int) bool, build func() []int) []int {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, l := range e.lists[h] {
		if eq(l) {
			return l
		}
	}
	if e.lists == nil {
		e.lists = map[uint64][][]int{}
	}
	l := build()
	e.lists[h] = append(e.lists[h], l)
	return l
}

// Hash is an FNV-1a hash of ints, built element by element.
type Hash uint64

// NewHash returns the hash of no ints.
func NewHash() Hash { return 14695981039346656037 }

// Add returns the hash with x appended.
func (h Hash) Add(x int) Hash {
	for i := range 8 {
		h ^= Hash(byte(uint64(x) >> (8 * i)))
		h *= 1099511628211
	}
	return h
}

// NewEnv derives the replay environment from global definitions.
func NewEnv(defs *otf2.Defs) (*Env, error) {
	e := &Env{Defs: defs, CommMembers: map[uint32][]int{}, commSelf: map[uint32]bool{}}
	for i := range defs.Regions {
		r := &defs.Regions[i]
		c := classify(defs, r)
		e.defined |= c
		switch {
		case c == 0:
		case int(r.Self) < denseRegions(len(defs.Regions)):
			if int(r.Self) >= len(e.classes) {
				e.classes = slices.Grow(e.classes, int(r.Self)+1-len(e.classes))[:r.Self+1]
			}
			e.classes[r.Self] = c
		default:
			if e.sparse == nil {
				e.sparse = map[uint32]RegionClass{}
			}
			e.sparse[r.Self] = c
		}
	}
	for _, c := range defs.Comms {
		g, ok := defs.Group(c.Group)
		if !ok {
			return nil, fmt.Errorf("replay: communicator %d refers to undefined group %d", c.Self, c.Group)
		}
		if g.Paradigm != otf2.ParadigmMPI {
			continue // not an MPI communicator (e.g. a topology pseudo-communicator)
		}
		switch g.Type {
		case otf2.GroupTypeCommSelf:
			e.commSelf[c.Self] = true
		case otf2.GroupTypeCommGroup:
			m := make([]int, len(g.Members))
			for i, w := range g.Members {
				m[i] = int(w)
			}
			e.CommMembers[c.Self] = m
			e.commOrder = append(e.commOrder, c.Self)
		}
	}
	e.Carts = CartTopologies(defs)
	return e, nil
}

// Class returns the classes of region id.
func (e *Env) Class(region uint32) RegionClass {
	if int(region) < len(e.classes) {
		return e.classes[region]
	}
	return e.sparse[region]
}

// Defines reports whether some region of the definitions has a class of
// c: a pattern of such regions (OpenMP's, in an MPI-only trace) need not
// subscribe to events it would only skip.
func (e *Env) Defines(c RegionClass) bool { return e.defined&c != 0 }

// denseRegions bounds the region ids whose classes are held in a slice:
// ids are dense in real traces, but the memory must follow what the
// definitions hold, not the ids they claim.
func denseRegions(n int) int { return 2*n + 1024 }

// IsSelf reports whether comm is a size-1 (self) communicator.
func (e *Env) IsSelf(comm uint32) bool {
	return e.commSelf[comm] || len(e.CommMembers[comm]) == 1
}

// WorldRank returns the world rank of rank peer of communicator comm,
// me for a self communicator; an error for an unknown communicator or a
// rank it lacks.
func (e *Env) WorldRank(comm uint32, peer, me int) (int, error) {
	if members, ok := e.CommMembers[comm]; ok && members != nil {
		if peer < 0 || peer >= len(members) {
			return 0, fmt.Errorf("rank %d is no member of communicator %d (%d members)", peer, comm, len(members))
		}
		return members[peer], nil
	}
	if e.commSelf[comm] {
		if peer != 0 {
			return 0, fmt.Errorf("rank %d is no member of self communicator %d", peer, comm)
		}
		return me, nil
	}
	return 0, fmt.Errorf("communicator %d is unknown", comm)
}
