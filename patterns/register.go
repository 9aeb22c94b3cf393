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
}

// Patterns is the pattern table, in evaluation order: general patterns
// before the ones that refine them (their events must have subscribers
// before they are published). Time and visits come from the profile.
var Patterns = []Pattern{
	{"message statistics", []replay.Metric{SyncsSend, CommsSend, BytesSent, SyncsRecv, CommsRecv, BytesRcvd}, registerP2PStats},
	{"Late Sender", []replay.Metric{LateSender, SLSCount, CLSCount}, registerLateSender},
	{"Late Sender, wrong order", []replay.Metric{LateSenderWO, WrongOrderDifferent, WrongOrderSame, SLSWOCount, CLSWOCount}, registerWrongOrder},
	{"collective statistics", []replay.Metric{SyncsColl, CommsCxch, CommsCsrc, CommsCdst, BytesCout, BytesCin}, registerCollectiveStats},
	{"collective wait states", []replay.Metric{BarrierWait, BarrierCompletion, WaitNxN, NxNCompletion,
		LateBroadcast, EarlyReduce, EarlyScan, InitCompletion, FinalizeWait}, registerCollectives},
	{"Late Receiver", []replay.Metric{LateReceiver, SLRCount, CLRCount}, registerLateReceiver},
	{"root cause and critical path", []replay.Metric{CriticalPath, CriticalPathActivities, CriticalImbalanceImpact,
		InterPartitionImbalance, NonCriticalPathActivities, DelayLateSender, DelayLateReceiver,
		DelayBarrier, DelayNxN, DelayOneToN, DelayNToOne, DelayLateSenderLT, DelayLateReceiverLT, DelayBarrierLT,
		DelayNxNLT, DelayOneToNLT, DelayNToOneLT, IndirectLS, IndirectLR, PropagatingLS, PropagatingLR}, registerRootCause},
}

// Register subscribes every pattern of the table to bus, for the replay
// of one location (patterns keep per-location state).
func Register(bus *replay.Bus) {
	for _, p := range Patterns {
		p.Register(bus)
	}
}
