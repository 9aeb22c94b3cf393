package hpc

import "fmt"

// Op is a reduction operation. Valid combinations:
//
//	Float64s: Sum, Max, Min
//	Uint64s:  Sum, Max, Min, Bor
//	TimeRanks: MaxLoc, MinLoc
type Op int

// Reduction operations (MPI_SUM, MPI_MAX, MPI_MIN, MPI_BOR, MPI_MAXLOC,
// MPI_MINLOC). The zero Op is invalid.
const (
	Sum Op = iota + 1
	Max
	Min
	Bor
	// MaxLoc keeps the pair with the largest Time; on equal times the
	// one with the lowest Rank.
	MaxLoc
	// MinLoc keeps the pair with the smallest Time; on equal times the
	// one with the lowest Rank.
	MinLoc
)

var opNames = [...]string{Sum: "Sum", Max: "Max", Min: "Min", Bor: "Bor", MaxLoc: "MaxLoc", MinLoc: "MinLoc"}

// String returns the operation's name, such as "MaxLoc".
func (o Op) String() string {
	if o > 0 && int(o) < len(opNames) {
		return opNames[o]
	}
	return fmt.Sprintf("Op(%d)", int(o))
}

// TimeRank is a (time, rank) pair reduced with MaxLoc or MinLoc
// (MPI_DOUBLE_INT). Rank is whatever index the caller puts in, usually
// its rank in the communicator.
type TimeRank struct {
	Time float64
	Rank int
}

// Vector is the operand and result of a reduction: a Float64s, Uint64s
// or TimeRanks. The generic functions Reduce, Allreduce, Scan and Exscan
// convert from and to plain slices.
type Vector interface {
	// Len returns the number of elements.
	Len() int
	vector()
}

// Float64s is a Vector of float64 (MPI_DOUBLE).
type Float64s []float64

// Uint64s is a Vector of uint64 (MPI_UINT64_T).
type Uint64s []uint64

// TimeRanks is a Vector of (time, rank) pairs (MPI_DOUBLE_INT).
type TimeRanks []TimeRank

// Len returns len(v).
func (v Float64s) Len() int { return len(v) }

// Len returns len(v).
func (v Uint64s) Len() int { return len(v) }

// Len returns len(v).
func (v TimeRanks) Len() int { return len(v) }

func (Float64s) vector()  {}
func (Uint64s) vector()   {}
func (TimeRanks) vector() {}

// Elem is an element type of a reduction.
type Elem interface {
	float64 | uint64 | TimeRank
}

// Reduce combines the members' v element-wise with op and returns the
// result on root, nil on the others (Comm.Reduce on plain slices).
func Reduce[T Elem](c Comm, root int, op Op, v []T) ([]T, error) {
	out, err := c.Reduce(root, op, vectorOf(v))
	if err != nil {
		return nil, err
	}
	return sliceOf[T](out)
}

// Allreduce combines the members' v element-wise with op and returns the
// result on every member (Comm.Allreduce on plain slices).
func Allreduce[T Elem](c Comm, op Op, v []T) ([]T, error) {
	out, err := c.Allreduce(op, vectorOf(v))
	if err != nil {
		return nil, err
	}
	return sliceOf[T](out)
}

// Scan returns on rank i the combination of ranks 0..i's v (Comm.Scan on
// plain slices).
func Scan[T Elem](c Comm, op Op, v []T) ([]T, error) {
	out, err := c.Scan(op, vectorOf(v))
	if err != nil {
		return nil, err
	}
	return sliceOf[T](out)
}

// Exscan returns on rank i>0 the combination of ranks 0..i-1's v, and nil
// on rank 0 (Comm.Exscan on plain slices).
func Exscan[T Elem](c Comm, op Op, v []T) ([]T, error) {
	out, err := c.Exscan(op, vectorOf(v))
	if err != nil {
		return nil, err
	}
	return sliceOf[T](out)
}

