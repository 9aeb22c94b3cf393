package otf2

import "math"

// Undefined reference values (all ones on the wire).
const (
	Undef32 = math.MaxUint32
	Undef64 = math.MaxUint64
)

// Definition record identifiers (global and local files share 10-43).
const (
	DefClockProperties        = 5 // global only
	DefMappingTable           = 5 // local only
	DefParadigm               = 6 // global only
	DefClockOffset            = 6 // local only
	DefParadigmProperty       = 7
	DefIoParadigm             = 8
	DefString                 = 10
	DefAttribute              = 11
	DefSystemTreeNode         = 12
	DefLocationGroup          = 13
	DefLocation               = 14
	DefRegion                 = 15
	DefCallsite               = 16
	DefCallpath               = 17
	DefGroup                  = 18
	DefMetricMember           = 19
	DefMetricClass            = 20
	DefMetricInstance         = 21
	DefComm                   = 22
	DefParameter              = 23
	DefRmaWin                 = 24
	DefMetricClassRecorder    = 25
	DefSystemTreeNodeProperty = 26
	DefSystemTreeNodeDomain   = 27
	DefLocationGroupProperty  = 28
	DefLocationProperty       = 29
	DefCartDimension          = 30
	DefCartTopology           = 31
	DefCartCoordinate         = 32
	DefSourceCodeLocation     = 33
	DefCallingContext         = 34
	DefCallingContextProperty = 35
	DefInterruptGenerator     = 36
	DefIoFileProperty         = 37
	DefIoRegularFile          = 38
	DefIoDirectory            = 39
	DefIoHandle               = 40
	DefIoPreCreatedHandle     = 41
	DefCallpathParameter      = 42
	DefInterComm              = 43
)

// Enumerations used by the analysis.
const (
	GroupTypeCommLocations = 4
	GroupTypeCommGroup     = 5
	GroupTypeCommSelf      = 6

	GroupFlagGlobalMembers = 1

	LocationTypeCPUThread = 1

	LocationGroupTypeProcess = 1
)

// Paradigms (OTF2_Paradigm).
const (
	ParadigmUser              = 1
	ParadigmCompiler          = 2
	ParadigmOpenMP            = 3
	ParadigmMPI               = 4
	ParadigmCUDA              = 5
	ParadigmMeasurementSystem = 6
	ParadigmPthread           = 7
	ParadigmOpenACC           = 18
	ParadigmOpenCL            = 19
)

// Region roles (OTF2_RegionRole).
const (
	RoleFunction        = 1
	RoleParallel        = 5
	RoleCritical        = 12
	RoleCriticalSblock  = 13
	RoleAtomic          = 14
	RoleBarrier         = 15
	RoleImplicitBarrier = 16
	RoleFlush           = 17
	RoleOrdered         = 18
	RoleTaskWait        = 22
	RoleCollOne2All     = 23
	RoleCollAll2One     = 24
	RoleCollAll2All     = 25
	RoleCollOther       = 26
	RolePoint2Point     = 28
	RoleRMA             = 29
	RoleArtificial      = 31
)

// Collective operations (OTF2_CollectiveOp) of MPI_COLLECTIVE_END.
const (
	CollBarrier            = 0
	CollBcast              = 1
	CollGather             = 2
	CollGatherv            = 3
	CollScatter            = 4
	CollScatterv           = 5
	CollAllgather          = 6
	CollAllgatherv         = 7
	CollAlltoall           = 8
	CollAlltoallv          = 9
	CollAlltoallw          = 10
	CollAllreduce          = 11
	CollReduce             = 12
	CollReduceScatter      = 13
	CollScan               = 14
	CollExscan             = 15
	CollReduceScatterBlock = 16
	CollCreateHandle       = 17
	CollDestroyHandle      = 18
)

// ClockProperties gives the timer resolution and the global time offset.
type ClockProperties struct {
	TimerResolution uint64 // ticks per second
	GlobalOffset    uint64 // corrected ticks of time zero
	TraceLength     uint64
	Realtime        uint64 // ns since the epoch of GlobalOffset, or Undef64
}

// Paradigm names a measurement paradigm.
type Paradigm struct {
	Paradigm uint8
	Name     uint32
	Class    uint8
}

// String is a string definition.
type String struct {
	Self  uint32
	Value string
}

// Attribute defines an attribute used in attribute lists.
type Attribute struct {
	Self, Name  uint32
	Type        uint8
	Description uint32
}

// SystemTreeNode is a node of the machine hierarchy.
type SystemTreeNode struct{ Self, Name, Class, Parent uint32 }

// SystemTreeNodeDomain tags a system tree node with a domain.
type SystemTreeNodeDomain struct {
	Node   uint32
	Domain uint8
}

