package cube

// Report holds the definitions of a CUBE4 report and, optionally, its
// values.
//
// IDs must follow the rules CubeLib depends on (see [Report.Validate]):
// region IDs are the indexes into Regions, cnode IDs are dense 0..C-1,
// location IDs are dense 0..L-1 and name the columns of every data row,
// and metric IDs are unique and name the N.data/N.index members. The
// Add* helpers assign such IDs in definition order.
type Report struct {
	// Attrs are the report attributes (<attr key value/>), in order. The
	// three attributes that every CubeW report starts with ("CubePL
	// Version", "Cube Version", "Cube anchor.xml syntax version") are
	// written automatically and dropped when reading.
	Attrs []Attr
	// Mirrors are the documentation mirror URLs (<murl>). A metric URL
	// starting with "@mirror@" is resolved against them by the Cube GUI.
	Mirrors []string
	// Metrics are the roots of the metric tree, in document order.
	Metrics []*Metric
	// Regions are all regions; Regions[i].ID == i.
	Regions []*Region
	// Cnodes are the roots of the call tree, in document order.
	Cnodes []*Cnode
	// System are the roots of the system tree (e.g. machines).
	System []*SystemNode
	// Topologies are the Cartesian topologies, in document order.
	Topologies []*Cartesian
	// Misc are opaque extra members of the archive (e.g. remapping.spec).
	Misc []MiscFile
	// Values holds the stored values per metric ID. It may be nil or
	// lack metrics; a missing metric reads as all empty (zero). The
	// streaming Writer ignores it.
	Values map[int]*Severity

	// nextCnode and nextLoc cache the next free cnode and location IDs
	// for AddCnode and AddLocation (0: not yet counted; else ID+1).
	nextCnode, nextLoc int
}

// Attr is one key/value attribute attached to a report or to a
// definition.
type Attr struct {
	// Key and Value are the attribute's name and value.
	Key, Value string
}

// MiscFile is an opaque archive member that is neither anchor.xml nor a
// metric's data or index.
type MiscFile struct {
	// Name is the member name: flat, shorter than 100 bytes.
	Name string
	// Data is the member's content.
	Data []byte
}

// Metric is a node of the metric tree.
type Metric struct {
	// ID is the metric's file ID: its values live in ID.data and ID.index.
	ID int
	// UniqName is the unique name (e.g. "mpi_latesender"); keep it to
	// [A-Za-z0-9_:=] so CubePL expressions can refer to it.
	UniqName string
	// DispName is the name shown to users (e.g. "Late Sender").
	DispName string
	// DataType is the value type, e.g. [Float] or [Integer].
	DataType DataType
	// Type says how values relate to the call tree ([Inclusive] or
	// [Exclusive]); derived types store no values.
	Type MetricType
	// Viz is the visualization type; ghost metrics are hidden in the GUI.
	Viz VizType
	// Unit is the unit of measurement (<uom>), e.g. "sec", "occ", "bytes".
	Unit string
	// Val is the optional <val> text; "VOID" marks an inactive metric.
	Val string
	// URL points to documentation, often "@mirror@page.html#anchor".
	URL string
	// Descr is a one-line description.
	Descr string
	// Expression, InitExpression and AggrExpression are the CubePL code of
	// a derived metric (<cubepl>, <cubeplinit>, <cubeplaggr>); empty for
	// data metrics. AggrExpression is written with cubeplaggrtype=plus.
	Expression, InitExpression, AggrExpression string
	// Attrs are the metric's attributes.
	Attrs []Attr
	// Parent is nil for a root metric.
	Parent *Metric
	// Children are the child metrics in document order. Their values are
	// contained in this metric's values.
	Children []*Metric
}

// Region is a source-code region (function, loop, MPI call, ...).
type Region struct {
	// ID is the region's index in Report.Regions.
	ID int
	// Name is the display name, e.g. "MPI_Recv" or "main".
	Name string
	// MangledName is the canonical or linker name; empty means Name.
	MangledName string
	// Descr is a description.
	Descr string
	// URL points to documentation.
	URL string
	// Mod is the module or source file, e.g. "/src/app.c" or "MPI".
	Mod string
	// Begin and End are the first and last source lines; -1 if unknown.
	Begin, End int
	// Paradigm is e.g. "mpi", "compiler", "user", "measurement".
	Paradigm string
	// Role is e.g. "function", "artificial", "barrier", "point2point".
	Role string
	// Attrs are the region's attributes.
	Attrs []Attr
}

