package patterns

import "scout/replay"

// ompLock is OpenMP lock contention (omp_lock_contention_critical,
// omp_lock_contention_api):
//
//	root:        a thread acquires a lock (LockAcquire), its n-th
//	             acquisition by any thread of the rank
//	constituents: the Enter of the region the thread acquires it in (the
//	             critical section, or the lock-API call such as
//	             omp_set_lock); the release of the lock's (n−1)-th
//	             acquisition, by whichever thread
//	constraint:  the thread asked before the lock was free:
//	             idle = release − enter > 0
//	severity:    idle
//	attribution: omp_lock_contention_critical when the region is a
//	             critical section, else omp_lock_contention_api, at the
//	             call path of the acquisition
//
// The releases come from the rank's lock table (replay.LockTable), which
// holds every thread's.
func registerOmpLock(bus *replay.Bus) {
	if !mayHaveOmp(bus) {
		return
	}
	var info OmpWaitInfo
	bus.On(replay.FwLockAcquire, func(c *replay.Ctx) error {
		l := c.Trace.Lock(c.Index)
		cls := c.RegionClass(c.Index)
		if cls&replay.ClassOmp == 0 || l.Order == 0 {
			return nil // not an OpenMP lock; order 0: an old trace's lock without order
		}
		released, ok := c.Loc.Locks.Released(l.Lock, l.Order-1)
		if !ok {
			return nil // the lock's first acquisition
		}
		enter := c.EnterTime(c.Index)
		if idle := released - enter; idle > 0 {
			m := lockMetric(cls)
			c.Add(m, c.Callpath(c.Index), idle)
			info = OmpWaitInfo{Metric: m, Enter: enter, Exit: c.Time(), Idle: idle, Seq: -1}
			return replay.Emit(bus, OmpWaitFound, c, &info)
		}
		return nil
	})
}

// lockMetric is the contention metric of a lock acquired in a region of
// classes cls: a critical section's, or the lock API's.
func lockMetric(cls replay.RegionClass) replay.Metric {
	if cls&replay.ClassOmpCritical != 0 {
		return OmpLockContentionCritical
	}
	return OmpLockContentionAPI
}
