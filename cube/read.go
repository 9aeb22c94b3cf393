package cube

import (
	"bufio"
	"errors"
	"io"
	"math"
	"os"
)

// ReadFile reads the report at path with all its values. Errors about
// the file's content are *[Error] values naming the file, the archive
// member and the offset.
func ReadFile(path string) (*Report, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	r, err := Read(f, st.Size())
	if err != nil {
		var e *Error
		if errors.As(err, &e) {
			e.File = path
		}
		return nil, err
	}
	return r, nil
}

// Read reads a report of size bytes from ra: the definitions from
// anchor.xml, the values of every data metric (into Report.Values;
// metrics without data members, or whose rows are all empty, get no
// entry, and rows that are all empty are nil), and the other members as
// Report.Misc. Values of metrics whose data type is not a scalar
// ([DataType.Size] == 0, e.g. TAU_ATOMIC) are not loaded. Both CubeW's
// tar padding and standard tar padding are accepted; compressed data
// (ZCUBEX.DATA) is not supported. Errors about the content are *[Error].
func Read(ra io.ReaderAt, size int64) (*Report, error) {
	members, err := readTar(ra, size)
	if err != nil {
		return nil, err
	}
	byName := make(map[string]member, len(members))
	for _, m := range members {
		byName[m.name] = m
	}
	am, ok := byName[anchorName]
	if !ok {
		if endsEarly(members, size) {
			return nil, errAt("", size, "the archive ends inside the padding of a member and has no %s (truncated file?)", anchorName)
		}
		return nil, errAt("", -1, "no %s member (not a CUBE4 report?)", anchorName)
	}
	anchor, err := readMember(ra, am)
	if err != nil {
		return nil, err
	}
	r, err := decodeAnchor(anchor)
	if err != nil {
		return nil, err
	}
	used := map[string]bool{anchorName: true}
	nlocs := len(r.Locations())
	for _, m := range r.AllMetrics() {
		dname, iname := memberNames(m)
		used[dname], used[iname] = true, true
		s, ok := m.DataType.scalar()
		if !m.Type.HasData() || !ok {
			continue
		}
		dm, hasData := byName[dname]
		im, hasIndex := byName[iname]
		switch {
		case !hasData && !hasIndex:
			continue // all empty, as in CubeLib
		case !hasData:
			return nil, errAt(iname, -1, "metric %q has an index but no %s member", m.UniqName, dname)
		case !hasIndex:
			return nil, errAt(dname, -1, "metric %q has data but no %s member", m.UniqName, iname)
		}
		sev, err := readValues(ra, r, m, s, nlocs, dm, im)
		if err != nil {
			return nil, err
		}
		if sev != nil {
			if r.Values == nil {
				r.Values = map[int]*Severity{}
			}
			r.Values[m.ID] = sev
		}
	}
	for _, m := range members {
		if used[m.name] || isReservedMember(m.name) {
			continue
		}
		data, err := readMember(ra, m)
		if err != nil {
			return nil, err
		}
		r.Misc = append(r.Misc, MiscFile{Name: m.name, Data: data})
	}
	return r, nil
}

// readMember returns the content of member m.
func readMember(ra io.ReaderAt, m member) ([]byte, error) {
	b := make([]byte, m.size)
	if _, err := ra.ReadAt(b, m.off); err != nil {
		return nil, errAt(m.name, -1, "reading %d bytes at archive offset %d: %w", m.size, m.off, err)
	}
	return b, nil
}

// readValues reads the index and data members of metric m. It returns
// nil when every row is empty.
func readValues(ra io.ReaderAt, r *Report, m *Metric, s scalar, nlocs int, dm, im member) (*Severity, error) {
	order := r.RowOrder(m)
	nrows := len(order)
	if maxIndex := int64(indexHdrSize + 4 + 4*nrows); im.size > maxIndex {
		return nil, errAt(im.name, -1, "index of %d bytes is larger than any index of %d rows", im.size, nrows)
	}
	ib, err := readMember(ra, im)
	if err != nil {
		return nil, err
	}
	pos, order64, err := decodeIndex(im.name, ib, nrows)
	if err != nil {
		return nil, err
	}
	stored := len(pos)
	if pos == nil {
		stored = nrows
	}
	rb := int64(nlocs) * int64(s.size)
	if want := int64(len(dataMarker)) + int64(stored)*rb; dm.size != want {
		if dm.size >= int64(len(zdataMarker)) {
			var mark [len(zdataMarker)]byte
			if _, err := ra.ReadAt(mark[:], dm.off); err == nil && string(mark[:]) == zdataMarker {
				return nil, errAt(dm.name, 0, "compressed data (%s) is not supported", zdataMarker)
			}
		}
		return nil, errAt(dm.name, min(dm.size, want), "data member has %d bytes, want %d (%s marker + %d rows × %d locations × %d bytes; truncated or corrupt)",
			dm.size, want, dataMarker, stored, nlocs, s.size)
	}
	br := bufio.NewReaderSize(io.NewSectionReader(ra, dm.off, dm.size), 1<<16)
	var mark [len(dataMarker)]byte
	if _, err := io.ReadFull(br, mark[:]); err != nil {
		return nil, errAt(dm.name, 0, "reading marker: %w", err)
	}
	if string(mark[:]) != dataMarker {
		return nil, errAt(dm.name, 0, "bad marker %q, want %q", mark[:], dataMarker)
	}

	sev := &Severity{}
	var floats []float64
	var uints []uint64
	if s.float {
		sev.Float = make([][]float64, nrows)
		floats = make([]float64, stored*nlocs)
	} else {
		sev.Uint = make([][]uint64, nrows)
		uints = make([]uint64, stored*nlocs)
	}
	empty := m.DataType.emptyBits()
	buf := make([]byte, rb)
	some := false
	for i := range stored {
		off := int64(len(dataMarker)) + int64(i)*rb
		if _, err := io.ReadFull(br, buf); err != nil {
			return nil, errAt(dm.name, off, "reading row %d: %w", i, err)
		}
		p := i
		if pos != nil {
			p = int(pos[i])
		}
		id := order[p].ID
		allEmpty := true
		if s.float {
			row := floats[i*nlocs : (i+1)*nlocs : (i+1)*nlocs]
			for l := range row {
				b := order64.Uint64(buf[8*l:])
				allEmpty = allEmpty && b == empty
				row[l] = math.Float64frombits(b)
			}
			if !allEmpty {
				sev.Float[id] = row
			}
		} else {
			row := uints[i*nlocs : (i+1)*nlocs : (i+1)*nlocs]
			for l := range row {
				row[l] = getValue(buf[s.size*l:], s, order64)
				allEmpty = allEmpty && row[l] == 0
			}
			if !allEmpty {
				sev.Uint[id] = row
			}
		}
		some = some || !allEmpty
	}
	if !some {
		return nil, nil
	}
	return sev, nil
}
