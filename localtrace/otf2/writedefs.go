package otf2

import (
	"fmt"
	"io"
	"math"
)

// defEncoder appends definition records to a chunked definition file.
type defEncoder struct {
	c   *chunkWriter
	rec []byte // scratch record
}

func newDefEncoder(w io.Writer, chunkSize uint64) (*defEncoder, error) {
	c, err := newChunkWriter(w, chunkSize)
	if err != nil {
		return nil, err
	}
	c.defs = true
	return &defEncoder{c: c}, nil
}

// put writes one record whose payload fill appends.
func (e *defEncoder) put(t uint8, fill func(b []byte) ([]byte, error)) error {
	b, start := beginRecord(e.rec[:0], t)
	b, err := fill(b)
	if err != nil {
		return fmt.Errorf("otf2: definition record type %d: %w", t, err)
	}
	e.rec = endRecord(b, start)
	return e.c.record(e.rec)
}

func (e *defEncoder) finish() (uint64, error) {
	if err := e.c.flush(true); err != nil {
		return 0, err
	}
	return e.c.n, nil
}

func appendU32Array8(b []byte, what string, a []uint32) ([]byte, error) {
	if len(a) > math.MaxUint8 {
		return b, fmt.Errorf("%d %s exceed the limit of 255", len(a), what)
	}
	b = append(b, uint8(len(a)))
	for _, v := range a {
		b = appendU32c(b, v)
	}
	return b, nil
}

// Global definition order of Score-P (scorep_tracing_write_global_definitions);
// the index of a record type in defOrder is its rank. Records of one rank
// are written in the order they have in their slice.
var defOrder = [...][]uint8{
	{DefClockProperties},
	{DefString},
	{DefParadigm, DefParadigmProperty},
	{DefIoParadigm},
	{DefSystemTreeNode, DefSystemTreeNodeDomain, DefSystemTreeNodeProperty},
	{DefLocationGroup, DefLocationGroupProperty},
	{DefLocation},
	{DefLocationProperty},
	{DefRegion},
	{DefCallsite},
	{DefGroup},
	{DefComm, DefInterComm},
	{DefRmaWin},
	{DefMetricMember, DefMetricClass, DefMetricInstance, DefMetricClassRecorder},
	{DefParameter},
	{DefCallpath, DefCallpathParameter},
	{DefAttribute},
	{DefSourceCodeLocation, DefCallingContext, DefCallingContextProperty, DefInterruptGenerator},
	{DefCartDimension, DefCartTopology, DefCartCoordinate},
	{DefIoRegularFile, DefIoDirectory, DefIoFileProperty, DefIoHandle, DefIoPreCreatedHandle},
}

// EncodeGlobalDefs writes d as a global definition file chunked with the
// given chunk size, in little-endian byte order, and returns the number of
// records written (the anchor's NumGlobalDefs). The records come in
// Score-P's order: ClockProperties first (if d.HasClock), then strings,
// paradigms (each followed by its properties), the system tree (each node
// followed by its domains and properties), location groups, locations,
// regions, groups, communicators and so on; each raw record of d.Other
// goes where its type belongs, after the decoded records of the same type.
// Every optional trailing field is written, so reading the file back
// yields d again.
func EncodeGlobalDefs(w io.Writer, d *Defs, chunkSize uint64) (uint64, error) {
	e, err := newDefEncoder(w, chunkSize)
	if err != nil {
		return 0, err
	}
	if err := e.globalDefs(d); err != nil {
		return 0, err
	}
	return e.finish()
}

func (e *defEncoder) globalDefs(d *Defs) error {
	if d.HasClock {
		k := d.Clock
		err := e.put(DefClockProperties, func(b []byte) ([]byte, error) {
			b = appendU64c(appendU64c(appendU64c(b, k.TimerResolution), k.GlobalOffset), k.TraceLength)
			return appendU64c(b, k.Realtime), nil
		})
		if err != nil {
			return err
		}
	}
	return e.defs(d, true)
}

