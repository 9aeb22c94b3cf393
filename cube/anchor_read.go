package cube

import (
	"bytes"
	"compress/gzip"
	"encoding/xml"
	"fmt"
	"io"
	"strconv"
	"strings"
)

const (
	// maxDepth bounds the nesting of anchor.xml elements; parsing and
	// building the call tree are iterative, so it is no stack limit but a
	// sanity bound (a call tree a million levels deep).
	maxDepth = 1 << 20
	// maxAnchor bounds the size of a gzip-compressed anchor.xml after
	// decompression.
	maxAnchor = 1 << 30
)

// xnode is one element of anchor.xml.
type xnode struct {
	name  string
	attrs []xml.Attr
	text  []byte
	kids  []*xnode
	off   int64 // input offset just after the start tag
}

func (n *xnode) attr(names ...string) (string, bool) {
	for _, a := range n.attrs {
		for _, name := range names {
			if a.Name.Local == name {
				return a.Value, true
			}
		}
	}
	return "", false
}

// errorf returns an error at the element's offset in anchor.xml.
func (n *xnode) errorf(format string, args ...any) error {
	return errAt(anchorName, n.off, "<%s>: %s", n.name, fmt.Sprintf(format, args...))
}

// intAttr returns a required (def == nil) or optional integer attribute.
func (n *xnode) intAttr(def *int, names ...string) (int, error) {
	s, ok := n.attr(names...)
	if !ok {
		if def == nil {
			return 0, n.errorf("missing attribute %s", names[0])
		}
		return *def, nil
	}
	v, err := strconv.Atoi(s)
	if err != nil {
		return 0, n.errorf("attribute %s=%q is not an integer", names[0], s)
	}
	return v, nil
}

// childText returns the text of the first child element called name.
func (n *xnode) childText(name string) (string, bool) {
	for _, k := range n.kids {
		if k.name == name {
			return string(k.text), true
		}
	}
	return "", false
}

// parseXML builds the element tree of anchor.xml. Text is kept verbatim
// (as CubeLib does); unquoted attribute values, which CubeW writes for
// derived metrics, are accepted.
func parseXML(data []byte) (*xnode, error) {
	if len(data) >= 2 && data[0] == 0x1f && data[1] == 0x8b {
		// CubeW built with zlib and CUBEW_ZLIB_COMPRESSION set.
		zr, err := gzip.NewReader(bytes.NewReader(data))
		if err != nil {
			return nil, errAt(anchorName, 0, "%w", err)
		}
		if data, err = io.ReadAll(io.LimitReader(zr, maxAnchor+1)); err != nil {
			return nil, errAt(anchorName, -1, "decompressing: %w", err)
		}
		if len(data) > maxAnchor {
			return nil, errAt(anchorName, -1, "decompressed anchor.xml is larger than %d bytes", maxAnchor)
		}
	}
	d := xml.NewDecoder(bytes.NewReader(data))
	d.Strict = false
	root := &xnode{}
	stack := []*xnode{root}
	for {
		off := d.InputOffset()
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, errAt(anchorName, off, "%w", err)
		}
		top := stack[len(stack)-1]
		switch t := tok.(type) {
		case xml.StartElement:
			if len(stack) > maxDepth {
				return nil, errAt(anchorName, off, "elements nested deeper than %d", maxDepth)
			}
			n := &xnode{name: t.Name.Local, attrs: t.Attr, off: off}
			top.kids = append(top.kids, n)
			stack = append(stack, n)
		case xml.EndElement:
			if len(stack) == 1 {
				return nil, errAt(anchorName, off, "unexpected </%s>", t.Name.Local)
			}
			stack = stack[:len(stack)-1]
		case xml.CharData:
			if len(stack) > 1 {
				top.text = append(top.text, t...)
			}
		}
	}
	if len(stack) != 1 {
		return nil, errAt(anchorName, int64(len(data)), "unexpected end of document inside <%s> (truncated?)", stack[len(stack)-1].name)
	}
	if len(root.kids) != 1 || root.kids[0].name != "cube" {
		return nil, errAt(anchorName, -1, "want exactly one <cube> root element")
	}
	return root.kids[0], nil
}

