package analysis

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sync"

	"scout/localtrace"
	"scout/localtrace/otf2"
	"scout/patterns"
)

// Correct corrects the timestamps of the trace of p (as Plan.TimeCorrect
// does before an analysis) and writes the corrected trace as a new OTF2
// archive in directory out, which must not exist yet: it is written
// beside it first and renamed when complete. The new archive has the
// original's definitions and events with the corrected times; its events
// carry global identifiers (no mapping tables) and need no clock
// offsets. Traces with several threads per rank are not supported yet.
//
// The corrected times fall between the original timer's ticks, and the
// analysis's delay costs can depend on differences of a few ulps between
// them (ties of a corrected collective's ends, say): the new archive's
// timer therefore counts 2^k ticks per second, with the largest k that
// keeps twice the trace's length below 2^62 ticks (k = 58 for a 5 s
// trace), time zero being the original's. Every time from 2^(52-k) s on
// (16 ms for a 5 s trace) is then stored exactly, and the corrected
// archive analyzes to the values of the corrected analysis of the
// original. Correct returns what the correction did.
func Correct(ctx context.Context, p Plan, out string) (*patterns.Correction, error) {
	p.TimeCorrect = true
	p.Patterns = []patterns.Pattern{}
	s, err := open(p)
	if err != nil {
		return nil, err
	}
	all, err := s.rewrite(ctx, out, "corrected", "timestamps corrected by scout", 1, true)
	if err != nil {
		return nil, err
	}
	corr := &patterns.Correction{}
	for _, l := range all {
		if l.correction != nil {
			corr.Add(*l.correction)
		}
	}
	return corr, nil
}

// rewrite replays the trace of s in this process (the plan's early
// passes change the events' times) and writes the events with their new
// times as a new OTF2 archive in directory out, which must not exist
// yet: it is written beside it first and renamed when complete (what
// names the archive in messages). With retime, the new times may reach
// stretch times the trace's length, and the archive's timer is finer
// (see Correct); else the events keep their recorded times and the
// replay leaves out the events of each location's reduction. It returns
// the replayed locations.
func (s *session) rewrite(ctx context.Context, out, what, creator string, stretch float64, retime bool) ([]*located, error) {
	if _, err := os.Lstat(out); err == nil {
		return nil, fmt.Errorf("%s exists: the %s archive goes into a new directory", out, what)
	}
	if len(s.others) > 0 {
		return nil, fmt.Errorf("%s: writing the %s archive of a trace with several threads per rank is not supported yet (%d thread locations besides the %d master threads)",
			s.archive.GlobalDefPath(), what, len(s.others), len(s.masters))
	}
	all, err := s.loadInProcess(ctx)
	if err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp(filepath.Dir(filepath.Clean(out)), "."+filepath.Base(out)+".tmp-")
	if err != nil {
		return nil, fmt.Errorf("creating the %s archive: %w", what, err)
	}
	done := false
	defer func() {
		if !done {
			os.RemoveAll(tmp)
		}
	}()
	cw, err := s.newRetimedArchive(tmp, all, creator, stretch, retime)
	if err != nil {
		return nil, err
	}
	s.keep = cw.write
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if fs := s.replayInProcess(all); fs != nil {
		return nil, explainFailure(fs)
	}
	if err := cw.close(s.defs); err != nil {
		return nil, err
	}
	if err := os.Rename(tmp, out); err != nil {
		return nil, fmt.Errorf("creating the %s archive: %w", what, err)
	}
	done = true
	s.log.Printf("wrote the %s trace %s", what, filepath.Join(out, s.archive.Name+".otf2"))
	return all, nil
}

// retimedArchive writes a trace with new times (corrected, predicted).
type retimedArchive struct {
	src *otf2.Archive
	w   *otf2.ArchiveWriter
	// the new clock's ticks per second: 2^k (retime), else the
	// original timer's
	resolution uint64
	mu         sync.Mutex
	last       uint64 // latest tick written
}

