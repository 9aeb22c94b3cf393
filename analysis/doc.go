// Package analysis is scout's analysis core: it turns an OTF2 trace into
// one report model (combine.Report), which the renderers write out (the
// CUBE report, trace.stat, the CSV, the terminal summary).
//
// # Pipeline
//
// Run (in this process) and RunMPI (one process per block of ranks under
// mpirun) go through the same phases:
//
//  1. open: the global definitions, where each location sits (rank,
//     thread), the replay environment (region classes, communicators);
//  2. load: each location's events (localtrace); the threads of a rank
//     continue their master's call tree (localtrace.AdoptThread) and
//     share its lock table;
//  3. unify: the call trees of all locations become one (unify), and each
//     location learns the global id of each of its call paths
//     (replay.Location.Global), so that replay payloads can name call
//     paths across locations;
//  4. replay: every location walks its events in passes, re-enacting the
//     program's messages and collectives (the masters of the ranks) and
//     its OpenMP synchronisation (the threads of a rank, as a team) over
//     scout's own transport (hpc), while the patterns compute their
//     metrics; then its profile (time, visits);
//  5. merge: values mapped to the global call paths, by location, into the
//     report.
//
// # Metrics, patterns, passes and topics
//
// Every metric is declared once, in the registry patterns.Catalog, and
// patterns add to it by its typed id (a replay.Metric constant such as
// patterns.LateSender); names appear only in the outputs, and a test
// checks that every name the metric tree and the statistics use is
// registered.
//
// A pattern is an entry of the pattern table patterns.Patterns: its name,
// the metrics it computes and a register function that subscribes it to
// the replay's bus. It subscribes to engine topics (replay.Topic: trace
// events as a pass walks them, such as replay.FwPostRecv, a message
// received in the forward pass) and to the typed events other patterns
// publish (replay.Event, such as patterns.LateSenderFound), and it may
// publish its own. The passes are data: each engine topic belongs to one
// pass, and the replay runs a pass only when some pattern subscribed to
// one of its topics, in the order of the pass table. What a message or a
// collective carries between locations in a pass is what the patterns
// put into it in their pre-send callbacks.
//
// A pattern is therefore one file plus its entry in the table. For
// example, a pattern that counts the messages received late by more than
// a millisecond (with a metric SlowRecv declared in the registry):
//
//	func registerSlowRecv(bus *replay.Bus) {
//		replay.Subscribe(bus, patterns.LateSenderFound, func(c *replay.Ctx, ls *patterns.LateSenderInfo) error {
//			if ls.Idle > 1e-3 {
//				c.Add(SlowRecv, c.Callpath(ls.Recv), 1)
//			}
//			return nil
//		})
//	}
//
// and in the table
//
//	{"slow receives", []replay.Metric{SlowRecv}, registerSlowRecv, 0, false},
//
// (0: the pattern belongs to no optional part; false: it analyzes the MPI
// calls of the master threads, not every thread of a rank). A Plan may also carry a
// pattern table of its own (Plan.Patterns), which is how tests add toy
// patterns without touching the registry's users.
//
// Some entries of the table are optional parts of the analysis
// (patterns.Parts: the root causes, the critical path), which Plan.Skip
// leaves out: their register functions are not called, so the passes only
// they need do not run, and the report (combine.Report.Skipped) has none of
// their metrics, nor the derived metrics built from them.
//
// # Failures
//
// A replay that fails on some rank fails on every rank (the others are
// stopped by the transport); the error explains it once: the causes
// first, then how many ranks stopped because of them, or, for a
// deadlock, where each rank waits. Under MPI rank 0 prints that message
// for all processes, and the others return ErrReported.
package analysis