// decodeAnchor parses anchor.xml into a Report without values.
func decodeAnchor(data []byte) (*Report, error) {
	root, err := parseXML(data)
	if err != nil {
		return nil, err
	}
	if v, _ := root.attr("version"); !strings.HasPrefix(v, "4.") {
		return nil, root.errorf("unsupported CUBE version %q (want 4.x)", v)
	}
	p := &anchorParser{r: &Report{}, metricIDs: map[int]bool{}}
	seen := map[string]bool{}
	for _, n := range root.kids {
		seen[n.name] = true
		switch n.name {
		case "attr":
			if a := p.attr(n); !isStandardAttr(a.Key) {
				p.r.Attrs = append(p.r.Attrs, a)
			}
		case "doc":
			p.doc(n)
		case "metrics":
			err = p.metrics(nil, n.kids)
		case "program":
			err = p.program(n)
		case "system":
			err = p.system(n)
		}
		if err != nil {
			return nil, err
		}
	}
	for _, sec := range []string{"metrics", "program", "system"} {
		if !seen[sec] {
			return nil, root.errorf("no <%s> section", sec)
		}
	}
	return p.r, nil
}

// anchorParser turns the element tree into a Report.
type anchorParser struct {
	r         *Report
	metricIDs map[int]bool
}

func (p *anchorParser) attr(n *xnode) Attr {
	k, _ := n.attr("key")
	v, _ := n.attr("value")
	return Attr{k, v}
}

func (p *anchorParser) doc(n *xnode) {
	for _, m := range n.kids {
		if m.name != "mirrors" {
			continue
		}
		for _, u := range m.kids {
			if u.name == "murl" {
				p.r.Mirrors = append(p.r.Mirrors, string(u.text))
			}
		}
	}
}

func (p *anchorParser) metrics(parent *Metric, kids []*xnode) error {
	for _, n := range kids {
		if n.name != "metric" {
			continue
		}
		m, err := p.metric(n)
		if err != nil {
			return err
		}
		m.Parent = parent
		if parent == nil {
			p.r.Metrics = append(p.r.Metrics, m)
		} else {
			parent.Children = append(parent.Children, m)
		}
		if err := p.metrics(m, n.kids); err != nil {
			return err
		}
	}
	return nil
}

func (p *anchorParser) metric(n *xnode) (*Metric, error) {
	id, err := n.intAttr(nil, "id", "Id")
	if err != nil {
		return nil, err
	}
	if id < 0 || p.metricIDs[id] {
		return nil, n.errorf("metric ID %d is negative or used twice", id)
	}
	p.metricIDs[id] = true
	m := &Metric{ID: id, Type: Exclusive, DataType: Double}
	if t, ok := n.attr("type"); ok {
		m.Type = MetricType(t)
	}
	if v, ok := n.attr("viztype"); ok && v != "NORMAL" {
		m.Viz = VizType(v)
	}
	fields := map[string]*string{
		"disp_name": &m.DispName, "uniq_name": &m.UniqName, "uom": &m.Unit, "val": &m.Val,
		"url": &m.URL, "descr": &m.Descr, "cubepl": &m.Expression,
		"cubeplinit": &m.InitExpression, "cubeplaggr": &m.AggrExpression,
	}
	for _, k := range n.kids {
		if f := fields[k.name]; f != nil {
			*f = string(k.text)
		}
		switch k.name {
		case "dtype":
			m.DataType = DataType(k.text)
		case "attr":
			m.Attrs = append(m.Attrs, p.attr(k))
		}
	}
	return m, nil
}

func (p *anchorParser) program(n *xnode) error {
	nregions := 0
	for _, k := range n.kids {
		if k.name == "region" {
			nregions++
		}
	}
	p.r.Regions = make([]*Region, nregions)
	for _, k := range n.kids {
		if k.name != "region" {
			continue
		}
		if err := p.region(k); err != nil {
			return err
		}
	}
	for i, g := range p.r.Regions {
		if g == nil {
			return n.errorf("region IDs are not dense: no region %d", i)
		}
	}
	var all []*Cnode
	if err := p.cnodes(nil, n.kids, &all); err != nil {
		return err
	}
	seen := make([]bool, len(all))
	for _, c := range all {
		if c.ID < 0 || c.ID >= len(all) || seen[c.ID] {
			return n.errorf("cnode ID %d out of range [0,%d) or used twice", c.ID, len(all))
		}
		seen[c.ID] = true
	}
	return nil
}