func (s *session) newRetimedArchive(dir string, ls []*located, creator string, stretch float64, retime bool) (*retimedArchive, error) {
	end := float64(s.defs.Clock.TraceLength) / float64(s.defs.Clock.TimerResolution)
	for _, l := range ls {
		if l.trace != nil && len(l.trace.Events) > 0 {
			end = max(end, l.trace.Time(len(l.trace.Events)-1))
		}
	}
	end *= max(stretch, 1)
	shift := 62 - int(math.Ceil(math.Log2(2*end+1)))
	if retime && float64(uint64(1)<<max(shift, 0)) < float64(s.defs.Clock.TimerResolution) {
		return nil, fmt.Errorf("%s: a trace of %.6g s cannot be written on a finer timer than its own (%d ticks per second)",
			s.archive.GlobalDefPath(), end, s.defs.Clock.TimerResolution)
	}
	an := s.archive.Anchor
	an.NumLocations, an.NumGlobalDefs = 0, 0
	if an.Creator != "" {
		an.Creator += ", " + creator
	} else {
		an.Creator = creator
	}
	an.Substrate, an.Compression, an.BigEndian = otf2.SubstratePOSIX, otf2.CompressionNone, false
	an.NumSnapshots, an.NumThumbnails = 0, 0
	w, err := otf2.CreateArchive(dir, s.archive.Name, an)
	if err != nil {
		return nil, err
	}
	res := uint64(1) << max(shift, 0)
	if !retime {
		res = s.defs.Clock.TimerResolution
	}
	return &retimedArchive{src: s.archive, w: w, resolution: res}, nil
}

// write copies location l's events with the times of its trace, but
// those its reduction drops.
func (c *retimedArchive) write(l *located) error {
	loc, t := l.loc, l.trace
	var drop []bool
	if l.reduction != nil {
		drop = l.reduction.Drop
	}
	ld, err := c.src.ReadLocalDefs(loc)
	if err != nil {
		return err
	}
	r, err := c.src.OpenEvents(loc, ld)
	if err != nil {
		return err
	}
	defer r.Close()
	if err := c.w.WriteLocalDefs(loc, nil); err != nil {
		return err
	}
	ew, err := c.w.CreateEvents(loc)
	if err != nil {
		return err
	}
	n, last, err := c.copyEvents(r, ew, t, drop)
	if cerr := ew.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("writing the retimed events of location %d: %w", loc, cerr)
	}
	if err != nil {
		return err
	}
	if n != len(t.Events) {
		return fmt.Errorf("%s has %d events, the analysis loaded %d", r.Path(), n, len(t.Events))
	}
	c.mu.Lock()
	c.last = max(c.last, last)
	c.mu.Unlock()
	return nil
}

// copyEvents copies the events of r to ew, with the times of t on the
// finer timer (retime), but those drop marks; it returns the number of
// events and the last tick.
func (c *retimedArchive) copyEvents(r *otf2.EventReader, ew *otf2.EventWriter, t *localtrace.Trace, drop []bool) (int, uint64, error) {
	res := float64(c.resolution)
	var last uint64
	for i := 0; ; i++ {
		ev, err := r.Next()
		if errors.Is(err, io.EOF) {
			return i, last, nil
		}
		if err != nil {
			return i, last, err
		}
		if i >= len(t.Events) {
			return i, last, fmt.Errorf("%s: more events than the analysis loaded (%d)", r.Path(), len(t.Events))
		}
		if drop != nil && drop[i] {
			continue
		}
		sec := t.Time(i)
		tick := uint64(0)
		if sec > 0 {
			v := math.Round(sec * res)
			if v >= 1<<63 {
				return i, last, fmt.Errorf("%s: event %d at %.9f s is beyond the new archive's timer", r.Path(), i, sec)
			}
			tick = uint64(v)
		}
		ev.Time = max(tick, last) // (0 for a time before time zero)
		last = ev.Time
		if err := ew.Write(ev); err != nil {
			return i, last, fmt.Errorf("%s: writing the retimed events: %w", r.Path(), err)
		}
	}
}

// close writes the global definitions, with the new timer, and the
// anchor.
func (c *retimedArchive) close(defs *otf2.Defs) error {
	d := *defs
	d.Clock.TimerResolution = c.resolution
	d.Clock.GlobalOffset = 0
	d.Clock.TraceLength = c.last + 1
	if err := c.w.WriteGlobalDefs(&d); err != nil {
		return err
	}
	return c.w.Close()
}
