package hpc

// Split partitions the communicator by color, ordering each part by key
// and then by rank; a negative color yields nil.
func (c *handle) Split(color, key int) (Comm, error) {
	s, err := c.collective(&contrib{kind: kSplit, root: -1, color: color, key: key})
	if err != nil {
		return nil, err
	}
	res := s.out.(*splitResult)
	cs := res.comms[c.rank]
	if cs == nil {
		return nil, nil
	}
	return newHandle(c.h, c.me, cs, res.ranks[c.rank]), nil
}

// Create makes a communicator of members (ranks here, in new rank order);
// ranks not listed get nil.
func (c *handle) Create(members []int) (Comm, error) {
	ct := &contrib{kind: kCreate, root: -1, members: append([]int{}, members...)}
	s, err := c.collective(ct)
	if err != nil {
		return nil, err
	}
	for i, m := range ct.members {
		if m == c.rank {
			return newHandle(c.h, c.me, s.out.(*commState), i), nil
		}
	}
	return nil, nil
}
