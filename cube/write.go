package cube

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Writer writes a report row by row. Memory use is constant per row: a
// row is encoded into a reused buffer and written out at once; only the
// positions of the stored rows of the current metric (4 bytes per row,
// preallocated) are kept until the metric's index is written.
//
// The report is written to a temporary file in the target's directory
// and renamed to its final name by [Writer.Commit]. [Writer.Close]
// without Commit removes the temporary file, so a failed or abandoned
// write never leaves a partial report.
//
// A Writer made by [Write] writes into its caller's file instead, which
// it neither renames nor closes nor removes.
//
// A Writer is not safe for concurrent use.
type Writer struct {
	path, tmp string
	own       bool // the Writer made f (tmp) and renames it to path
	f         *os.File
	tw        *tarWriter
	anchor    []byte

	nlocs   int
	cnodes  []*Cnode // by ID
	metrics map[*Metric]*metricState
	order   []*metricState // data metrics in document order

	cur    *metricState  // metric whose data member is open
	member *streamMember // its data member
	pos    []uint32      // positions of its stored rows
	next   uint32        // its lowest position still writable
	row    []byte        // encoding buffer, one row
	idx    []byte        // index buffer
	move   []byte        // buffer for in-place expansion, allocated on demand

	err  error // first I/O error; the Writer is unusable after it
	done bool  // committed or closed
}

// metricState is a data metric's writing state.
type metricState struct {
	m        *Metric
	s        scalar
	empty    uint64   // bit pattern of the empty value
	rowBytes int      // bytes per row
	posOf    []uint32 // row position by cnode ID
	finished bool
}

// Create starts writing the report with the definitions of r to path,
// which must end in ".cubex" (CubeLib insists). It checks the
// definitions with [Report.Validate] (ignoring r.Values) and writes r's
// misc files. The definitions must not change until [Writer.Commit].
// The caller must call Commit or [Writer.Close].
func Create(path string, r *Report) (*Writer, error) {
	if !strings.HasSuffix(path, ".cubex") {
		return nil, fmt.Errorf("cube: %s: the file name must end in .cubex", path)
	}
	w, err := newWriter(path, r)
	if err != nil {
		return nil, err
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return nil, fmt.Errorf("cube: %w", err)
	}
	w.f, w.tmp, w.own = f, f.Name(), true
	return w.start(r)
}

// newWriter prepares writing the report with the definitions of r to
// path; the caller opens the file.
func newWriter(path string, r *Report) (*Writer, error) {
	if err := r.validateDefs(); err != nil {
		return nil, err
	}
	w := &Writer{path: path, nlocs: len(r.Locations()), metrics: map[*Metric]*metricState{}}
	w.anchor = encodeAnchor(r)
	w.cnodes = make([]*Cnode, r.countCnodes())
	excl := r.RowOrder(&Metric{Type: Exclusive})
	for _, c := range excl {
		w.cnodes[c.ID] = c
	}
	exclPos := positions(excl)
	inclPos := positions(r.RowOrder(&Metric{Type: Inclusive}))
	maxRow := 0
	for _, m := range r.AllMetrics() {
		if !m.Type.HasData() {
			continue
		}
		ms := &metricState{m: m, empty: m.DataType.emptyBits(), posOf: exclPos}
		ms.s, _ = m.DataType.scalar()
		ms.rowBytes = w.nlocs * ms.s.size
		if m.Type.callTreeInclusive() {
			ms.posOf = inclPos
		}
		maxRow = max(maxRow, ms.rowBytes)
		w.metrics[m] = ms
		w.order = append(w.order, ms)
	}
	w.row = make([]byte, maxRow)
	w.pos = make([]uint32, 0, len(w.cnodes))
	w.idx = make([]byte, 0, indexHdrSize+4+4*len(w.cnodes))
	return w, nil
}

// start begins the archive in w.f with r's misc files.
func (w *Writer) start(r *Report) (*Writer, error) {
	w.tw = newTarWriter(w.f, time.Now().Unix())
	for _, m := range r.Misc {
		if err := w.tw.addFile(m.Name, m.Data); err != nil {
			return nil, w.abort(w.fail(err))
		}
	}
	return w, nil
}