// LocationGroup is a process (or accelerator) holding locations.
type LocationGroup struct {
	Self, Name uint32
	Type       uint8
	Parent     uint32 // system tree node
	Creator    uint32 // creating location group (OTF2 3.0), or Undef32
}

// Location is a thread of execution with its own event stream.
type Location struct {
	Self      uint64
	Name      uint32
	Type      uint8
	NumEvents uint64
	Group     uint32
}

// Region is a code region (function, MPI call, loop, ...).
type Region struct {
	Self, Name, Description uint32
	Type                    uint8 // pre-1.1 attic field
	File, Begin, End        uint32
	Canonical               uint32
	Role, Paradigm          uint8
	Flags                   uint32
}

// Callpath is a call-path definition (not written by Score-P for traces).
type Callpath struct{ Self, Parent, Region uint32 }

// Group is a set of locations, regions, metrics or ranks.
type Group struct {
	Self, Name uint32
	TypePre12  uint8
	Members    []uint64
	Type       uint8
	Paradigm   uint8
	Flags      uint32
}

// MetricMember defines one metric.
type MetricMember struct {
	Self, Name, Description uint32
	MetricType, Mode        uint8
	ValueType, Base         uint8
	Exponent                int64
	Unit                    uint32
}

// MetricClass groups metric members recorded together.
type MetricClass struct {
	Self         uint32
	Members      []uint32
	Occurrence   uint8
	RecorderKind uint8
}

// MetricInstance is a metric class recorded by one location for a scope.
type MetricInstance struct {
	Self, Class uint32
	Recorder    uint64
	ScopeType   uint8
	Scope       uint64
}

// Comm is a communicator; Group refers to a COMM_GROUP or COMM_SELF group.
type Comm struct {
	Self, Name, Group, Parent uint32
	Flags                     uint32
}

// InterComm is an inter-communicator (OTF2 3.0).
type InterComm struct {
	Self, Name, GroupA, GroupB, Common, Flags uint32
}

// Parameter is a user parameter definition.
type Parameter struct {
	Self, Name uint32
	Type       uint8
}

// RmaWin is a one-sided communication window.
type RmaWin struct{ Self, Name, Comm, Flags uint32 }

// CartDimension is one dimension of a Cartesian topology.
type CartDimension struct {
	Self, Name, Size uint32
	Periodic         uint8
}

// CartTopology is a Cartesian topology over a communicator.
type CartTopology struct {
	Self, Name, Comm uint32
	Dims             []uint32
}

// CartCoordinate places one rank in a Cartesian topology.
type CartCoordinate struct {
	Topology, Rank uint32
	Coords         []uint32
}

// RawRecord is a definition this reader keeps undecoded, byte for byte.
type RawRecord struct {
	Type    uint8
	Payload []byte
}

// Defs holds the definitions of a global (or local) definition file.
type Defs struct {
	Clock           ClockProperties
	HasClock        bool
	Paradigms       []Paradigm
	Strings         []String
	Attributes      []Attribute
	SystemTreeNodes []SystemTreeNode
	NodeDomains     []SystemTreeNodeDomain
	LocationGroups  []LocationGroup
	Locations       []Location
	Regions         []Region
	Callpaths       []Callpath
	Groups          []Group
	MetricMembers   []MetricMember
	MetricClasses   []MetricClass
	MetricInstances []MetricInstance
	Comms           []Comm
	InterComms      []InterComm
	Parameters      []Parameter
	RmaWins         []RmaWin
	CartDimensions  []CartDimension
	CartTopologies  []CartTopology
	CartCoordinates []CartCoordinate
	Other           []RawRecord // records kept undecoded, in file order

	// Count is the number of definition records read.
	Count uint64

	strIdx, regIdx, grpIdx, commIdx, locIdx map[uint64]int
}

