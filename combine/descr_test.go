package combine

import (
	"html"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"

	"scout/cube"
	"scout/internal/tracetest"
	"scout/patterns"
)

// ourDescriptions returns every metric description scout declares: the
// patterns' catalog and the derived tree, by unique name.
func ourDescriptions() map[string]string {
	out := map[string]string{}
	for _, m := range patterns.Catalog {
		out[m.Name] = m.Descr
	}
	for _, m := range MetricTree() {
		out[m.Unique] = m.Descr
	}
	return out
}

// TestDescriptionStyle: every description is one sentence that starts
// with a capital letter and ends with a period.
func TestDescriptionStyle(t *testing.T) {
	for name, d := range ourDescriptions() {
		switch r := []rune(d); {
		case d == "":
			t.Errorf("%s: no description", name)
		case !unicode.IsUpper(r[0]):
			t.Errorf("%s: description %q does not start with a capital letter", name, d)
		case !strings.HasSuffix(d, "."):
			t.Errorf("%s: description %q does not end with a period", name, d)
		case strings.Contains(strings.TrimSuffix(d, "."), ". "), strings.ContainsAny(d, "\n;"):
			t.Errorf("%s: description %q is more than one sentence", name, d)
		}
	}
}

// TestDescriptionsAreOurOwn: no description of ours repeats, or nearly
// repeats, the description the reference (Scalasca) gives any metric in
// its reports: the metrics of their anchor.xml and those of the remapping
// specification they store in the archive, over every reference report
// of ../shared (MPI and hybrid MPI+OpenMP traces, in traces,
// traces-clc and traces-hybrid). It needs ../shared.
func TestDescriptionsAreOurOwn(t *testing.T) {
	dir := tracetest.SharedDir()
	if dir == "" {
		t.Skip("../shared/traces is absent")
	}
	path := filepath.Join(dir, "ps_mixed_np4", "expected", "scout.cubex")
	r, err := cube.ReadFile(path)
	if err != nil {
		t.Skipf("reference report: %v", err)
	}
	seen := map[string]bool{}
	var refs []string
	addRefs := func(r *cube.Report) {
		add := func(d string) {
			if !seen[d] {
				seen[d] = true
				refs = append(refs, d)
			}
		}
		for _, m := range r.AllMetrics() {
			add(m.Descr)
		}
		descr := regexp.MustCompile(`(?s)<descr>(.*?)</descr>`)
		for _, f := range r.Misc {
			if strings.HasSuffix(f.Name, ".spec") {
				for _, m := range descr.FindAllSubmatch(f.Data, -1) {
					add(html.UnescapeString(string(m[1])))
				}
			}
		}
	}
	addRefs(r)
	if len(refs) < 50 {
		t.Fatalf("%s: only %d reference descriptions", path, len(refs))
	}
	others, err := filepath.Glob(filepath.Join(filepath.Dir(dir), "traces*", "*", "expected*", "scout.cubex"))
	if err != nil {
		t.Fatal(err)
	}
	hybrid := 0
	for _, p := range others {
		if p == path {
			continue
		}
		r, err := cube.ReadFile(p)
		if err != nil {
			t.Fatalf("reference report: %v", err)
		}
		addRefs(r)
		if strings.Contains(p, "traces-hybrid") {
			hybrid++
		}
	}
	if hybrid == 0 {
		t.Logf("no reference report of a hybrid trace: OpenMP metrics checked against the remapping specification only")
	}
	for name, ours := range ourDescriptions() {
		o := normalizeDescr(ours)
		for _, ref := range refs {
			n := normalizeDescr(ref)
			if n == "" {
				continue
			}
			if why := tooClose(o, n); why != "" {
				t.Errorf("%s: description %q is %s the reference's %q", name, ours, why, ref)
			}
		}
	}
}

// normalizeDescr lower-cases s, turns punctuation into spaces and
// collapses runs of spaces.
func normalizeDescr(s string) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			return unicode.ToLower(r)
		}
		return ' '
	}, s)
	return strings.Join(strings.Fields(s), " ")
}

// tooClose tells how normalized description a copies b, or "" when it
// does not: the same words (in any order), one containing the other
// when the shorter has four words or more, or an edit distance below
// 0.3 of the longer one's length.
func tooClose(a, b string) string {
	wa, wb := strings.Fields(a), strings.Fields(b)
	if sameWords(wa, wb) {
		return "the same words as"
	}
	short, long := a, b
	if len(wb) < len(wa) {
		short, long = b, a
	}
	if len(strings.Fields(short)) >= 4 && strings.Contains(" "+long+" ", " "+short+" ") {
		return "contained in or containing"
	}
	if d := float64(editDistance(a, b)) / float64(max(len([]rune(a)), len([]rune(b)))); d < 0.3 {
		return "a near copy of"
	}
	return ""
}

func sameWords(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	count := map[string]int{}
	for _, w := range a {
		count[w]++
	}
	for _, w := range b {
		count[w]--
		if count[w] < 0 {
			return false
		}
	}
	return true
}

// editDistance is the Levenshtein distance between a and b in runes.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev, cur := make([]int, len(rb)+1), make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			c := prev[j-1]
			if ra[i-1] != rb[j-1] {
				c++
			}
			cur[j] = min(c, prev[j]+1, cur[j-1]+1)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}

// TestTooClose: the similarity check catches copies and near copies and
// lets fresh sentences pass.
func TestTooClose(t *testing.T) {
	ref := normalizeDescr("Time in MPI point-to-point receive operation waiting for a message")
	for _, c := range []struct {
		ours string
		bad  bool
	}{
		{"Time in MPI point-to-point receive operation waiting for a message.", true},
		{"time in mpi point to point receive operations waiting for messages", true},
		{"Waiting for a message: time in MPI point-to-point receive operation.", true},
		{"Time in MPI point-to-point receive operation waiting for a message, per rank.", true},
		{"Time a blocking receive idles because the matching send started late.", false},
	} {
		if got := tooClose(normalizeDescr(c.ours), ref) != ""; got != c.bad {
			t.Errorf("tooClose(%q) = %v, want %v", c.ours, got, c.bad)
		}
	}
}
