package cube

import (
	"math"
	"strings"
)

// DataType is a metric's value type, spelled as in <dtype>. CubeLib
// accepts several spellings per type; the constants below are the ones
// scout needs. Any scalar type of [DataType.Size] > 0 can be written and
// read.
type DataType string

// Common data types. Float and Double are both IEEE-754 binary64; Integer
// is int64. Scalasca writes Float and Integer. MinDouble and MaxDouble
// are doubles aggregated by minimum and maximum (Score-P's min_time and
// max_time); they must be [Exclusive] metrics.
const (
	Float     DataType = "FLOAT"
	Double    DataType = "DOUBLE"
	Integer   DataType = "INTEGER"
	Int64     DataType = "INT64"
	Uint64    DataType = "UINT64"
	MinDouble DataType = "MINDOUBLE"
	MaxDouble DataType = "MAXDOUBLE"
)

// scalar describes a scalar data type: its size in bytes and kind.
type scalar struct {
	size   int
	float  bool
	signed bool
}

var scalars = map[string]scalar{
	"DOUBLE": {8, true, true}, "FLOAT": {8, true, true},
	"MINDOUBLE": {8, true, true}, "MAXDOUBLE": {8, true, true},
	"INT64": {8, false, true}, "INTEGER": {8, false, true}, "SIGNED INTEGER": {8, false, true},
	"UINT64": {8, false, false}, "UNSIGNED INTEGER": {8, false, false},
	"INT32": {4, false, true}, "INT": {4, false, true}, "SIGNED INT": {4, false, true},
	"UINT32": {4, false, false}, "UNSIGNED INT": {4, false, false},
	"INT16": {2, false, true}, "SHORT INT": {2, false, true}, "SIGNED SHORT INT": {2, false, true},
	"UINT16": {2, false, false}, "UNSIGNED SHORT INT": {2, false, false},
	"INT8": {1, false, true}, "UINT8": {1, false, false}, "CHAR": {1, false, false},
}

func (t DataType) scalar() (scalar, bool) {
	s, ok := scalars[strings.ToUpper(string(t))]
	return s, ok
}

// Size returns the number of bytes per stored value, or 0 when t is not a
// supported scalar type (e.g. TAU_ATOMIC or HISTOGRAM(n)).
func (t DataType) Size() int {
	s, _ := t.scalar()
	return s.size
}

// IsFloat reports whether values of type t are floating point (kept in
// Severity.Float); integer types are kept in Severity.Uint.
func (t DataType) IsFloat() bool {
	s, _ := t.scalar()
	return s.float
}

// IsSigned reports whether t is a signed integer or floating-point type.
func (t DataType) IsSigned() bool {
	s, _ := t.scalar()
	return s.signed
}

// Empty returns the value that rows which are not stored read as: 0, but
// +MaxFloat64 for MINDOUBLE and -MaxFloat64 for MAXDOUBLE (the neutral
// elements of their aggregation), as in CubeLib.
func (t DataType) Empty() float64 {
	switch strings.ToUpper(string(t)) {
	case string(MinDouble):
		return math.MaxFloat64
	case string(MaxDouble):
		return -math.MaxFloat64
	}
	return 0
}

// emptyBits returns the stored bit pattern of t.Empty().
func (t DataType) emptyBits() uint64 {
	if e := t.Empty(); e != 0 {
		return math.Float64bits(e)
	}
	return 0
}

// isMinMax reports whether t aggregates by minimum or maximum.
func (t DataType) isMinMax() bool { return t.Empty() != 0 }

// MetricType says how a metric's stored values relate to the call tree.
type MetricType string

// Metric types, spelled as in the type attribute of <metric>.
const (
	// Exclusive metrics store each call-tree node's own value; rows are in
	// depth-first pre-order.
	Exclusive MetricType = "EXCLUSIVE"
	// Inclusive metrics store a node's value including its callees; rows
	// are in "wide" order (see Report.RowOrder).
	Inclusive MetricType = "INCLUSIVE"
	// Simple is treated as Inclusive by CubeLib 4.8; avoid it.
	Simple MetricType = "SIMPLE"
	// The derived types store no values; they are computed from CubePL.
	PostDerived         MetricType = "POSTDERIVED"
	PrederivedInclusive MetricType = "PREDERIVED_INCLUSIVE"
	PrederivedExclusive MetricType = "PREDERIVED_EXCLUSIVE"
)

// HasData reports whether metrics of type t store values.
func (t MetricType) HasData() bool {
	return t == Exclusive || t == Inclusive || t == Simple
}

// callTreeInclusive reports whether stored values include callees.
func (t MetricType) callTreeInclusive() bool {
	return t == Inclusive || t == Simple
}

// VizType is a metric's visualization type.
type VizType string

// Visualization types. The empty VizType is the normal one; ghost metrics
// are stored as ghost_N.data/ghost_N.index.
const (
	VizNormal VizType = ""
	VizGhost  VizType = "GHOST"
)

// GroupType is the kind of a location group.
type GroupType string

// Location group types accepted by CubeLib.
const (
	GroupProcess     GroupType = "process"
	GroupMetrics     GroupType = "metrics"
	GroupAccelerator GroupType = "accelerator"
)

// LocationType is the kind of a location.
type LocationType string

// Location types accepted by CubeLib.
const (
	LocationThread      LocationType = "thread"
	LocationGPU         LocationType = "gpu"
	LocationAccelerator LocationType = "accelerator stream"
	LocationMetric      LocationType = "metric"
)