// decodeDef decodes one definition record of type t (ids 10-43, and the
// global-only ids 5-8) from rec into d. It reports false for a record type
// it keeps raw.
func (d *Defs) decodeDef(t uint8, rec *cursor) bool {
	c := rec
	switch t {
	case DefString:
		d.Strings = append(d.Strings, String{c.u32c(), c.str()})
	case DefAttribute:
		a := Attribute{Self: c.u32c(), Name: c.u32c(), Type: c.u8(), Description: Undef32}
		if c.more() {
			a.Description = c.u32c()
		}
		d.Attributes = append(d.Attributes, a)
	case DefSystemTreeNode:
		d.SystemTreeNodes = append(d.SystemTreeNodes, SystemTreeNode{c.u32c(), c.u32c(), c.u32c(), c.u32c()})
	case DefSystemTreeNodeDomain:
		d.NodeDomains = append(d.NodeDomains, SystemTreeNodeDomain{c.u32c(), c.u8()})
	case DefLocationGroup:
		g := LocationGroup{Self: c.u32c(), Name: c.u32c(), Type: c.u8(), Parent: c.u32c(), Creator: Undef32}
		if c.more() {
			g.Creator = c.u32c()
		}
		d.LocationGroups = append(d.LocationGroups, g)
	case DefLocation:
		d.Locations = append(d.Locations, Location{c.u64c(), c.u32c(), c.u8(), c.u64c(), c.u32c()})
	case DefRegion:
		r := Region{Self: c.u32c(), Name: c.u32c(), Description: c.u32c(), Type: c.u8(),
			File: c.u32c(), Begin: c.u32c(), End: c.u32c()}
		r.Canonical = r.Name
		if c.more() {
			r.Canonical = c.u32c()
		}
		if c.more() {
			r.Role = c.u8()
		}
		if c.more() {
			r.Paradigm = c.u8()
		}
		if c.more() {
			r.Flags = c.u32c()
		}
		d.Regions = append(d.Regions, r)
	case DefCallpath:
		d.Callpaths = append(d.Callpaths, Callpath{c.u32c(), c.u32c(), c.u32c()})
	case DefGroup:
		g := Group{Self: c.u32c(), Name: c.u32c(), TypePre12: c.u8()}
		n := c.u32c()
		if uint64(n) > uint64(len(c.b)) {
			c.fail(errShort)
			break
		}
		g.Members = make([]uint64, n)
		for i := range g.Members {
			g.Members[i] = c.u64c()
		}
		if c.more() {
			g.Type, g.Paradigm, g.Flags = c.u8(), c.u8(), c.u32c()
		}
		d.Groups = append(d.Groups, g)
	case DefMetricMember:
		d.MetricMembers = append(d.MetricMembers, MetricMember{c.u32c(), c.u32c(), c.u32c(),
			c.u8(), c.u8(), c.u8(), c.u8(), c.i64c(), c.u32c()})
	case DefMetricClass:
		m := MetricClass{Self: c.u32c()}
		n := int(c.u8())
		for i := 0; i < n; i++ {
			m.Members = append(m.Members, c.u32c())
		}
		m.Occurrence = c.u8()
		if c.more() {
			m.RecorderKind = c.u8()
		}
		d.MetricClasses = append(d.MetricClasses, m)
	case DefMetricInstance:
		d.MetricInstances = append(d.MetricInstances, MetricInstance{c.u32c(), c.u32c(), c.u64c(), c.u8(), c.u64c()})
	case DefComm:
		m := Comm{Self: c.u32c(), Name: c.u32c(), Group: c.u32c(), Parent: c.u32c()}
		if c.more() {
			m.Flags = c.u32c()
		}
		d.Comms = append(d.Comms, m)
	case DefInterComm:
		d.InterComms = append(d.InterComms, InterComm{c.u32c(), c.u32c(), c.u32c(), c.u32c(), c.u32c(), c.u32c()})
	case DefParameter:
		d.Parameters = append(d.Parameters, Parameter{c.u32c(), c.u32c(), c.u8()})
	case DefRmaWin:
		w := RmaWin{Self: c.u32c(), Name: c.u32c(), Comm: c.u32c(), Flags: 1}
		if c.more() {
			w.Flags = c.u32c()
		}
		d.RmaWins = append(d.RmaWins, w)
	case DefCartDimension:
		d.CartDimensions = append(d.CartDimensions, CartDimension{c.u32c(), c.u32c(), c.u32c(), c.u8()})
	case DefCartTopology:
		t := CartTopology{Self: c.u32c(), Name: c.u32c(), Comm: c.u32c()}
		n := int(c.u8())
		for i := 0; i < n; i++ {
			t.Dims = append(t.Dims, c.u32c())
		}
		d.CartTopologies = append(d.CartTopologies, t)
	case DefCartCoordinate:
		k := CartCoordinate{Topology: c.u32c(), Rank: c.u32c()}
		n := int(c.u8())
		for i := 0; i < n; i++ {
			k.Coords = append(k.Coords, c.u32c())
		}
		d.CartCoordinates = append(d.CartCoordinates, k)
	default:
		return false
	}
	return true
}

// decodeGlobalOnly decodes the records that exist only in global files.
func (d *Defs) decodeGlobalOnly(t uint8, c *cursor) bool {
	switch t {
	case DefClockProperties:
		d.Clock = ClockProperties{c.u64c(), c.u64c(), c.u64c(), Undef64}
		if c.more() {
			d.Clock.Realtime = c.u64c()
		}
		d.HasClock = true
	case DefParadigm:
		d.Paradigms = append(d.Paradigms, Paradigm{c.u8(), c.u32c(), c.u8()})
	default:
		return false
	}
	return true
}