// Cnode is a node of the call tree: a region called along one call path.
type Cnode struct {
	// ID is the cnode's ID, dense over the whole call tree.
	ID int
	// Region is the called region.
	Region *Region
	// Line is the call-site line; 0 means unknown. Values <= 0 are not
	// written, and read as 0.
	Line int
	// Mod is the call-site module or file; may be empty.
	Mod string
	// Params are call-path parameters, in order.
	Params []Param
	// Attrs are the cnode's attributes.
	Attrs []Attr
	// Parent is nil for a root.
	Parent *Cnode
	// Children are the callees in document order.
	Children []*Cnode
}

// Param is a call-path parameter. Numeric parameters are written with
// partype="numeric" and Value formatted from Number; others with
// partype="string".
type Param struct {
	// Key is the parameter's name.
	Key string
	// Numeric selects Number (true) or Value (false).
	Numeric bool
	// Number is the value of a numeric parameter.
	Number float64
	// Value is the value of a string parameter.
	Value string
}

// SystemNode is a node of the system tree (machine, node, ...).
type SystemNode struct {
	// ID is the node's ID; CubeLib renumbers these in document order.
	ID int
	// Name is e.g. "machine Linux" or "node vm".
	Name string
	// Class is e.g. "machine" or "node"; it must not be empty.
	Class string
	// Descr is an optional description.
	Descr string
	// Attrs are the node's attributes.
	Attrs []Attr
	// Parent is nil for a root.
	Parent *SystemNode
	// Groups are the location groups (processes) on this node.
	Groups []*LocationGroup
	// Children are the child system-tree nodes, written after Groups.
	Children []*SystemNode
}

// LocationGroup is a group of locations, usually one MPI process.
type LocationGroup struct {
	// ID is the group's ID; CubeLib renumbers these in document order.
	ID int
	// Name is e.g. "MPI Rank 3".
	Name string
	// Rank is the MPI rank (>= 0).
	Rank int
	// Type is the group's kind, usually [GroupProcess].
	Type GroupType
	// Attrs are the group's attributes.
	Attrs []Attr
	// Node is the system-tree node that holds the group.
	Node *SystemNode
	// Locations are the group's locations; a group needs at least one.
	Locations []*Location
}

// Location is a thread of execution; each location is one column of every
// data row.
type Location struct {
	// ID is the column index, dense 0..L-1 over the whole report.
	ID int
	// Name is e.g. "Master thread".
	Name string
	// Rank is the thread number within its group (>= 0).
	Rank int
	// Type is the location's kind, usually [LocationThread].
	Type LocationType
	// Attrs are the location's attributes.
	Attrs []Attr
	// Group is the location group that holds the location.
	Group *LocationGroup
}

// Cartesian is a Cartesian topology of locations (or groups, or nodes).
type Cartesian struct {
	// Name is e.g. "Process x Thread"; may be empty.
	Name string
	// Dims are the dimensions.
	Dims []Dim
	// Coords place entities in the grid.
	Coords []Coord
}

// Dim is one dimension of a Cartesian topology.
type Dim struct {
	// Name is the dimension's name; may be empty.
	Name string
	// Size is the number of positions along the dimension.
	Size int
	// Periodic marks a dimension that wraps around.
	Periodic bool
}

// Coord places one entity at Pos (len(Pos) == number of dimensions).
type Coord struct {
	// Kind names what ID refers to; usually [CoordLocation].
	Kind CoordKind
	// ID is the ID of the location, location group or system-tree node.
	ID int
	// Pos holds one coordinate per dimension.
	Pos []int
}

// CoordKind is the attribute naming a coordinate's entity.
type CoordKind string

// Coordinate kinds: the attribute name used in <coord>.
const (
	CoordLocation CoordKind = "locId"
	CoordGroup    CoordKind = "lgId"
	CoordNode     CoordKind = "stnId"
)

// Severity holds the stored values of one metric: one row per cnode ID,
// one column per location ID. A nil row reads as all empty
// ([DataType.Empty]: zero except for MINDOUBLE/MAXDOUBLE). Exactly one of
// Float and Uint is used, depending on the metric's data type
// ([DataType.IsFloat]); integer types are kept as their 64-bit
// two's-complement pattern (sign-extended for signed types).
//
// Values are stored as the metric's type says: along the call tree
// exclusive for [Exclusive] metrics and inclusive for [Inclusive] ones;
// along the metric tree always inclusive (a parent's values contain its
// children's). [ReadFile] sets rows that are entirely empty to nil.
type Severity struct {
	// Float holds the rows of floating-point metrics.
	Float [][]float64
	// Uint holds the rows of integer metrics.
	Uint [][]uint64
}
