package tracegen

import (
	"fmt"

	"scout/localtrace/otf2"
)

// Fixed string identifiers; region and rank names follow.
const (
	strEmpty = iota
	strProgPath
	strArg
	strProg
	strCommandLine
	strMPI
	strMachine
	strLinux
	strNode
	strHost
	strThread
	strPid
	strPidDesc
	strWorld
	strSelf
	strSource
	numFixedStrings
)

// Region roles (OTF2_RegionRole) and paradigms.
const (
	roleFunction   = 1
	roleBarrier    = 15
	roleOne2All    = 23
	roleAll2All    = 25
	roleP2P        = 28
	paradigmUser   = 2 // COMPILER: compiler instrumentation
	regionTypeFunc = 1 // the attic regionType Score-P writes for functions
)

// defs builds the global definitions as Score-P 8 writes them for an MPI
// program with compiler instrumentation.
func (g *gen) defs() *otf2.Defs {
	prog := g.s.Program
	d := &otf2.Defs{HasClock: true, Clock: otf2.ClockProperties{TimerResolution: resolution,
		GlobalOffset: startTicks, TraceLength: g.end - startTicks, Realtime: otf2.Undef64}}
	for i, s := range [numFixedStrings]string{"", "/opt/tracegen/" + prog, "synthetic", prog,
		"/opt/tracegen/" + prog + " synthetic", "MPI", "machine", "Linux", "node", "localhost", "Master thread",
		"ProcessId", "Process identifier", "MPI_COMM_WORLD", "MPI_COMM_SELF", prog + ".c"} {
		d.Strings = append(d.Strings, otf2.String{Self: uint32(i), Value: s})
	}
	str := func(s string) uint32 {
		id := uint32(len(d.Strings))
		d.Strings = append(d.Strings, otf2.String{Self: id, Value: s})
		return id
	}
	d.Paradigms = []otf2.Paradigm{{Paradigm: otf2.ParadigmMPI, Name: strMPI}}
	d.SystemTreeNodes = []otf2.SystemTreeNode{{Self: 0, Name: strLinux, Class: strMachine, Parent: otf2.Undef32},
		{Self: 1, Name: strHost, Class: strNode, Parent: 0}}
	d.NodeDomains = []otf2.SystemTreeNodeDomain{{Node: 0, Domain: 0}, {Node: 1, Domain: 1}}
	members := make([]uint64, g.n)
	for r := range g.n {
		members[r] = uint64(r)
		d.LocationGroups = append(d.LocationGroups, otf2.LocationGroup{Self: uint32(r), Name: str(fmt.Sprintf("MPI Rank %d", r)),
			Type: otf2.LocationGroupTypeProcess, Parent: 1, Creator: otf2.Undef32})
		// NumEvents is filled in by the archive writer
		d.Locations = append(d.Locations, otf2.Location{Self: uint64(r), Name: strThread, Type: otf2.LocationTypeCPUThread,
			Group: uint32(r)})
	}
	d.Regions = g.regions(str)
	d.Groups = []otf2.Group{
		{Self: 0, Name: strEmpty, Members: members, Type: otf2.GroupTypeCommLocations, Paradigm: otf2.ParadigmMPI},
		{Self: 1, Name: strEmpty, Members: members, Type: otf2.GroupTypeCommGroup, Paradigm: otf2.ParadigmMPI},
		{Self: 2, Name: strEmpty, Type: otf2.GroupTypeCommSelf, Paradigm: otf2.ParadigmMPI},
	}
	d.Comms = []otf2.Comm{
		{Self: commWorld, Name: strWorld, Group: 1, Parent: otf2.Undef32, Flags: 1},
		{Self: commSelf, Name: strSelf, Group: 2, Parent: otf2.Undef32, Flags: 1},
	}
	d.Attributes = []otf2.Attribute{{Self: 0, Name: strPid, Type: 4, Description: strPidDesc}}
	return d
}

// regions defines the regions in identifier order (reg* constants, then
// the phase regions).
func (g *gen) regions(str func(string) uint32) []otf2.Region {
	user := func(id int, name string) otf2.Region {
		n := str(name)
		return otf2.Region{Self: uint32(id), Name: n, Canonical: n, Type: regionTypeFunc, File: strSource,
			Role: roleFunction, Paradigm: paradigmUser}
	}
	mpi := func(id int, name string, role uint8, typ uint8) otf2.Region {
		n := str(name)
		return otf2.Region{Self: uint32(id), Name: n, Canonical: n, Type: typ, File: strMPI,
			Role: role, Paradigm: otf2.ParadigmMPI}
	}
	rs := []otf2.Region{
		{Self: regProgram, Name: strProg, Canonical: strCommandLine, File: otf2.Undef32,
			Role: otf2.RoleArtificial, Paradigm: otf2.ParadigmMeasurementSystem},
		user(regMain, "main"),
		user(regCompute, "compute"),
		mpi(regInit, "MPI_Init", roleFunction, 0),
		mpi(regFinalize, "MPI_Finalize", roleFunction, 0),
		mpi(regCommRank, "MPI_Comm_rank", roleFunction, 0),
		mpi(regCommSize, "MPI_Comm_size", roleFunction, 0),
		mpi(regSend, "MPI_Send", roleP2P, 0),
		mpi(regRecv, "MPI_Recv", roleP2P, 0),
		mpi(regSendrecv, "MPI_Sendrecv", roleP2P, 0),
		mpi(regAllreduce, "MPI_Allreduce", roleAll2All, roleAll2All),
		mpi(regBarrier, "MPI_Barrier", roleBarrier, 22),
		mpi(regBcast, "MPI_Bcast", roleOne2All, roleOne2All),
	}
	for i, name := range g.names {
		rs = append(rs, user(regPhase0+i, name))
	}
	return rs
}

// regionName is the name of region id.
func (g *gen) regionName(id uint32) string {
	if id >= regPhase0 {
		return g.names[id-regPhase0]
	}
	return [...]string{g.s.Program, "main", "compute", "MPI_Init", "MPI_Finalize", "MPI_Comm_rank", "MPI_Comm_size",
		"MPI_Send", "MPI_Recv", "MPI_Sendrecv", "MPI_Allreduce", "MPI_Barrier", "MPI_Bcast"}[id]
}
