package patterns

import "scout/replay"

// Pattern is an entry of the pattern table: the metrics it computes and
// how it subscribes to the replay (the topics it subscribes to decide
// which passes run; see replay.Bus.Runs). A new pattern is a file with
// its register function and one entry here.
type Pattern struct {
	Name     string
	Metrics  []replay.Metric
	Register func(bus *replay.Bus)
	// Part is the optional part of the analysis the pattern belongs to
	// (0: the wait states and statistics, always computed).
	Part Parts
	// Threads: the pattern analyzes every thread of a rank; the others
	// analyze the master threads' MPI communication only.
	Threads bool
}

// Parts is a set of the optional parts of the analysis, which a plan may
// leave out (analysis.Plan.Skip, the command's --no-rootcause and
// --no-critical-path): a part left out subscribes nothing, so that the
// passes only it needs do not run, and its metrics (Metric.Part) are not
// in the report. The wait states and statistics are always computed, in
// the forward and backward passes.
type Parts uint8

// The optional parts.
const (
	// PartRootCause is the root-cause analysis: the short- and long-term
	// delay costs and the wait-state propagation (indirect and
	// propagating wait states).
	PartRootCause Parts = 1 << iota
	// PartCriticalPath is the critical path and its performance impact.
	PartCriticalPath
	// AllParts is every optional part.
	AllParts = PartRootCause | PartCriticalPath
)

// Patterns is the pattern table, in evaluation order: general patterns
// before the ones that refine them (their events must have subscribers
// before they are published). Time and visits come from the profile.
var Patterns = []Pattern{
	{"message statistics", []replay.Metric{SyncsSend, CommsSend, BytesSent, SyncsRecv, CommsRecv, BytesRcvd}, registerP2PStats, 0, false},
	{"communication matrix", nil, registerCommStats, 0, false},
	{"Late Sender", []replay.Metric{LateSender, SLSCount, CLSCount}, registerLateSender, 0, false},
	{"Late Sender, wrong order", []replay.Metric{LateSenderWO, WrongOrderDifferent, WrongOrderSame, SLSWOCount, CLSWOCount}, registerWrongOrder, 0, false},
	{"Late Sender, wavefront refill", refillMetrics, registerRefill, 0, false},
	{"collective statistics", []replay.Metric{SyncsColl, CommsCxch, CommsCsrc, CommsCdst, BytesCout, BytesCin}, registerCollectiveStats, 0, false},
	{"collective wait states", []replay.Metric{BarrierWait, BarrierCompletion, WaitNxN, NxNCompletion,
		LateBroadcast, EarlyReduce, EarlyScan, InitCompletion, FinalizeWait}, registerCollectives, 0, false},
	{"Late Receiver", []replay.Metric{LateReceiver, SLRCount, CLRCount}, registerLateReceiver, 0, false},
	{"OpenMP thread management", []replay.Metric{OmpManagement, OmpFork}, registerOmpManagement, 0, true},
	{"Wait at OpenMP barrier", []replay.Metric{OmpEBarrierWait, OmpIBarrierWait}, registerOmpBarrier, 0, true},
	{"OpenMP lock contention", []replay.Metric{OmpLockContentionCritical, OmpLockContentionAPI}, registerOmpLock, 0, true},
	{"time profile", nil, registerTimeProfile, 0, true},
	{"critical path", []replay.Metric{CriticalPath, CriticalPathActivities, CriticalImbalanceImpact,
		InterPartitionImbalance, NonCriticalPathActivities}, registerCriticalPath, PartCriticalPath, true},
	{"delay costs and wait-state propagation", []replay.Metric{DelayLateSender, DelayLateReceiver,
		DelayBarrier, DelayNxN, DelayOneToN, DelayNToOne, DelayLateSenderLT, DelayLateReceiverLT, DelayBarrierLT,
		DelayNxNLT, DelayOneToNLT, DelayNToOneLT, IndirectLS, IndirectLR, PropagatingLS, PropagatingLR,
		DelayOmpBarrier, DelayOmpBarrierLT, DelayOmpIdle, DelayOmpIdleLT}, registerRootCauses, PartRootCause, true},
}

// A metric's Part is that of the pattern that computes it.
func init() {
	for _, p := range Patterns {
		for _, m := range p.Metrics {
			catalog[m].Part = p.Part
		}
	}
}

// Register subscribes every pattern of the table to bus, for the replay
// of one location (patterns keep per-location state).
func Register(bus *replay.Bus) {
	for _, p := range Patterns {
		p.Register(bus)
	}
}

// Without returns the patterns of table that belong to none of the parts
// in skip.
func Without(table []Pattern, skip Parts) []Pattern {
	var out []Pattern
	for _, p := range table {
		if p.Part&skip == 0 {
			out = append(out, p)
		}
	}
	return out
}

// mayHaveOmp reports whether the trace replayed on bus may have OpenMP
// regions: false when its definitions are known and define none. The
// OpenMP patterns then subscribe nothing: their callbacks at every Enter
// and Leave, and the replay's stops at the Enter events for them, took a
// fifth of the forward pass's processor time on an MPI-only trace (the
// HPCG-like benchmark trace, in-process).
func mayHaveOmp(bus *replay.Bus) bool {
	return bus.Env == nil || bus.Env.Defines(replay.ClassOmp)
}
