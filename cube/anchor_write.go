package cube

import (
	"bytes"
	"strconv"
	"strings"
)

// anchor.xml is written exactly the way CubeW 4.8 writes it: no
// indentation, LF line ends, every string escaped with the five XML
// entities, and tags in the positional order CubeLib's grammar expects.

// Standard attributes written first by every CubeW report.
var standardAttrs = []Attr{
	{"CubePL Version", "1.1"},
	{"Cube Version", "4.8.2"},
	{"Cube anchor.xml syntax version", "4.4"},
}

func isStandardAttr(key string) bool {
	for _, a := range standardAttrs {
		if a.Key == key {
			return true
		}
	}
	return false
}

// anchorWriter accumulates anchor.xml text.
type anchorWriter struct {
	bytes.Buffer
}

// encodeAnchor returns the anchor.xml text of r. If its length is a
// multiple of 512, a trailing newline is added so that standard tar
// readers and CubeLib agree on the archive layout.
func encodeAnchor(r *Report) []byte {
	var w anchorWriter
	w.WriteString("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\n")
	w.WriteString("<cube version=\"" + anchorVersion(r) + "\">\n")
	for _, a := range standardAttrs {
		w.attr(a)
	}
	for _, a := range r.Attrs {
		if !isStandardAttr(a.Key) {
			w.attr(a)
		}
	}
	w.WriteString("<doc>\n<mirrors>\n")
	for _, u := range r.Mirrors {
		w.elem("murl", u)
	}
	w.WriteString("</mirrors>\n</doc>\n<metrics>\n")
	for _, m := range r.Metrics {
		w.metric(m)
	}
	w.WriteString("</metrics>\n<program>\n")
	for _, g := range r.Regions {
		w.region(g)
	}
	for _, c := range r.Cnodes {
		w.cnode(c)
	}
	w.WriteString("</program>\n<system>\n")
	for _, n := range r.System {
		w.systemNode(n)
	}
	w.WriteString("<topologies>\n")
	for _, t := range r.Topologies {
		w.cart(t)
	}
	w.WriteString("</topologies>\n</system>\n</cube>\n")
	if w.Len()%blockSize == 0 {
		w.WriteByte('\n')
	}
	return w.Bytes()
}

// anchorVersion is "4.7" when accelerator groups or locations are
// present (as CubeW does) and "4.4" otherwise.
func anchorVersion(r *Report) string {
	for _, l := range r.Locations() {
		if l.Type == LocationGPU || l.Type == LocationAccelerator || l.Group.Type == GroupAccelerator {
			return "4.7"
		}
	}
	return "4.4"
}