// defs writes the records of d except ClockProperties, in defOrder.
// global allows the global-only records (Paradigm).
func (e *defEncoder) defs(d *Defs, global bool) error {
	if !global && (d.HasClock || len(d.Paradigms) > 0) {
		return fmt.Errorf("otf2: local definitions cannot hold ClockProperties or Paradigm records")
	}
	other := make(map[uint8][]RawRecord)
	for _, r := range d.Other {
		other[r.Type] = append(other[r.Type], r)
	}
	ranked := make(map[uint8]bool)
	for _, group := range defOrder {
		for _, t := range group {
			ranked[t] = true
			if err := e.typed(d, t, other); err != nil {
				return err
			}
			if err := e.raw(other[t]); err != nil {
				return err
			}
			delete(other, t)
		}
	}
	// raw records of types outside defOrder: last, in file order
	for _, r := range d.Other {
		if !ranked[r.Type] {
			if err := e.raw([]RawRecord{r}); err != nil {
				return err
			}
		}
	}
	return nil
}

func (e *defEncoder) raw(rs []RawRecord) error {
	for _, r := range rs {
		if err := e.put(r.Type, func(b []byte) ([]byte, error) { return append(b, r.Payload...), nil }); err != nil {
			return err
		}
	}
	return nil
}

// typed writes the decoded records of type t.
func (e *defEncoder) typed(d *Defs, t uint8, other map[uint8][]RawRecord) error {
	var err error
	switch t {
	case DefString:
		for _, s := range d.Strings {
			if err = e.put(t, func(b []byte) ([]byte, error) { return appendStr(appendU32c(b, s.Self), s.Value) }); err != nil {
				return err
			}
		}
	case DefParadigm:
		return e.paradigms(d, other)
	case DefSystemTreeNode:
		return e.systemTree(d, other)
	case DefSystemTreeNodeDomain, DefCartTopology:
		// written with the system tree nodes and Cartesian dimensions
	case DefLocationGroup:
		for _, g := range d.LocationGroups {
			if err = e.put(t, func(b []byte) ([]byte, error) {
				b = append(appendU32c(appendU32c(b, g.Self), g.Name), g.Type)
				return appendU32c(appendU32c(b, g.Parent), g.Creator), nil
			}); err != nil {
				return err
			}
		}
	case DefLocation:
		for _, l := range d.Locations {
			if err = e.put(t, func(b []byte) ([]byte, error) {
				b = append(appendU32c(appendU64c(b, l.Self), l.Name), l.Type)
				return appendU32c(appendU64c(b, l.NumEvents), l.Group), nil
			}); err != nil {
				return err
			}
		}
	case DefRegion:
		for _, r := range d.Regions {
			if err = e.put(t, func(b []byte) ([]byte, error) { return appendRegion(b, &r), nil }); err != nil {
				return err
			}
		}
	case DefGroup:
		for _, g := range d.Groups {
			if err = e.put(t, func(b []byte) ([]byte, error) { return appendGroup(b, &g) }); err != nil {
				return err
			}
		}
	default:
		return e.typedRest(d, t)
	}
	return nil
}

func (e *defEncoder) typedRest(d *Defs, t uint8) error {
	var err error
	switch t {
	case DefAttribute:
		for _, a := range d.Attributes {
			if err = e.put(t, func(b []byte) ([]byte, error) {
				b = append(appendU32c(appendU32c(b, a.Self), a.Name), a.Type)
				return appendU32c(b, a.Description), nil
			}); err != nil {
				return err
			}
		}
	case DefCallpath:
		for _, p := range d.Callpaths {
			if err = e.put(t, func(b []byte) ([]byte, error) {
				return appendU32c(appendU32c(appendU32c(b, p.Self), p.Parent), p.Region), nil
			}); err != nil {
				return err
			}
		}
	case DefMetricMember:
		for _, m := range d.MetricMembers {
			if err = e.put(t, func(b []byte) ([]byte, error) {
				b = appendU32c(appendU32c(appendU32c(b, m.Self), m.Name), m.Description)
				b = append(b, m.MetricType, m.Mode, m.ValueType, m.Base)
				return appendU32c(appendI64c(b, m.Exponent), m.Unit), nil
			}); err != nil {
				return err
			}
		}
	case DefMetricClass:
		for _, m := range d.MetricClasses {
			if err = e.put(t, func(b []byte) ([]byte, error) {
				b, err := appendU32Array8(appendU32c(b, m.Self), "metric members", m.Members)
				return append(b, m.Occurrence, m.RecorderKind), err
			}); err != nil {
				return err
			}
		}
	case DefMetricInstance:
		for _, m := range d.MetricInstances {
			if err = e.put(t, func(b []byte) ([]byte, error) {
				b = appendU64c(appendU32c(appendU32c(b, m.Self), m.Class), m.Recorder)
				return appendU64c(append(b, m.ScopeType), m.Scope), nil
			}); err != nil {
				return err
			}
		}
	case DefComm:
		for _, c := range d.Comms {
			if err = e.put(t, func(b []byte) ([]byte, error) {
				b = appendU32c(appendU32c(appendU32c(b, c.Self), c.Name), c.Group)
				return appendU32c(appendU32c(b, c.Parent), c.Flags), nil
			}); err != nil {
				return err
			}
		}
	case DefInterComm:
		for _, c := range d.InterComms {
			if err = e.put(t, func(b []byte) ([]byte, error) {
				for _, v := range [...]uint32{c.Self, c.Name, c.GroupA, c.GroupB, c.Common, c.Flags} {
					b = appendU32c(b, v)
				}
				return b, nil
			}); err != nil {
				return err
			}
		}
	case DefParameter:
		for _, p := range d.Parameters {
			if err = e.put(t, func(b []byte) ([]byte, error) {
				return append(appendU32c(appendU32c(b, p.Self), p.Name), p.Type), nil
			}); err != nil {
				return err
			}
		}
	case DefRmaWin:
		for _, w := range d.RmaWins {
			if err = e.put(t, func(b []byte) ([]byte, error) {
				b = appendU32c(appendU32c(appendU32c(b, w.Self), w.Name), w.Comm)
				return appendU32c(b, w.Flags), nil
			}); err != nil {
				return err
			}
		}
	case DefCartDimension:
		return e.cart(d)
	case DefCartCoordinate:
		for _, c := range d.CartCoordinates {
			if err = e.put(t, func(b []byte) ([]byte, error) {
				return appendU32Array8(appendU32c(appendU32c(b, c.Topology), c.Rank), "coordinates", c.Coords)
			}); err != nil {
				return err
			}
		}
	}
	return nil
}