// positions maps cnode IDs to their index in order.
func positions(order []*Cnode) []uint32 {
	p := make([]uint32, len(order))
	for i, c := range order {
		p[c.ID] = uint32(i)
	}
	return p
}

// WriteRow stores the values of metric m at call-tree node c, one value
// per location in location-ID order. Values are converted to m's data
// type (integers are rounded and saturated).
//
// All rows of a metric must be written one after another, in the order
// of [Report.RowOrder] (which depends on the metric's type); cnodes that
// are skipped read as empty (zero). Writing a row of another metric
// finishes the current one; a finished metric cannot be written again.
// Metrics that get no rows are stored as all empty. Rows whose values
// are all empty are not stored.
//
// Errors about the arguments leave the Writer usable; an I/O error makes
// every later call fail.
func (w *Writer) WriteRow(m *Metric, c *Cnode, values []float64) error {
	ms, p, err := w.startRow(m, c, len(values))
	if err != nil {
		return err
	}
	buf := w.row[:ms.rowBytes]
	empty := true
	if ms.s.float {
		for i, v := range values {
			b := math.Float64bits(v)
			empty = empty && b == ms.empty
			binary.LittleEndian.PutUint64(buf[8*i:], b)
		}
	} else {
		size, mask := ms.s.size, ms.s.mask()
		for i, v := range values {
			b := floatBits(ms.s, v)
			empty = empty && b&mask == 0
			putValue(buf[size*i:], ms.s, binary.LittleEndian, b)
		}
	}
	return w.storeRow(p, buf, empty)
}

// WriteRowUint is [Writer.WriteRow] for metrics of an integer data type:
// values are 64-bit two's-complement patterns, truncated to the type's
// size. It fails for floating-point metrics.
func (w *Writer) WriteRowUint(m *Metric, c *Cnode, values []uint64) error {
	ms, p, err := w.startRow(m, c, len(values))
	if err != nil {
		return err
	}
	if ms.s.float {
		return fmt.Errorf("cube: WriteRowUint: metric %q has floating-point type %s; use WriteRow", m.UniqName, m.DataType)
	}
	buf := w.row[:ms.rowBytes]
	empty := true
	size, mask := ms.s.size, ms.s.mask()
	if size == 8 {
		for i, v := range values {
			empty = empty && v == 0
			binary.LittleEndian.PutUint64(buf[8*i:], v)
		}
		return w.storeRow(p, buf, empty)
	}
	for i, v := range values {
		empty = empty && v&mask == 0
		putValue(buf[size*i:], ms.s, binary.LittleEndian, v)
	}
	return w.storeRow(p, buf, empty)
}

// startRow checks the arguments of a row, switches to metric m if needed
// and returns m's state and the row's position.
func (w *Writer) startRow(m *Metric, c *Cnode, n int) (*metricState, uint32, error) {
	if err := w.usable(); err != nil {
		return nil, 0, err
	}
	ms := w.metrics[m]
	switch {
	case ms == nil:
		return nil, 0, fmt.Errorf("cube: metric %p is not a data metric of the report being written", m)
	case c == nil || c.ID < 0 || c.ID >= len(w.cnodes) || w.cnodes[c.ID] != c:
		return nil, 0, fmt.Errorf("cube: metric %q: the cnode is not part of the report being written", m.UniqName)
	case n != w.nlocs:
		return nil, 0, fmt.Errorf("cube: metric %q, cnode %d: %d values, want one per location (%d)", m.UniqName, c.ID, n, w.nlocs)
	}
	if ms != w.cur {
		if ms.finished {
			return nil, 0, fmt.Errorf("cube: metric %q: its rows were already finished", m.UniqName)
		}
		if err := w.switchTo(ms); err != nil {
			return nil, 0, err
		}
	}
	p := ms.posOf[c.ID]
	if p < w.next {
		return nil, 0, fmt.Errorf("cube: metric %q, cnode %d: row out of order (rows must follow Report.RowOrder)", m.UniqName, c.ID)
	}
	return ms, p, nil
}

// usable returns an error if the Writer cannot take more data.
func (w *Writer) usable() error {
	switch {
	case w.err != nil:
		return w.err
	case w.done:
		return errors.New("cube: Writer is already committed or closed")
	}
	return nil
}

// fail records the first I/O error.
func (w *Writer) fail(err error) error {
	if w.err == nil {
		w.err = fmt.Errorf("cube: writing %s: %w", w.path, err)
	}
	return w.err
}

