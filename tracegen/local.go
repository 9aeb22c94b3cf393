package tracegen

import (
	"cmp"
	"slices"

	"scout/localtrace/otf2"
)

// ids are the identifiers a rank's events carry: those of the global
// definitions, or with Scenario.LocalDefs the rank's own.
type ids struct {
	region        []uint32 // by global region id (Undef32: not defined locally)
	world, self   uint32   // communicators
	comm          []uint32 // by global communicator id
	progPath, arg uint32   // strings of ProgramBegin
	attr          uint32   // the ProcessId attribute
}

// rng is a SplitMix64 generator.
type rng uint64

func (x *rng) next() uint64 {
	*x++
	return splitmix(uint64(*x))
}

// perm returns a random permutation of 0..n-1.
func (x *rng) perm(n int) []uint32 {
	p := make([]uint32, n)
	for i := range p {
		p[i] = uint32(i)
	}
	for i := n - 1; i > 0; i-- {
		j := x.next() % uint64(i+1)
		p[i], p[j] = p[j], p[i]
	}
	return p
}

// usedRegions lists, in global id order, the regions thread th of rank
// r enters.
func (g *gen) usedRegions(r, th int) []uint32 {
	used := make([]bool, len(g.global.region))
	if th > 0 { // a worker: the OpenMP phases' parallel regions alone
		for _, p := range g.phases {
			if !p.Kind.omp() || g.s.Iterations == 0 {
				continue
			}
			used[regCompute] = true
			for _, x := range ompOf(p.Kind) {
				used[g.omp[x]] = used[g.omp[x]] || !masterOnly(x)
			}
		}
		return listUsed(used)
	}
	for _, reg := range []uint32{regProgram, regMain, regInit, regFinalize, regCommRank, regCommSize} {
		used[reg] = true
	}
	for _, c := range g.setup {
		if c.split {
			used[g.extra[exCommSplit]] = true
		} else {
			used[g.extra[exDimsCreate]], used[g.extra[exCartCreate]] = true, true
		}
		used[g.extra[exCommFree]] = true
	}
	if g.s.Iterations > 0 {
		for _, p := range g.phases {
			used[p.region], used[regCompute] = true, true
			switch p.Kind {
			case LateSender:
				if r == 0 {
					used[regSend] = true
				} else if r == 1 {
					used[regRecv] = true
				}
			case Ring:
				used[regSendrecv] = true
			case Allreduce, RowAllreduce:
				used[regAllreduce] = true
			case Barrier:
				used[regBarrier] = true
			case Bcast:
				used[regBcast] = true
			case LateSenderNB:
				switch r {
				case 0:
					used[g.extra[exIsend]], used[g.extra[exWait]] = true, true
				case 1:
					used[g.extra[exIrecv]], used[g.extra[exWait]] = true, true
				}
			case Wavefront, Wavefront3D:
				// the rank's places in the sweeps from every corner
				w := newWaveGrid(p.dims)
				for _, k := range p.corners() {
					v := mirror(k.mirror(), p.dims, r)
					for a := range w.n {
						used[regRecv] = used[regRecv] || w.up(v, a)
						used[regSend] = used[regSend] || w.down(v, a)
					}
				}
			case MasterWorker:
				used[regSend], used[regRecv] = true, true
			case OmpParallel, OmpBarrier, OmpCritical, OmpLock:
				for _, x := range ompOf(p.Kind) {
					used[g.omp[x]] = true
				}
			default:
				for _, x := range extrasOf(p.Kind) {
					used[g.extra[x]] = true
				}
			}
		}
	}
	return listUsed(used)
}

// listUsed lists the indexes i where used[i].
func listUsed(used []bool) []uint32 {
	var list []uint32
	for reg, u := range used {
		if u {
			list = append(list, uint32(reg))
		}
	}
	return list
}

