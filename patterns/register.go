package patterns

import "scout/replay"

// Register subscribes the full pattern catalog to bus, for the replay of
// one location (patterns keep per-location state). The order is the
// evaluation order: general patterns before the ones that refine them.
func Register(bus *replay.Bus) {
	registerP2PStats(bus)
	ls := registerLateSender(bus)
	registerWrongOrder(bus, ls)
	registerCollectiveStats(bus)
	registerCollectives(bus)
	registerLateReceiver(bus, ls)
}
