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
	roleAll2One    = 24
	roleAll2All    = 25
	roleCollOther  = 26
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
	var ompStr uint32 // "OpenMP"
	if g.hasOmp {
		ompStr = str(ompLocsName)
		d.Paradigms = append(d.Paradigms, otf2.Paradigm{Paradigm: otf2.ParadigmOpenMP, Name: ompStr, Class: classForkJoin})
	}
	threadNames := []uint32{strThread} // by thread
	for t := 1; t < g.nt; t++ {
		threadNames = append(threadNames, str(fmt.Sprintf(threadNameForm, t)))
	}
	d.SystemTreeNodes = []otf2.SystemTreeNode{{Self: 0, Name: strLinux, Class: strMachine, Parent: otf2.Undef32},
		{Self: 1, Name: strHost, Class: strNode, Parent: 0}}
	d.NodeDomains = []otf2.SystemTreeNodeDomain{{Node: 0, Domain: 0}, {Node: 1, Domain: 1}}
	members := make([]uint64, g.n)
	for r := range g.n {
		members[r] = uint64(r)
		d.LocationGroups = append(d.LocationGroups, otf2.LocationGroup{Self: uint32(r), Name: str(fmt.Sprintf("MPI Rank %d", r)),
			Type: otf2.LocationGroupTypeProcess, Parent: 1, Creator: otf2.Undef32})
		// NumEvents is filled in by the archive writer
		for t, name := range threadNames {
			d.Locations = append(d.Locations, otf2.Location{Self: uint64(t)<<32 | uint64(r), Name: name,
				Type: otf2.LocationTypeCPUThread, Group: uint32(r)})
		}
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
	g.gridDefs(d, str)
	if g.hasOmp {
		g.teamDefs(d, ompStr)
	}
	d.Attributes = []otf2.Attribute{{Self: 0, Name: strPid, Type: 4, Description: strPidDesc}}
	return d
}

// gridDefs adds the communicators of the grid kinds: per split the
// groups and communicators of the rows (as MPI_Comm_split makes them; no
// name), per Cartesian grid a communicator over MPI_COMM_WORLD's group
// and its topology as Score-P defines them ("MPI_Cartesian_4x2" with
// dimensions "dimension 0", ..., and every rank's coordinates). The
// Cartesian communicator is named like its topology, so that unification
// tells the communicators of two grids apart.
func (g *gen) gridDefs(d *otf2.Defs, str func(string) uint32) {
	var dimNames []uint32
	for _, c := range g.setup {
		if c.split {
			for row := range c.dims[0] {
				members := make([]uint64, c.dims[1])
				for j := range members {
					members[j] = uint64(row*c.dims[1] + j)
				}
				d.Groups = append(d.Groups, otf2.Group{Self: c.group + uint32(row), Name: strEmpty, Members: members,
					Type: otf2.GroupTypeCommGroup, Paradigm: otf2.ParadigmMPI})
				d.Comms = append(d.Comms, otf2.Comm{Self: c.comm + uint32(row), Name: strEmpty, Group: c.group + uint32(row),
					Parent: commWorld, Flags: 1})
			}
			continue
		}
		name := str("MPI_Cartesian_" + gridName(c.dims))
		d.Comms = append(d.Comms, otf2.Comm{Self: c.comm, Name: name, Group: groupWorld, Parent: commWorld, Flags: 1})
		topo := otf2.CartTopology{Self: c.topo, Name: name, Comm: c.comm}
		for k, size := range c.dims {
			for len(dimNames) <= k {
				dimNames = append(dimNames, str(fmt.Sprintf("dimension %d", len(dimNames))))
			}
			id := uint32(len(d.CartDimensions))
			d.CartDimensions = append(d.CartDimensions, otf2.CartDimension{Self: id, Name: dimNames[k], Size: uint32(size)})
			topo.Dims = append(topo.Dims, id)
		}
		d.CartTopologies = append(d.CartTopologies, topo)
		for r := range g.n {
			d.CartCoordinates = append(d.CartCoordinates, otf2.CartCoordinate{Topology: c.topo, Rank: uint32(r),
				Coords: coords(c.dims, r)})
		}
	}
}