func appendRegion(b []byte, r *Region) []byte {
	b = appendU32c(appendU32c(appendU32c(b, r.Self), r.Name), r.Description)
	b = appendU32c(appendU32c(appendU32c(append(b, r.Type), r.File), r.Begin), r.End)
	b = append(appendU32c(b, r.Canonical), r.Role, r.Paradigm)
	return appendU32c(b, r.Flags)
}

func appendGroup(b []byte, g *Group) ([]byte, error) {
	if uint64(len(g.Members)) > math.MaxUint32 {
		return b, fmt.Errorf("group %d has %d members", g.Self, len(g.Members))
	}
	b = append(appendU32c(appendU32c(b, g.Self), g.Name), g.TypePre12)
	b = appendU32c(b, uint32(len(g.Members)))
	for _, m := range g.Members {
		b = appendU64c(b, m)
	}
	return appendU32c(append(b, g.Type, g.Paradigm), g.Flags), nil
}

// paradigms writes the paradigms and their (raw) properties interleaved
// as Score-P does: each paradigm followed by its properties. Properties
// keep their slice order; a property waits until its paradigm is written,
// so one of an undefined paradigm goes last, with those after it.
func (e *defEncoder) paradigms(d *Defs, other map[uint8][]RawRecord) error {
	props := other[DefParadigmProperty]
	other[DefParadigmProperty] = nil
	written := make(map[uint8]bool)
	for i := 0; ; i++ {
		all := i == len(d.Paradigms)
		if !all {
			p := d.Paradigms[i]
			err := e.put(DefParadigm, func(b []byte) ([]byte, error) {
				return append(appendU32c(append(b, p.Paradigm), p.Name), p.Class), nil
			})
			if err != nil {
				return err
			}
			written[p.Paradigm] = true
		}
		// a property's payload starts with its paradigm (u8)
		for len(props) > 0 && (all || len(props[0].Payload) > 0 && written[props[0].Payload[0]]) {
			if err := e.raw(props[:1]); err != nil {
				return err
			}
			props = props[1:]
		}
		if all {
			return nil
		}
	}
}

func (e *defEncoder) domain(x SystemTreeNodeDomain) error {
	return e.put(DefSystemTreeNodeDomain, func(b []byte) ([]byte, error) { return append(appendU32c(b, x.Node), x.Domain), nil })
}

