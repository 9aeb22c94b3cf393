// Package cube reads and writes CUBE4 reports (.cubex files), the format
// that Scalasca, Score-P and the Cube GUI use for performance profiles.
//
// A .cubex file is a ustar tar archive. It holds anchor.xml (all
// definitions: metric tree, regions, call tree, system tree, topologies),
// one N.data/N.index pair per metric with values (N is the metric's ID),
// and opaque "misc" members such as remapping.spec. The files written
// here follow what CubeW 4.8 writes and CubeLib 4.x reads: anchor
// version 4.4 (4.7 with accelerator locations), CubeW's tar padding,
// uncompressed members, little-endian values, and for every metric the
// smaller of the dense and the sparse row layout.
//
// # Writing
//
// The definitions are a [Report], built with the Add* helpers or by
// hand (see [Report.Validate] for the rules). [WriteFile] writes a
// report with the values in Report.Values. The streaming [Writer]
// returned by [Create] takes the values row by row ([Writer.WriteRow],
// [Writer.WriteRowUint]) with constant memory per row. Both are atomic:
// the report is written to a temporary file in the target directory and
// appears under its final name only when [Writer.Commit] succeeds;
// [Writer.Close] without Commit, or any error, removes the temporary
// file.
//
// # Reading
//
// [ReadFile] and [Read] load a report with all its values; problems with
// the input are reported as *[Error] values naming the file, the archive
// member and the byte offset. Besides our own files they read reports of
// CubeW and CubeLib, with CubeW's or standard tar padding.
//
// [Report.Cells] and [Report.CSV] turn a report into scout's canonical
// rows metric,callpath,rank,value (call-path exclusive, metric
// inclusive, non-zero cells only).
//
// # Stored values
//
// Values are stored per (metric, call-tree node, location). A value is
// inclusive along the metric tree: a parent metric's value already
// contains its child metrics. Along the call tree, a metric of type
// [Exclusive] stores the value of the node alone, and a metric of type
// [Inclusive] stores the value of the node together with all its callees.
// The rows of a metric are stored in an order that depends on the metric
// type; see [Report.RowOrder]. Rows whose values are all empty (zero, or
// ±MaxFloat64 for MINDOUBLE/MAXDOUBLE) need not be stored.
package cube