// escape replaces the five XML special characters with entities, as
// CubeW does. Line breaks become spaces (CubeLib reads a line break in
// text as a space and cannot read one in an attribute value), and
// characters that XML forbids become U+FFFD.
func escape(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '&':
			b.WriteString("&amp;")
		case r == '<':
			b.WriteString("&lt;")
		case r == '>':
			b.WriteString("&gt;")
		case r == '\'':
			b.WriteString("&apos;")
		case r == '"':
			b.WriteString("&quot;")
		case r == '\n':
			b.WriteString("&#10;") // kept through attribute normalization
		case r == '\r':
			b.WriteString("&#13;")
		case r == '\t':
			b.WriteString("&#9;")
		case r < 0x20 && r != '\t', r == 0xFFFE, r == 0xFFFF:
			b.WriteRune('\uFFFD')
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

func (w *anchorWriter) elem(tag, text string) {
	w.WriteString("<" + tag + ">" + escape(text) + "</" + tag + ">\n")
}

func (w *anchorWriter) attr(a Attr) {
	w.WriteString("<attr key=\"" + escape(a.Key) + "\" value=\"" + escape(a.Value) + "\"/>\n")
}

func (w *anchorWriter) attrs(as []Attr) {
	for _, a := range as {
		w.attr(a)
	}
}

func (w *anchorWriter) metric(m *Metric) {
	w.WriteString("<metric id=\"" + strconv.Itoa(m.ID) + "\" type=\"" + escape(string(m.Type)) + "\"")
	if m.Viz != VizNormal {
		w.WriteString(" viztype=\"" + escape(string(m.Viz)) + "\"")
	}
	w.WriteString(">\n")
	w.elem("disp_name", m.DispName)
	w.elem("uniq_name", m.UniqName)
	w.elem("dtype", string(m.DataType))
	w.elem("uom", m.Unit)
	if m.Val != "" {
		w.elem("val", m.Val)
	}
	w.elem("url", m.URL)
	w.elem("descr", m.Descr)
	if m.Expression != "" {
		w.elem("cubepl", m.Expression)
	}
	if m.InitExpression != "" {
		w.elem("cubeplinit", m.InitExpression)
	}
	if m.AggrExpression != "" {
		w.WriteString("<cubeplaggr cubeplaggrtype=plus>" + escape(m.AggrExpression) + "</cubeplaggr>\n")
	}
	w.attrs(m.Attrs)
	for _, k := range m.Children {
		w.metric(k)
	}
	w.WriteString("</metric>\n")
}

func (w *anchorWriter) region(g *Region) {
	w.WriteString("<region id=\"" + strconv.Itoa(g.ID) + "\" mod=\"" + escape(g.Mod) +
		"\" begin=\"" + strconv.Itoa(g.Begin) + "\" end=\"" + strconv.Itoa(g.End) + "\">\n")
	w.elem("name", g.Name)
	mangled := g.MangledName
	if mangled == "" {
		mangled = g.Name
	}
	w.elem("mangled_name", mangled)
	w.elem("paradigm", g.Paradigm)
	w.elem("role", g.Role)
	w.elem("url", g.URL)
	w.elem("descr", g.Descr)
	w.attrs(g.Attrs)
	w.WriteString("</region>\n")
}

func (w *anchorWriter) cnode(c *Cnode) {
	// Iterative, so that very deep call trees cannot exhaust the stack.
	type frame struct {
		c    *Cnode
		next int
	}
	stack := []frame{{c, -1}}
	for len(stack) > 0 {
		f := &stack[len(stack)-1]
		if f.next < 0 {
			w.cnodeOpen(f.c)
			f.next = 0
		}
		if f.next < len(f.c.Children) {
			k := f.c.Children[f.next]
			f.next++
			stack = append(stack, frame{k, -1})
			continue
		}
		w.WriteString("</cnode>\n")
		stack = stack[:len(stack)-1]
	}
}

func (w *anchorWriter) cnodeOpen(c *Cnode) {
	w.WriteString("<cnode id=\"" + strconv.Itoa(c.ID) + "\" ")
	if c.Line > 0 {
		w.WriteString("line=\"" + strconv.Itoa(c.Line) + "\" ")
	}
	if c.Mod != "" {
		w.WriteString("mod=\"" + escape(c.Mod) + "\" ")
	}
	w.WriteString("calleeId=\"" + strconv.Itoa(c.Region.ID) + "\">\n")
	for _, p := range c.Params {
		value, typ := escape(p.Value), "string"
		if p.Numeric {
			value, typ = strconv.FormatFloat(p.Number, 'g', -1, 64), "numeric"
		}
		w.WriteString("<parameter partype=\"" + typ + "\" parkey=\"" + escape(p.Key) +
			"\" parvalue=\"" + value + "\" />\n")
	}
	w.attrs(c.Attrs)
}

func (w *anchorWriter) systemNode(n *SystemNode) {
	w.WriteString("<systemtreenode Id=\"" + strconv.Itoa(n.ID) + "\">\n")
	w.elem("name", n.Name)
	w.elem("class", n.Class)
	if n.Descr != "" {
		w.elem("descr", n.Descr)
	}
	w.attrs(n.Attrs)
	for _, g := range n.Groups {
		w.WriteString("<locationgroup Id=\"" + strconv.Itoa(g.ID) + "\">\n")
		w.elem("name", g.Name)
		w.elem("rank", strconv.Itoa(g.Rank))
		w.elem("type", string(g.Type))
		w.attrs(g.Attrs)
		for _, l := range g.Locations {
			w.WriteString("<location Id=\"" + strconv.Itoa(l.ID) + "\">\n")
			w.elem("name", l.Name)
			w.elem("rank", strconv.Itoa(l.Rank))
			w.elem("type", string(l.Type))
			w.attrs(l.Attrs)
			w.WriteString("</location>\n")
		}
		w.WriteString("</locationgroup>\n")
	}
	for _, k := range n.Children {
		w.systemNode(k)
	}
	w.WriteString("</systemtreenode>\n")
}

func (w *anchorWriter) cart(t *Cartesian) {
	w.WriteString("<cart ")
	if t.Name != "" {
		w.WriteString("name=\"" + escape(t.Name) + "\" ")
	}
	w.WriteString("ndims=\"" + strconv.Itoa(len(t.Dims)) + "\">\n")
	for _, d := range t.Dims {
		w.WriteString("<dim ")
		if d.Name != "" {
			w.WriteString("name=\"" + escape(d.Name) + "\" ")
		}
		w.WriteString("size=\"" + strconv.Itoa(d.Size) + "\" periodic=\"" + strconv.FormatBool(d.Periodic) + "\"/>\n")
	}
	for _, c := range t.Coords {
		w.WriteString("<coord " + string(c.Kind) + "=\"" + strconv.Itoa(c.ID) + "\">")
		for i, p := range c.Pos {
			if i > 0 {
				w.WriteByte(' ')
			}
			w.WriteString(strconv.Itoa(p))
		}
		w.WriteString("</coord>\n")
	}
	w.WriteString("</cart>\n")
}