// switchTo finishes the current metric and opens ms's data member.
func (w *Writer) switchTo(ms *metricState) error {
	if w.cur != nil {
		if err := w.finishMetric(); err != nil {
			return err
		}
	}
	data, _ := memberNames(ms.m)
	maxSize := int64(len(dataMarker)) + int64(len(w.cnodes))*int64(ms.rowBytes)
	member, err := w.tw.begin(data, maxSize)
	if err == nil {
		err = w.tw.write([]byte(dataMarker))
	}
	if err != nil {
		return w.fail(err)
	}
	w.cur, w.member, w.pos, w.next = ms, member, w.pos[:0], 0
	return nil
}

// storeRow writes an encoded row at position p unless it is empty.
func (w *Writer) storeRow(p uint32, buf []byte, empty bool) error {
	w.next = p + 1
	if empty {
		return nil
	}
	if err := w.tw.write(buf); err != nil {
		return w.fail(err)
	}
	w.pos = append(w.pos, p)
	return nil
}

// finishMetric ends the current metric's data member, choosing the
// smaller of the dense and the sparse form, and writes its index.
func (w *Writer) finishMetric() error {
	ms := w.cur
	nrows, stored := int64(len(w.cnodes)), int64(len(w.pos))
	// Dense costs the omitted rows, sparse 4 bytes per stored row plus
	// the row count. On a tie, dense (as CubeW).
	dense := (nrows-stored)*int64(ms.rowBytes) <= 4+4*stored
	if dense && stored < nrows {
		if err := w.expand(); err != nil {
			return w.fail(err)
		}
	}
	if err := w.tw.end(w.member); err != nil {
		return w.fail(err)
	}
	_, index := memberNames(ms.m)
	w.idx = appendIndex(w.idx[:0], w.pos, dense)
	if err := w.tw.addFile(index, w.idx); err != nil {
		return w.fail(err)
	}
	ms.finished = true
	w.cur, w.member = nil, nil
	return nil
}

// expand turns the current data member from sparse to dense in place:
// it moves the stored rows to their positions (last first, so nothing is
// overwritten before it is read) and fills the gaps with empty rows.
func (w *Writer) expand() error {
	if err := w.tw.flush(); err != nil {
		return err
	}
	ms, pos := w.cur, w.pos
	rb := int64(ms.rowBytes)
	start := w.member.start + int64(len(dataMarker))
	if w.move == nil {
		w.move = make([]byte, 1<<20)
	}
	// Move runs of rows that shift by the same amount.
	for i := len(pos) - 1; i >= 0; {
		j := i
		for j > 0 && pos[j-1]+1 == pos[j] {
			j--
		}
		if shift := int64(pos[j]) - int64(j); shift > 0 {
			if err := w.moveBack(start+int64(j)*rb, start+int64(pos[j])*rb, int64(i-j+1)*rb); err != nil {
				return err
			}
		}
		i = j - 1
	}
	// Fill the gaps with empty rows.
	fill := w.move[:0]
	for len(fill)+int(rb) <= cap(w.move) {
		fill = fill[:len(fill)+int(rb)]
		ms.encodeEmpty(fill[len(fill)-int(rb):])
	}
	if len(fill) == 0 {
		fill = make([]byte, rb) // a row larger than the move buffer
		ms.encodeEmpty(fill)
	}
	gap := func(from, to int64) error { // rows [from, to)
		for from < to {
			n := min(to-from, int64(len(fill))/rb)
			if _, err := w.tw.f.WriteAt(fill[:n*rb], start+from*rb); err != nil {
				return err
			}
			from += n
		}
		return nil
	}
	prev := int64(0)
	for _, p := range pos {
		if err := gap(prev, int64(p)); err != nil {
			return err
		}
		prev = int64(p) + 1
	}
	nrows := int64(len(w.cnodes))
	if err := gap(prev, nrows); err != nil {
		return err
	}
	return w.tw.seekTo(start + nrows*rb)
}

// moveBack copies n bytes from src to dst > src within the file, from
// the end backwards.
func (w *Writer) moveBack(src, dst, n int64) error {
	for n > 0 {
		k := min(n, int64(len(w.move)))
		n -= k
		buf := w.move[:k]
		if _, err := w.tw.f.ReadAt(buf, src+n); err != nil {
			return err
		}
		if _, err := w.tw.f.WriteAt(buf, dst+n); err != nil {
			return err
		}
	}
	return nil
}