// vectorOf wraps v as a Vector without copying.
func vectorOf[T Elem](v []T) Vector {
	switch x := any(v).(type) {
	case []float64:
		return Float64s(x)
	case []uint64:
		return Uint64s(x)
	case []TimeRank:
		return TimeRanks(x)
	}
	panic(fmt.Sprintf("hpc: unexpected element type %T", v)) // unreachable: Elem is closed
}

// sliceOf unwraps a reduction result; nil stays nil.
func sliceOf[T Elem](v Vector) ([]T, error) {
	var s any
	switch x := v.(type) {
	case nil:
		return nil, nil
	case Float64s:
		s = []float64(x)
	case Uint64s:
		s = []uint64(x)
	case TimeRanks:
		s = []TimeRank(x)
	}
	out, ok := s.([]T)
	if !ok {
		var want []T
		return nil, fmt.Errorf("hpc: reduction returned %T, want %T", v, want)
	}
	return out, nil
}

// typeName names v's type for signatures and messages.
func typeName(v Vector) string {
	switch v.(type) {
	case Float64s:
		return "Float64s"
	case Uint64s:
		return "Uint64s"
	case TimeRanks:
		return "TimeRanks"
	case nil:
		return "nil"
	}
	return fmt.Sprintf("%T", v)
}

// checkOp reports whether op applies to v's element type.
func checkOp(op Op, v Vector) error {
	ok := false
	switch v.(type) {
	case Float64s:
		ok = op == Sum || op == Max || op == Min
	case Uint64s:
		ok = op == Sum || op == Max || op == Min || op == Bor
	case TimeRanks:
		ok = op == MaxLoc || op == MinLoc
	default:
		return fmt.Errorf("unsupported vector type %s", typeName(v))
	}
	if !ok {
		return fmt.Errorf("operation %v does not apply to %s", op, typeName(v))
	}
	return nil
}

// cloneVector returns a copy of v that shares no memory with it.
func cloneVector(v Vector) Vector {
	switch x := v.(type) {
	case Float64s:
		return append(Float64s{}, x...)
	case Uint64s:
		return append(Uint64s{}, x...)
	case TimeRanks:
		return append(TimeRanks{}, x...)
	}
	return nil
}

// combine sets acc[i] = acc[i] op v[i]; acc and v have the same type and
// length, and op applies to it (checked by the caller).
func combine(op Op, acc, v Vector) {
	switch a := acc.(type) {
	case Float64s:
		b := v.(Float64s)
		for i := range a {
			switch op {
			case Sum:
				a[i] += b[i]
			case Max:
				if b[i] > a[i] {
					a[i] = b[i]
				}
			case Min:
				if b[i] < a[i] {
					a[i] = b[i]
				}
			}
		}
	case Uint64s:
		b := v.(Uint64s)
		for i := range a {
			switch op {
			case Sum:
				a[i] += b[i]
			case Max:
				a[i] = max(a[i], b[i])
			case Min:
				a[i] = min(a[i], b[i])
			case Bor:
				a[i] |= b[i]
			}
		}
	case TimeRanks:
		b := v.(TimeRanks)
		for i := range a {
			x, y := a[i], b[i]
			switch op {
			case MaxLoc:
				if y.Time > x.Time || (y.Time == x.Time && y.Rank < x.Rank) {
					a[i] = y
				}
			case MinLoc:
				if y.Time < x.Time || (y.Time == x.Time && y.Rank < x.Rank) {
					a[i] = y
				}
			}
		}
	}
}

// prefixes returns the running combinations of in: out[i] = in[0] op ...
// op in[i], each a fresh vector, folded in rank order.
func prefixes(op Op, in []Vector) []Vector {
	out := make([]Vector, len(in))
	for i, v := range in {
		if i == 0 {
			out[i] = cloneVector(v)
			continue
		}
		out[i] = cloneVector(out[i-1])
		combine(op, out[i], v)
	}
	return out
}