// localDefs puts into ld the definitions thread th of rank r makes
// before unification (all but the Location's NumEvents) and returns the
// identifiers its events use. The location defines its own location
// group and location, the system tree, the regions it enters, the
// groups and communicators it belongs to (a master: MPI's and its thread
// team's; a worker: its team's), a master the ProcessId attribute, and
// the strings these refer to; each kind is numbered in an order drawn
// from the seed, the rank and the thread, and the records are written
// in identifier order.
func (g *gen) localDefs(ld *otf2.LocalDefs, r, th int) *ids {
	c := g.canon
	x := rng(splitmix(g.s.Seed^0x6c6f63616c646566) ^ uint64(r)<<24 ^ uint64(th)<<48)
	id := &ids{region: make([]uint32, len(g.global.region)), world: otf2.Undef32, self: otf2.Undef32}
	master := th == 0

	// groups and communicators: a master's of MPI_COMM_WORLD and
	// MPI_COMM_SELF, and those of the grid kinds that contain the rank;
	// the thread team's
	var usedGroups, usedComms []uint32
	if master {
		usedGroups = []uint32{groupLocations, groupWorld, groupSelf}
		usedComms = []uint32{commWorld, commSelf}
		for _, s := range g.setup {
			usedComms = append(usedComms, s.commOf(r))
			if s.split {
				usedGroups = append(usedGroups, s.group+uint32(r/s.dims[1]))
			}
		}
	}
	if g.hasOmp {
		usedGroups = append(usedGroups, g.ompGroup, g.ompGroup+1+uint32(r))
		usedComms = append(usedComms, g.teamComm+uint32(r))
	}

	// strings: those the location's definitions and events refer to
	l := c.Locations[r*g.nt+th]
	usedStr := map[uint32]bool{strEmpty: true, c.LocationGroups[r].Name: true, l.Name: true}
	if master {
		for _, s := range []uint32{strProgPath, strArg, strWorld, strSelf, strPid, strPidDesc} {
			usedStr[s] = true
		}
		for _, t := range c.CartTopologies { // every rank is in every grid
			usedStr[t.Name] = true
			for _, dim := range t.Dims {
				usedStr[c.CartDimensions[dim].Name] = true
			}
		}
	}
	for _, m := range usedComms {
		usedStr[c.Comms[m].Name] = true
	}
	for _, gr := range usedGroups {
		usedStr[c.Groups[gr].Name] = true
	}
	for _, n := range c.SystemTreeNodes {
		usedStr[n.Name], usedStr[n.Class] = true, true
	}
	regions := g.usedRegions(r, th)
	for _, reg := range regions {
		rg := &c.Regions[reg]
		for _, s := range []uint32{rg.Name, rg.Description, rg.File, rg.Canonical} {
			usedStr[s] = true
		}
	}
	delete(usedStr, otf2.Undef32)
	strs := make([]uint32, 0, len(usedStr))
	for s := range usedStr {
		strs = append(strs, s)
	}
	slices.Sort(strs)
	strMap := make(map[uint32]uint32, len(strs))
	for i, p := range x.perm(len(strs)) {
		strMap[strs[i]] = p
		ld.Defs.Strings = append(ld.Defs.Strings, otf2.String{Self: p, Value: c.Strings[strs[i]].Value})
	}
	str := func(s uint32) uint32 {
		if s == otf2.Undef32 {
			return s
		}
		return strMap[s]
	}
	id.progPath, id.arg = str(strProgPath), str(strArg)

	// system tree, location group, location
	nodes := x.perm(len(c.SystemTreeNodes))
	node := func(n uint32) uint32 {
		if n == otf2.Undef32 {
			return n
		}
		return nodes[n]
	}
	for _, n := range c.SystemTreeNodes {
		ld.Defs.SystemTreeNodes = append(ld.Defs.SystemTreeNodes, otf2.SystemTreeNode{Self: node(n.Self),
			Name: str(n.Name), Class: str(n.Class), Parent: node(n.Parent)})
	}
	for _, d := range c.NodeDomains {
		ld.Defs.NodeDomains = append(ld.Defs.NodeDomains, otf2.SystemTreeNodeDomain{Node: node(d.Node), Domain: d.Domain})
	}
	lg := c.LocationGroups[r]
	lgID := uint32(x.next() % 4)
	ld.Defs.LocationGroups = []otf2.LocationGroup{{Self: lgID, Name: str(lg.Name), Type: lg.Type,
		Parent: node(lg.Parent), Creator: otf2.Undef32}}
	ld.Defs.Locations = []otf2.Location{{Self: l.Self, Name: str(l.Name), Type: l.Type, Group: lgID}}

	// regions
	for i, p := range x.perm(len(regions)) {
		rg := c.Regions[regions[i]]
		id.region[regions[i]] = p
		rg.Self, rg.Name, rg.Description = p, str(rg.Name), str(rg.Description)
		rg.File, rg.Canonical = str(rg.File), str(rg.Canonical)
		ld.Defs.Regions = append(ld.Defs.Regions, rg)
	}

	// groups, communicators, attribute
	groups := map[uint32]uint32{}
	for i, p := range x.perm(len(usedGroups)) {
		gr := c.Groups[usedGroups[i]]
		groups[gr.Self] = p
		gr.Self, gr.Name = p, str(gr.Name)
		ld.Defs.Groups = append(ld.Defs.Groups, gr) // members are locations and ranks: not renumbered
	}
	id.comm = make([]uint32, len(g.global.comm))
	for i := range id.comm {
		id.comm[i] = otf2.Undef32
	}
	for i, p := range x.perm(len(usedComms)) {
		id.comm[usedComms[i]] = p
	}
	for _, cm := range usedComms {
		m := c.Comms[cm]
		m.Self, m.Name, m.Group = id.comm[m.Self], str(m.Name), groups[m.Group]
		if m.Parent != otf2.Undef32 {
			m.Parent = id.comm[m.Parent]
		}
		ld.Defs.Comms = append(ld.Defs.Comms, m)
	}
	if !master {
		return sortDefs(ld, id)
	}
	id.world, id.self = id.comm[commWorld], id.comm[commSelf]
	id.attr = uint32(x.next() % 3)
	for _, a := range c.Attributes {
		ld.Defs.Attributes = append(ld.Defs.Attributes, otf2.Attribute{Self: id.attr, Name: str(a.Name), Type: a.Type,
			Description: str(a.Description)})
	}

	// Cartesian topologies: the rank's own coordinates, as Score-P
	// writes them locally
	dims := x.perm(len(c.CartDimensions))
	for _, cd := range c.CartDimensions {
		ld.Defs.CartDimensions = append(ld.Defs.CartDimensions, otf2.CartDimension{Self: dims[cd.Self], Name: str(cd.Name),
			Size: cd.Size, Periodic: cd.Periodic})
	}
	topos := x.perm(len(c.CartTopologies))
	for i, t := range c.CartTopologies {
		lt := otf2.CartTopology{Self: topos[i], Name: str(t.Name), Comm: id.comm[t.Comm]}
		for _, dim := range t.Dims {
			lt.Dims = append(lt.Dims, dims[dim])
		}
		ld.Defs.CartTopologies = append(ld.Defs.CartTopologies, lt)
		for _, co := range c.CartCoordinates {
			if co.Topology == t.Self && co.Rank == uint32(r) {
				ld.Defs.CartCoordinates = append(ld.Defs.CartCoordinates, otf2.CartCoordinate{Topology: topos[i], Rank: co.Rank,
					Coords: co.Coords})
			}
		}
	}

	return sortDefs(ld, id)
}

// sortDefs sorts the local definitions by identifier and returns id.
func sortDefs(ld *otf2.LocalDefs, id *ids) *ids {
	bySelf := cmp.Compare[uint32]
	slices.SortFunc(ld.Defs.Strings, func(a, b otf2.String) int { return bySelf(a.Self, b.Self) })
	slices.SortFunc(ld.Defs.SystemTreeNodes, func(a, b otf2.SystemTreeNode) int { return bySelf(a.Self, b.Self) })
	slices.SortFunc(ld.Defs.Regions, func(a, b otf2.Region) int { return bySelf(a.Self, b.Self) })
	slices.SortFunc(ld.Defs.Groups, func(a, b otf2.Group) int { return bySelf(a.Self, b.Self) })
	slices.SortFunc(ld.Defs.Comms, func(a, b otf2.Comm) int { return bySelf(a.Self, b.Self) })
	slices.SortFunc(ld.Defs.CartDimensions, func(a, b otf2.CartDimension) int { return bySelf(a.Self, b.Self) })
	slices.SortFunc(ld.Defs.CartTopologies, func(a, b otf2.CartTopology) int { return bySelf(a.Self, b.Self) })
	return id
}
