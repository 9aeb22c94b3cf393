package cube

import (
	"bytes"
	"encoding/binary"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// specExample is the report of the format notes' §2.5 with the values of
// §3.6: time (INCLUSIVE) with child mpi_latesender (EXCLUSIVE), call path
// main→MPI_Recv, ranks 0 and 1 with one thread each.
func specExample() *Report {
	r := &Report{Attrs: []Attr{{"Creator", "mywriter 0.1"}, {"CUBE_CT_AGGR", "SUM"}}}
	tm := r.AddMetric(nil, &Metric{DispName: "Time", UniqName: "time", DataType: Double, Unit: "sec",
		Type: Inclusive, Descr: "Total CPU allocation time"})
	ls := r.AddMetric(tm, &Metric{DispName: "Late Sender", UniqName: "mpi_latesender", DataType: Double, Unit: "sec",
		Type: Exclusive, Descr: "Time a receiver waits for a message that is sent late"})
	main := r.AddRegion(&Region{Name: "main", MangledName: "main", Mod: "app.c", Begin: 10, End: 80, Paradigm: "user", Role: "function"})
	recv := r.AddRegion(&Region{Name: "MPI_Recv", MangledName: "MPI_Recv", Mod: "MPI", Begin: -1, End: -1, Paradigm: "mpi", Role: "function"})
	c1 := r.AddCnode(r.AddCnode(nil, main), recv)
	c1.Line, c1.Mod = 42, "app.c"
	n := r.AddSystemNode(nil, "node01", "machine")
	for rank := range 2 {
		r.AddLocation(r.AddGroup(n, "MPI Rank "+string(rune('0'+rank)), rank), "Master thread", 0)
	}
	// cnode IDs: main 0, MPI_Recv 1.
	r.Values = map[int]*Severity{
		tm.ID: {Float: [][]float64{{1.5, 1.4}, {0.5, 0.2}}},
		ls.ID: {Float: [][]float64{nil, {0.3, 0.0}}},
	}
	return r
}

// specAnchor is the anchor.xml of §2.5.
const specAnchor = `<?xml version="1.0" encoding="UTF-8"?>

<cube version="4.4">
<attr key="CubePL Version" value="1.1"/>
<attr key="Cube Version" value="4.8.2"/>
<attr key="Cube anchor.xml syntax version" value="4.4"/>
<attr key="Creator" value="mywriter 0.1"/>
<attr key="CUBE_CT_AGGR" value="SUM"/>
<doc>
<mirrors>
</mirrors>
</doc>
<metrics>
<metric id="0" type="INCLUSIVE">
<disp_name>Time</disp_name>
<uniq_name>time</uniq_name>
<dtype>DOUBLE</dtype>
<uom>sec</uom>
<url></url>
<descr>Total CPU allocation time</descr>
<metric id="1" type="EXCLUSIVE">
<disp_name>Late Sender</disp_name>
<uniq_name>mpi_latesender</uniq_name>
<dtype>DOUBLE</dtype>
<uom>sec</uom>
<url></url>
<descr>Time a receiver waits for a message that is sent late</descr>
</metric>
</metric>
</metrics>
<program>
<region id="0" mod="app.c" begin="10" end="80">
<name>main</name>
<mangled_name>main</mangled_name>
<paradigm>user</paradigm>
<role>function</role>
<url></url>
<descr></descr>
</region>
<region id="1" mod="MPI" begin="-1" end="-1">
<name>MPI_Recv</name>
<mangled_name>MPI_Recv</mangled_name>
<paradigm>mpi</paradigm>
<role>function</role>
<url></url>
<descr></descr>
</region>
<cnode id="0" calleeId="0">
<cnode id="1" line="42" mod="app.c" calleeId="1">
</cnode>
</cnode>
</program>
<system>
<systemtreenode Id="0">
<name>node01</name>
<class>machine</class>
<locationgroup Id="0">
<name>MPI Rank 0</name>
<rank>0</rank>
<type>process</type>
<location Id="0">
<name>Master thread</name>
<rank>0</rank>
<type>thread</type>
</location>
</locationgroup>
<locationgroup Id="1">
<name>MPI Rank 1</name>
<rank>1</rank>
<type>process</type>
<location Id="1">
<name>Master thread</name>
<rank>0</rank>
<type>thread</type>
</location>
</locationgroup>
</systemtreenode>
<topologies>
</topologies>
</system>
</cube>
`

func le64(vs ...float64) []byte {
	var b []byte
	for _, v := range vs {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
	}
	return b
}

func cat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

// TestSpecExample checks every member byte for byte against the worked
// example of the format notes (§2.5, §3.6), with the sparse alternative
// for metric 1 (smaller: one of its two rows is zero).
func TestSpecExample(t *testing.T) {
	r := specExample()
	back, path := writeRead(t, r)
	got := archive(t, path)
	denseIndex := []byte("CUBEX.INDEX\x01\x00\x00\x00\x00\x00\x03")
	want := map[string][]byte{
		"anchor.xml": []byte(specAnchor),
		"0.data":     cat([]byte("CUBEX.DATA"), le64(1.5, 1.4, 0.5, 0.2)),
		"0.index":    denseIndex,
		"1.data":     cat([]byte("CUBEX.DATA"), le64(0.3, 0)),
		"1.index":    []byte("CUBEX.INDEX\x01\x00\x00\x00\x00\x00\x01\x01\x00\x00\x00\x01\x00\x00\x00"),
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("members (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(normalize(specExample()), back, reportOpts); diff != "" {
		t.Errorf("read back (-want +got):\n%s", diff)
	}
	// §4.1: call-path exclusive time main = 1.0, 1.2; MPI_Recv 0.5, 0.2.
	wantCells := []Cell{
		{"mpi_latesender", "main/MPI_Recv", "0", 0.3, false},
		{"time", "main", "0", 1.5 - 0.5, false},
		{"time", "main", "1", 1.4 - 0.2, false},
		{"time", "main/MPI_Recv", "0", 0.5, false},
		{"time", "main/MPI_Recv", "1", 0.2, false},
	}
	if diff := cmp.Diff(wantCells, back.Cells()); diff != "" {
		t.Errorf("cells (-want +got):\n%s", diff)
	}
	var csv strings.Builder
	if err := back.CSV(&csv); err != nil {
		t.Fatal(err)
	}
	wantCSV := "metric,callpath,rank,value\nmpi_latesender,main/MPI_Recv,0,0.3\ntime,main,0,1\ntime,main,1,1.2\n" +
		"time,main/MPI_Recv,0,0.5\ntime,main/MPI_Recv,1,0.2\n"
	if diff := cmp.Diff(wantCSV, csv.String()); diff != "" {
		t.Errorf("CSV (-want +got):\n%s", diff)
	}
}

// TestRowOrder checks the per-type row order of the format notes (§3.3)
// on A→{B→{D→{F}}, C→{E}}, both from RowOrder and in the written data.
func TestRowOrder(t *testing.T) {
	r := &Report{}
	names := map[string]*Region{}
	for _, n := range []string{"A", "B", "C", "D", "E", "F"} {
		names[n] = r.AddRegion(&Region{Name: n, Paradigm: "user", Role: "function", Begin: -1, End: -1})
	}
	a := r.AddCnode(nil, names["A"])
	b := r.AddCnode(a, names["B"])
	d := r.AddCnode(b, names["D"])
	r.AddCnode(d, names["F"])
	c := r.AddCnode(a, names["C"])
	r.AddCnode(c, names["E"])
	r.AddLocation(r.AddGroup(r.AddSystemNode(nil, "m", "machine"), "rank 0", 0), "t", 0)
	// Value of each cnode = 1 + index of its region name in "ABCDEF".
	fill := func(ci, _ int) (float64, bool) {
		return float64(1 + strings.Index("ABCDEF", r.AllCnodes()[ci].Region.Name)), true
	}
	excl := addMetric(r, nil, "excl", Exclusive, Double, fill)
	incl := addMetric(r, nil, "incl", Inclusive, Double, fill)
	simple := addMetric(r, nil, "simple", Simple, Double, fill)
	order := func(m *Metric) string {
		var s string
		for _, c := range r.RowOrder(m) {
			s += c.Region.Name
		}
		return s
	}
	for _, tc := range []struct {
		m    *Metric
		want string
	}{{excl, "ABDFCE"}, {incl, "ABCDFE"}, {simple, "ABCDFE"}} {
		if got := order(tc.m); got != tc.want {
			t.Errorf("RowOrder(%s) = %s, want %s", tc.m.UniqName, got, tc.want)
		}
		_, path := writeRead(t, r)
		data := archive(t, path)[strings.TrimSuffix(mustName(tc.m), ".index")+".data"]
		var got string
		for i := 10; i+8 <= len(data); i += 8 {
			got += string(rune('A' - 1 + int(math.Float64frombits(binary.LittleEndian.Uint64(data[i:])))))
		}
		if got != tc.want {
			t.Errorf("rows of %s in the data member: %s, want %s", tc.m.UniqName, got, tc.want)
		}
	}
}

func mustName(m *Metric) string { _, i := memberNames(m); return i }