// systemTree writes the system tree nodes, domains and (raw) properties
// interleaved as Score-P does: after each node, the domains and properties
// of nodes already written, keeping each kind in its slice order.
func (e *defEncoder) systemTree(d *Defs, other map[uint8][]RawRecord) error {
	doms, props := d.NodeDomains, other[DefSystemTreeNodeProperty]
	other[DefSystemTreeNodeProperty] = nil
	written := make(map[uint32]bool)
	propNode := func(r RawRecord) uint32 {
		c := cursor{b: r.Payload}
		return c.u32c()
	}
	for i := 0; ; i++ {
		all := i == len(d.SystemTreeNodes)
		if !all {
			n := d.SystemTreeNodes[i]
			err := e.put(DefSystemTreeNode, func(b []byte) ([]byte, error) {
				return appendU32c(appendU32c(appendU32c(appendU32c(b, n.Self), n.Name), n.Class), n.Parent), nil
			})
			if err != nil {
				return err
			}
			written[n.Self] = true
		}
		for len(doms) > 0 && (all || written[doms[0].Node]) {
			if err := e.domain(doms[0]); err != nil {
				return err
			}
			doms = doms[1:]
		}
		for len(props) > 0 && (all || written[propNode(props[0])]) {
			if err := e.raw(props[:1]); err != nil {
				return err
			}
			props = props[1:]
		}
		if all {
			return nil
		}
	}
}

// cart writes the Cartesian dimensions and topologies as Score-P does:
// each topology after the dimensions it uses, each kind in slice order.
func (e *defEncoder) cart(d *Defs) error {
	dims := d.CartDimensions
	written := make(map[uint32]bool)
	putDim := func() error {
		c := dims[0]
		dims = dims[1:]
		written[c.Self] = true
		return e.put(DefCartDimension, func(b []byte) ([]byte, error) {
			return append(appendU32c(appendU32c(appendU32c(b, c.Self), c.Name), c.Size), c.Periodic), nil
		})
	}
	for _, c := range d.CartTopologies {
		for _, dim := range c.Dims {
			for !written[dim] && len(dims) > 0 {
				if err := putDim(); err != nil {
					return err
				}
			}
		}
		if err := e.put(DefCartTopology, func(b []byte) ([]byte, error) {
			b = appendU32c(appendU32c(appendU32c(b, c.Self), c.Name), c.Comm)
			return appendU32Array8(b, "dimensions", c.Dims)
		}); err != nil {
			return err
		}
	}
	for len(dims) > 0 {
		if err := putDim(); err != nil {
			return err
		}
	}
	return nil
}

// mapOrder is the order in which Score-P writes mapping tables
// (scorep_tracing_write_mappings).
var mapOrder = [NumMappingTypes]uint8{MapString, MapLocation, MapLocationGroup, MapRegion, MapGroup, MapComm,
	MapRmaWin, MapMetric, MapAttribute, MapParameter, MapSourceCodeLocation, MapCallingContext,
	MapInterruptGenerator, MapIoFile, MapIoHandle}

// EncodeLocalDefs writes l as a local definition file chunked with the
// given chunk size and returns the number of records written: the mapping
// tables in Score-P's order (dense or sparse as recorded in each IDMap), the
// clock offsets in order, then the other definitions in the global order.
func EncodeLocalDefs(w io.Writer, l *LocalDefs, chunkSize uint64) (uint64, error) {
	e, err := newDefEncoder(w, chunkSize)
	if err != nil {
		return 0, err
	}
	for _, mt := range mapOrder {
		m := l.Maps[mt]
		if m == nil {
			continue
		}
		if err := e.put(DefMappingTable, func(b []byte) ([]byte, error) { return appendIDMap(append(b, uint8(mt)), m) }); err != nil {
			return 0, err
		}
	}
	for _, o := range l.ClockOffsets {
		err := e.put(DefClockOffset, func(b []byte) ([]byte, error) {
			return appendU64f(appendI64c(appendU64f(b, o.Time), o.Offset), math.Float64bits(o.StdDev)), nil
		})
		if err != nil {
			return 0, err
		}
	}
	if err := e.defs(&l.Defs, false); err != nil {
		return 0, err
	}
	return e.finish()
}

func appendIDMap(b []byte, m *IDMap) ([]byte, error) {
	if m.Sparse {
		if len(m.Pairs)%2 != 0 {
			return b, fmt.Errorf("sparse mapping table with an odd number (%d) of values", len(m.Pairs))
		}
		b = append(appendU64c(b, uint64(len(m.Pairs)/2)), 1)
		for _, v := range m.Pairs {
			b = appendU64c(b, v)
		}
		return b, nil
	}
	b = append(appendU64c(b, uint64(len(m.Dense))), 0)
	for _, v := range m.Dense {
		b = appendU64c(b, v)
	}
	return b, nil
}
