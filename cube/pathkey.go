package cube

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// Call-path keys. A call path is written in the canonical CSV (and
// compared with reference results) as the names of its regions from the
// root, joined by "/". So that every key is unique and names one call
// path only:
//
//   - a name is first made what a report can store (as the report writer
//     does): invalid UTF-8 and control characters other than tab, newline
//     and carriage return become U+FFFD;
//   - then '\', '/' and '#' are written "\\", "\/" and "\#", and tab,
//     newline and carriage return "\t", "\n" and "\r";
//   - among the children of one call path, the second and later with the
//     same escaped name (two static functions of one name, say) get
//     "#2", "#3", … in the order of the call tree.
//
// Names without those characters, as every reference trace has, are
// their own keys.

// KeyName returns region name as an element of a call-path key, without
// the suffix that tells apart siblings of one name.
func KeyName(name string) string {
	name = storable(name)
	if !strings.ContainsAny(name, "\\/#\t\n\r") {
		return name
	}
	var b strings.Builder
	for _, r := range name {
		switch r {
		case '\\', '/', '#':
			b.WriteByte('\\')
			b.WriteRune(r)
		case '\t':
			b.WriteString(`\t`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// storable returns s as a report stores it: invalid UTF-8, control
// characters other than tab, newline and carriage return, and the
// non-characters U+FFFE and U+FFFF replaced by U+FFFD.
func storable(s string) string {
	ok := utf8.ValidString(s)
	for i := 0; ok && i < len(s); i++ {
		if c := s[i]; c < 0x20 && c != '\t' && c != '\n' && c != '\r' {
			ok = false
		}
	}
	if ok && !strings.ContainsAny(s, "\uFFFE\uFFFF") {
		return s
	}
	var b strings.Builder
	for _, r := range s { // invalid bytes come as U+FFFD
		if (r < 0x20 && r != '\t' && r != '\n' && r != '\r') || r == 0xFFFE || r == 0xFFFF {
			r = utf8.RuneError
		}
		b.WriteRune(r)
	}
	return b.String()
}

// PathKeys returns the key of every node of a tree: parent[i] is node
// i's parent (-1 for a root; parents come before their children) and
// name[i] its region's name; children are in the order of their ids.
func PathKeys(parent []int, name []string) []string {
	keys := make([]string, len(parent))
	type sib struct {
		parent int
		elem   string
	}
	seen := make(map[sib]int, len(parent))
	for i, p := range parent {
		e := KeyName(name[i])
		k := sib{p, e}
		seen[k]++
		if n := seen[k]; n > 1 {
			e += "#" + strconv.Itoa(n)
		}
		if p < 0 {
			keys[i] = e
		} else {
			keys[i] = keys[p] + "/" + e
		}
	}
	return keys
}
