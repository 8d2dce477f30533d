package request

import (
	"net/url"
	"slices"
	"testing"

	"github.com/zrviz/zrviz/core"
)

// TestPlayedFacet: every played op's declaration is consistent — its kind is its engine call's
// name, its form's words are its range rule's — and for every range rule (the whole-file one too,
// which no op of this tree plays yet) the facet's three spellings of a run agree: its ops line
// parses back to the run, its query parses back to the same request, and its words are the rule's
// fields in order.
func TestPlayedFacet(t *testing.T) {
	facets := map[RangeRule]Played{}
	for _, s := range Playable() {
		p := *s.Played
		if p.Op.String() != s.Kind {
			t.Errorf("%s: its engine call is named %q", s.Kind, p.Op)
		}
		if got, ok := PlayedSpec(s.Kind); !ok || got.Kind != s.Kind {
			t.Errorf("PlayedSpec(%q) = %+v, %t", s.Kind, got, ok)
		}
		if r := (Run{Op: p.Op}); r.Kind() != s.Kind || RunOp(r).Kind != s.Kind {
			t.Errorf("%s: Run.Kind %q, RunOp %q", s.Kind, r.Kind(), RunOp(r).Kind)
		}
		if s.Form() != s.Kind+" "+formOf(playedArgs(p)) {
			t.Errorf("%s: form %q, want its facet's words %v", s.Kind, s.Form(), playedArgs(p))
		}
		if !s.walks || s.apply != nil || p.Label == "" || p.Syscall == "" || p.PerDnode == "" {
			t.Errorf("%s: a played op walks, applies nothing, and has its words: %+v", s.Kind, p)
		}
		facets[p.Range] = p
	}
	if _, ok := PlayedSpec(""); !ok {
		t.Error("no default played op")
	}
	if _, ok := PlayedSpec(OpWrite); ok {
		t.Error("a write is not played")
	}
	if _, ok := facets[RangeFile]; !ok {
		facets[RangeFile] = Played{Op: core.Op(200), Range: RangeFile, Label: "whole file", Syscall: "unlink"}
	}
	for _, rule := range RangeRules() {
		p, ok := facets[rule]
		if !ok {
			t.Fatalf("no facet of rule %v", rule)
		}
		for _, keep := range []bool{false, true} {
			r := Run{Op: p.Op, Path: "/a b", Offset: 4096, Length: 8192, HasLength: true, KeepSize: keep, Modes: Both()}
			req := p.request(r, 1<<20)
			// The words: PATH then the rule's, as parsePlayed reads them.
			w := p.words(r.Path, req)
			if n := 1 + len(rule.Fields()); len(w) != n+boolInt(p.KeepSize && keep) {
				t.Errorf("%v: words %q", rule, w)
			}
			var back Op
			if err := parsePlayed(p, &back, w); err != nil || p.request(back.Run, 1<<20) != req {
				t.Errorf("%v: words %q parse to %+v (%v), want the request %+v", rule, w, back.Run, err, req)
			}
			// The query: its fields are the facet's, and parse to the same request.
			q := url.Values{}
			p.Query(req, q.Set)
			for k := range q {
				if k != FieldOp && !slices.Contains(p.Fields(), k) {
					t.Errorf("%v: query field %q is not among %v", rule, k, p.Fields())
				}
			}
			got := Run{Op: p.Op, Path: r.Path}
			if err := p.parseQuery(&got, q.Get); err != nil || p.request(got, 1<<20) != req {
				t.Errorf("%v: query %v parses to %+v (%v), want the request %+v", rule, q, got, err, req)
			}
			if p.Crumb(req) == "" || p.Sentence(r.Path, req) == "" || p.Describe(req) == "" {
				t.Errorf("%v: no words", rule)
			}
		}
	}
}

func formOf(a []Arg) string { return OpSpec{Args: a}.Form()[1:] }

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestParsePlayedQuery: the query grammar of each played op — the op's own fields read, the others
// ignored, a size required, an unknown op refused naming the played ones.
func TestParsePlayedQuery(t *testing.T) {
	get := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	r, err := Parse(get(map[string]string{"path": "/a", "op": "punch", "offset": "4096", "length": "8192", "keepSize": "true", "size": "1"}))
	if err != nil || r.Op != core.OpPunch || r.KeepSize || r.Request(0) != (core.Request{Op: core.OpPunch, Offset: 4096, Length: 8192}) {
		t.Errorf("punch: %+v, %v", r, err)
	}
	r, err = Parse(get(map[string]string{"path": "/a", "op": "truncate", "size": "1MiB", "offset": "7", "keepSize": "true"}))
	if err != nil || r.Request(0) != (core.Request{Op: core.OpTruncate, Offset: 1 << 20}) {
		t.Errorf("truncate: %+v, %v", r, err)
	}
	if _, err := Parse(get(map[string]string{"path": "/a", "op": "truncate"})); err == nil {
		t.Error("truncate without a size parsed")
	}
	_, err = Parse(get(map[string]string{"path": "/a", "op": "write"}))
	if fe, ok := err.(*FieldError); !ok || fe.Field != FieldOp || fe.Msg != "want zero, punch, truncate or unlink" {
		t.Errorf("op=write: %v", err)
	}
}