// teamDefs adds the OpenMP thread teams as Score-P defines them: a
// COMM_LOCATIONS group of paradigm OpenMP with every thread location
// (named like the paradigm) and per rank a communicator (no name) over a
// COMM_GROUP of its threads (their positions in that group).
func (g *gen) teamDefs(d *otf2.Defs, name uint32) {
	all := make([]uint64, 0, g.n*g.nt)
	for r := range g.n {
		for t := range g.nt {
			all = append(all, uint64(t)<<32|uint64(r))
		}
	}
	d.Groups = append(d.Groups, otf2.Group{Self: g.ompGroup, Name: name, Members: all, Type: otf2.GroupTypeCommLocations,
		Paradigm: otf2.ParadigmOpenMP})
	for r := range g.n {
		members := make([]uint64, g.nt)
		for t := range members {
			members[t] = uint64(r*g.nt + t)
		}
		d.Groups = append(d.Groups, otf2.Group{Self: g.ompGroup + 1 + uint32(r), Name: strEmpty, Members: members,
			Type: otf2.GroupTypeCommGroup, Paradigm: otf2.ParadigmOpenMP})
		d.Comms = append(d.Comms, otf2.Comm{Self: g.teamComm + uint32(r), Name: strEmpty, Group: g.ompGroup + 1 + uint32(r),
			Parent: otf2.Undef32})
	}
}

// regions defines the regions in identifier order (reg* constants, then
// the phase regions, the extra MPI regions and the OpenMP regions).
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
	for _, x := range g.extras {
		e := extraRegions[x]
		rs = append(rs, mpi(int(g.extra[x]), e.name, e.role, e.typ))
	}
	fileOMP := uint32(otf2.Undef32)
	for _, x := range g.omps {
		o := ompRegions[x]
		n, file := str(ompName(x, g.s.Program)), uint32(strSource)
		if o.api != "" {
			if fileOMP == otf2.Undef32 {
				fileOMP = str("OMP")
			}
			file = fileOMP
		}
		rs = append(rs, otf2.Region{Self: g.omp[x], Name: n, Canonical: n, Type: o.typ, File: file, Begin: o.begin,
			End: o.end, Role: o.role, Paradigm: otf2.ParadigmOpenMP})
	}
	return rs
}

// extraRegions are the names, roles and attic region types of the extra
// MPI regions (ex* constants), as Score-P defines them.
var extraRegions = [numExtra]struct {
	name      string
	role, typ uint8
}{
	{"MPI_Isend", roleP2P, 0}, {"MPI_Irecv", roleP2P, 0}, {"MPI_Wait", roleFunction, 0},
	{"MPI_Waitall", roleFunction, 0}, {"MPI_Reduce", roleAll2One, roleAll2One},
	{"MPI_Gather", roleAll2One, roleAll2One}, {"MPI_Scatter", roleOne2All, roleOne2All},
	{"MPI_Scan", roleCollOther, roleCollOther}, {"MPI_Allgather", roleAll2All, roleAll2All},
	{"MPI_Alltoall", roleAll2All, roleAll2All}, {"MPI_Dims_create", roleFunction, 0},
	{"MPI_Cart_create", roleFunction, 0}, {"MPI_Comm_split", roleFunction, 0}, {"MPI_Comm_free", roleFunction, 0},
}

// regionName is the name of region id.
func (g *gen) regionName(id uint32) string {
	if n := uint32(regPhase0 + len(g.names) + len(g.extras)); id >= n {
		return ompName(g.omps[id-n], g.s.Program)
	}
	if n := uint32(regPhase0 + len(g.names)); id >= n {
		return extraRegions[g.extras[id-n]].name
	}
	if id >= regPhase0 {
		return g.names[id-regPhase0]
	}
	return [...]string{g.s.Program, "main", "compute", "MPI_Init", "MPI_Finalize", "MPI_Comm_rank", "MPI_Comm_size",
		"MPI_Send", "MPI_Recv", "MPI_Sendrecv", "MPI_Allreduce", "MPI_Barrier", "MPI_Bcast"}[id]
}
