package replay

import (
	"bytes"
	"testing"

	"github.com/google/go-cmp/cmp"

	"scout/localtrace"
	"scout/localtrace/otf2"
)

// TestClassifyOmp checks the OpenMP classes of regions by name, source
// file, paradigm and role.
func TestClassifyOmp(t *testing.T) {
	tests := []struct {
		name, file string
		paradigm   uint8
		role       uint8
		want       RegionClass
	}{
		{"!$omp parallel @a.c:10", "a.c", otf2.ParadigmOpenMP, otf2.RoleParallel, ClassOmp | ClassOmpParallel},
		{"!$omp barrier @a.c:12", "a.c", otf2.ParadigmOpenMP, otf2.RoleBarrier, ClassOmp | ClassOmpEBarrier | ClassOmpSync},
		{"!$omp implicit barrier @a.c:14", "a.c", otf2.ParadigmOpenMP, otf2.RoleImplicitBarrier, ClassOmp | ClassOmpIBarrier | ClassOmpSync},
		{"!$omp IBARRIER @a.f:3", "a.f", otf2.ParadigmOpenMP, otf2.RoleImplicitBarrier, ClassOmp | ClassOmpIBarrier | ClassOmpSync},
		{"!$omp critical @a.c:20", "a.c", otf2.ParadigmOpenMP, otf2.RoleCritical, ClassOmp | ClassOmpCritical | ClassOmpSync},
		{"!$omp critical sblock @a.c:20", "a.c", otf2.ParadigmOpenMP, otf2.RoleCriticalSblock, ClassOmp | ClassOmpCritical},
		{"!$omp for @a.c:30", "a.c", otf2.ParadigmOpenMP, 0, ClassOmp},
		{"omp_set_lock", "OMP", otf2.ParadigmOpenMP, 0, ClassOmp | ClassOmpSync},
		{"omp_init_nest_lock", "OMP", otf2.ParadigmOpenMP, 0, ClassOmp | ClassOmpSync},
		{"!$omp flush @a.c:40", "a.c", otf2.ParadigmOpenMP, otf2.RoleFlush, ClassOmp | ClassOmpSync},
		{"!$omp atomic @a.c:41", "a.c", otf2.ParadigmOpenMP, otf2.RoleAtomic, ClassOmp | ClassOmpSync},
		{"!$omp ordered @a.c:42", "a.c", otf2.ParadigmOpenMP, otf2.RoleOrdered, ClassOmp | ClassOmpSync},
		{"!$omp taskwait @a.c:43", "a.c", otf2.ParadigmOpenMP, otf2.RoleTaskWait, ClassOmp | ClassOmpSync},
		{"!$omp single @a.c:44", "a.c", otf2.ParadigmOpenMP, 9, ClassOmp}, // OTF2_REGION_ROLE_SINGLE
		{"!$omp parallel_not", "a.c", otf2.ParadigmOpenMP, otf2.RoleParallel, ClassOmp},
		{"work", "a.c", otf2.ParadigmCompiler, otf2.RoleFunction, 0},
		{"MPI_Barrier", "MPI", otf2.ParadigmMPI, otf2.RoleBarrier, ClassMPI},
	}
	d := &otf2.Defs{HasClock: true, Clock: otf2.ClockProperties{TimerResolution: 1e9, Realtime: otf2.Undef64}}
	for i, tc := range tests {
		d.Strings = append(d.Strings, otf2.String{Self: uint32(2 * i), Value: tc.name}, otf2.String{Self: uint32(2*i + 1), Value: tc.file})
		d.Regions = append(d.Regions, otf2.Region{Self: uint32(i), Name: uint32(2 * i), Canonical: uint32(2 * i),
			Description: uint32(2 * i), File: uint32(2*i + 1), Paradigm: tc.paradigm, Role: tc.role})
	}
	var b bytes.Buffer
	if _, err := otf2.EncodeGlobalDefs(&b, d, 1<<20); err != nil {
		t.Fatal(err)
	}
	d, err := otf2.DecodeGlobalDefs(&b, "defs", 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	for i, tc := range tests {
		if got := classify(d, &d.Regions[i]); got != tc.want {
			t.Errorf("%s: classify = %b, want %b", tc.name, got, tc.want)
		}
	}
}

// TestLockTable checks the release times by lock and acquisition order,
// over the traces of several threads.
func TestLockTable(t *testing.T) {
	type lockEvent struct {
		kind        localtrace.Kind
		time        float64
		lock, order uint32
	}
	trace := func(evs ...lockEvent) *localtrace.Trace {
		t := &localtrace.Trace{}
		for _, e := range evs {
			t.Append(localtrace.Event{Kind: e.kind, Arg: uint32(len(t.Locks))}, e.time)
			t.Locks = append(t.Locks, localtrace.Lock{Lock: e.lock, Order: e.order})
		}
		return t
	}
	t0 := trace(lockEvent{localtrace.KindLockAcquire, 1, 7, 1}, lockEvent{localtrace.KindLockRelease, 2, 7, 1},
		lockEvent{localtrace.KindLockAcquire, 5, 8, 1}, lockEvent{localtrace.KindLockRelease, 6, 8, 1})
	t1 := trace(lockEvent{localtrace.KindLockAcquire, 2.5, 7, 2}, lockEvent{localtrace.KindLockRelease, 3, 7, 2})
	lt := NewLockTable([]*localtrace.Trace{t0, t1})
	type got struct {
		T  float64
		OK bool
	}
	var gots []got
	for _, q := range [][2]uint32{{7, 1}, {7, 2}, {8, 1}, {7, 3}, {9, 1}} {
		v, ok := lt.Released(q[0], q[1])
		gots = append(gots, got{v, ok})
	}
	want := []got{{2, true}, {3, true}, {6, true}, {0, false}, {0, false}}
	if d := cmp.Diff(want, gots); d != "" {
		t.Errorf("releases (-want +got):\n%s", d)
	}
	if NewLockTable([]*localtrace.Trace{{}}) != nil {
		t.Error("a table without locks")
	}
	if _, ok := (*LockTable)(nil).Released(1, 1); ok {
		t.Error("a nil table released a lock")
	}
}