// encodeEmpty fills b (one row) with the empty value.
func (ms *metricState) encodeEmpty(b []byte) {
	for i := 0; i+ms.s.size <= len(b); i += ms.s.size {
		putValue(b[i:], ms.s, binary.LittleEndian, ms.empty)
	}
}

// Commit finishes the report: it stores metrics that got no rows as all
// empty, writes anchor.xml, and renames the temporary file to the final
// name (replacing an existing file). On error the temporary file is
// removed and no file appears under the final name.
func (w *Writer) Commit() error {
	if err := w.usable(); err != nil {
		return w.abort(err)
	}
	err := w.commit()
	if err != nil {
		return w.abort(w.fail(err))
	}
	w.done = true
	return nil
}

func (w *Writer) commit() error {
	if w.cur != nil {
		if err := w.finishMetric(); err != nil {
			return err
		}
	}
	for _, ms := range w.order {
		if ms.finished {
			continue
		}
		if err := w.switchTo(ms); err != nil {
			return err
		}
		if err := w.finishMetric(); err != nil {
			return err
		}
	}
	if err := w.tw.addFile(anchorName, w.anchor); err != nil {
		return err
	}
	if err := w.tw.finish(); err != nil {
		return err
	}
	if !w.own {
		return nil
	}
	if err := w.f.Chmod(0o644); err != nil {
		return err
	}
	if err := w.f.Close(); err != nil {
		return err
	}
	return os.Rename(w.tmp, w.path)
}

// Close abandons the report unless it was committed: it closes and
// removes the temporary file, leaving nothing under the final name.
// Close after Commit does nothing; Close may be called more than once.
func (w *Writer) Close() error {
	return w.abort(nil)
}

// abort closes like Close and returns err, or the cleanup error if err
// is nil.
func (w *Writer) abort(err error) error {
	if w.done {
		return err
	}
	w.done = true
	if !w.own {
		return err
	}
	w.f.Close() // may already be closed by commit
	if rerr := os.Remove(w.tmp); rerr != nil && !errors.Is(rerr, os.ErrNotExist) && err == nil {
		err = fmt.Errorf("cube: removing %s: %w", w.tmp, rerr)
	}
	return err
}

// WriteFile writes r with its Values to path (which must end in
// ".cubex") atomically: the report appears under its final name only
// when it is complete. It checks r with [Report.Validate] first.
func WriteFile(path string, r *Report) error {
	if err := r.Validate(); err != nil {
		return err
	}
	w, err := Create(path, r)
	if err != nil {
		return err
	}
	defer w.Close()
	return w.writeValues(r)
}

// Write writes r with its Values into f, an empty file open for reading
// and writing, from its start. f stays open and where it is: a caller
// that makes its outputs atomic itself (renaming them all at once, and
// removing them when a signal stops it) owns every file name. It checks
// r with [Report.Validate] first.
func Write(f *os.File, r *Report) error {
	if err := r.Validate(); err != nil {
		return err
	}
	w, err := newWriter(f.Name(), r)
	if err != nil {
		return err
	}
	w.f = f
	if _, err := w.start(r); err != nil {
		return err
	}
	defer w.Close()
	return w.writeValues(r)
}

// writeValues writes r.Values, row by row, and commits.
func (w *Writer) writeValues(r *Report) error {
	var err error
	orders := map[bool][]*Cnode{} // by call-tree inclusiveness: made once
	for _, ms := range w.order {
		sev := r.Values[ms.m.ID]
		if sev == nil {
			continue
		}
		incl := ms.m.Type.callTreeInclusive()
		if orders[incl] == nil {
			orders[incl] = r.RowOrder(ms.m)
		}
		for _, c := range orders[incl] {
			if ms.s.float {
				if row := sev.Float[c.ID]; row != nil {
					err = w.WriteRow(ms.m, c, row)
				}
			} else if row := sev.Uint[c.ID]; row != nil {
				err = w.WriteRowUint(ms.m, c, row)
			}
			if err != nil {
				return err
			}
		}
	}
	return w.Commit()
}