func (p *anchorParser) region(n *xnode) error {
	minus1 := -1
	id, err := n.intAttr(nil, "id", "Id")
	if err != nil {
		return err
	}
	if id < 0 || id >= len(p.r.Regions) || p.r.Regions[id] != nil {
		return n.errorf("region ID %d out of range [0,%d) or used twice", id, len(p.r.Regions))
	}
	g := &Region{ID: id, Paradigm: "unknown", Role: "unknown"}
	g.Mod, _ = n.attr("mod")
	if g.Begin, err = n.intAttr(&minus1, "begin"); err != nil {
		return err
	}
	if g.End, err = n.intAttr(&minus1, "end"); err != nil {
		return err
	}
	fields := map[string]*string{"name": &g.Name, "mangled_name": &g.MangledName,
		"paradigm": &g.Paradigm, "role": &g.Role, "url": &g.URL, "descr": &g.Descr}
	for _, k := range n.kids {
		if f := fields[k.name]; f != nil {
			*f = string(k.text)
		} else if k.name == "attr" {
			g.Attrs = append(g.Attrs, p.attr(k))
		}
	}
	if _, ok := n.childText("mangled_name"); !ok {
		g.MangledName = g.Name
	}
	p.r.Regions[id] = g
	return nil
}

// cnodes builds the call tree below parent from the <cnode> elements
// among kids, in document order (depth first). Iterative, so that very
// deep call trees cannot exhaust the stack.
func (p *anchorParser) cnodes(parent *Cnode, kids []*xnode, all *[]*Cnode) error {
	type frame struct {
		parent *Cnode
		kids   []*xnode
	}
	stack := []frame{{parent, kids}}
	for len(stack) > 0 {
		f := &stack[len(stack)-1]
		if len(f.kids) == 0 {
			stack = stack[:len(stack)-1]
			continue
		}
		n := f.kids[0]
		f.kids = f.kids[1:]
		if n.name != "cnode" {
			continue
		}
		c, err := p.cnode(n)
		if err != nil {
			return err
		}
		c.Parent = f.parent
		*all = append(*all, c)
		if f.parent == nil {
			p.r.Cnodes = append(p.r.Cnodes, c)
		} else {
			f.parent.Children = append(f.parent.Children, c)
		}
		stack = append(stack, frame{c, n.kids})
	}
	return nil
}

func (p *anchorParser) cnode(n *xnode) (*Cnode, error) {
	id, err := n.intAttr(nil, "id", "Id")
	if err != nil {
		return nil, err
	}
	callee, err := n.intAttr(nil, "calleeId")
	if err != nil {
		return nil, err
	}
	if callee < 0 || callee >= len(p.r.Regions) {
		return nil, n.errorf("calleeId %d names no region", callee)
	}
	zero := 0
	c := &Cnode{ID: id, Region: p.r.Regions[callee]}
	if c.Line, err = n.intAttr(&zero, "line"); err != nil {
		return nil, err
	}
	c.Line = max(c.Line, 0) // unknown lines (CubeLib: -1) are 0 here
	c.Mod, _ = n.attr("mod")
	for _, k := range n.kids {
		switch k.name {
		case "parameter":
			typ, _ := k.attr("partype")
			key, _ := k.attr("parkey")
			val, _ := k.attr("parvalue")
			prm := Param{Key: key, Value: val}
			if typ == "numeric" {
				prm = Param{Key: key, Numeric: true}
				if prm.Number, err = strconv.ParseFloat(val, 64); err != nil {
					return nil, k.errorf("numeric parameter %q has value %q", key, val)
				}
			}
			c.Params = append(c.Params, prm)
		case "attr":
			c.Attrs = append(c.Attrs, p.attr(k))
		}
	}
	return c, nil
}
