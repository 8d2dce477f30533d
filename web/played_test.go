package web

import (
	"context"
	"encoding/csv"
	"flag"
	"html"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/zrviz/zrviz/core"
	"github.com/zrviz/zrviz/request"
	"github.com/zrviz/zrviz/source"
)

// playedFixtures names, for each played operation, a kernel-seq case on the demo whose one
// operation is that call, with the stock and the batched kernel's after-images: what
// TestPlayedViews holds every view of the call to. A new playable op adds its case here (the
// oracle's guest helper runs it), or the test fails.
var playedFixtures = map[string]string{
	request.OpZero:     "x7-zero-holes", // zero /cases/holes.bin 131072 524288
	request.OpPunch:    "p3-unaligned",  // punch /cases/contiguous.bin 5000 1000000
	request.OpTruncate: "t5-unaligned",  // truncate /cases/contiguous.bin 1000000
	request.OpUnlink:   "u2-fragmented", // unlink /cases/fragmented.bin
}

// playedFixture reads the case's one operation.
func playedFixture(t *testing.T, kind string) (dir string, op request.Op) {
	t.Helper()
	name, ok := playedFixtures[kind]
	if !ok {
		t.Fatalf("the played op %q has no kernel fixture in playedFixtures: every playable op is checked against the kernel's after-image", kind)
	}
	dir = filepath.Join(kernelSeqDir, name)
	b, err := os.ReadFile(filepath.Join(dir, "ops"))
	if err != nil {
		t.Fatal(err)
	}
	ops, err := request.ParseOps(strings.NewReader(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	if len(ops) != 1 || ops[0].Kind != kind {
		t.Fatalf("%s: want one %s, got %+v", dir, kind, ops)
	}
	return dir, ops[0]
}

// playedQuery is the run query of op, as its declaration writes it (request.Played.Query).
func playedQuery(op request.Op, mode string) url.Values {
	q := url.Values{request.FieldPath: {op.Path}, request.FieldMode: {mode}}
	op.Run.Played().Query(op.Request(0), q.Set)
	return q
}

// asKind is the run of op played as another call kind over the same bytes: a range's offset and
// length, or a size rule's size as the offset and the end of the file as the range.
func asKind(op request.Op, kind string) request.Op {
	s, _ := request.PlayedSpec(kind)
	r := op.Run
	r.Op, r.KeepSize = s.Played.Op, false
	if from := op.Run.Played().Range; from != request.RangeOffsetLength && s.Played.Range == request.RangeOffsetLength {
		// From the size (0 for the whole file) to the end of the file.
		r.Offset, r.HasLength, r.Length = op.Request(0).Offset, false, 0
	}
	return request.Op{Kind: kind, Run: r}
}

// TestPlayedViews (issue 36) walks the registry: for every playable op and every view of a run —
// the query's grammar, the run page, the page contract, the run API and its CSV, the after-check,
// the writeback panel, the next panel, the compare page — the view names that op and plays it.
// Each op's kernel after-image (stock and batched) agrees with the after-check of the run that
// plays it, and not with the same bytes played as another call (a punch's or a truncate's
// after-image is not a zero's of the same range, nor a zero's a punch's).
func TestPlayedViews(t *testing.T) {
	ts := mustOpenServer(t, Config{})
	contract := newPageContract()
	playable := request.Playable()
	if len(playable) == 0 || playable[0].Kind != request.OpZero {
		t.Fatalf("the first playable op is the query's default, a zero: %+v", playable)
	}
	for _, s := range playable {
		p := *s.Played
		t.Run(s.Kind, func(t *testing.T) {
			if p.Op.String() != s.Kind {
				t.Errorf("the engine's call %v is not named %q", p.Op, s.Kind)
			}
			dir, op := playedFixture(t, s.Kind)
			line := op.OpLine(0)
			q := playedQuery(op, "both")

			// The grammar: the query parses to the run of the op's line.
			run, err := request.Parse(q.Get)
			if err != nil || run.Kind() != s.Kind || request.RunOp(run).OpLine(0) != line {
				t.Errorf("grammar: %v parses to %+v (%v): kind %q, line %q; want %q", q, run, err, run.Kind(), request.RunOp(run).OpLine(0), line)
			}
			if back, err := request.ParseOp(line); err != nil || back.Kind != s.Kind {
				t.Errorf("ops language: %q parses to %+v, %v", line, back, err)
			}

			// The contract the page's modules read.
			i := slices.IndexFunc(contract.Played, func(c contractPlayed) bool { return c.Kind == s.Kind })
			if i < 0 || contract.Ops[s.Kind] != s.Kind {
				t.Errorf("contract: %s is not among %+v", s.Kind, contract.Played)
			} else if c := contract.Played[i]; !slices.Equal(c.Fields, p.Fields()) || c.Label != p.Label || c.Range != p.Range.String() {
				t.Errorf("contract: %+v, want the declaration's %+v", c, p)
			}

			// The run page: its data-op, its crumb and its heading name the call.
			page := getBody(t, ts, "/images/demo/run?"+q.Encode())
			target, err := ts.resolveRun(context.Background(), withImage(q))
			if err != nil {
				t.Fatal(err)
			}
			req := target.spec.Request
			if !strings.Contains(page, `data-op="`+s.Kind+`"`) {
				t.Errorf("run page: no data-op %q", s.Kind)
			}
			for _, want := range []string{p.Crumb(req), p.Sentence(op.Path, req)} {
				if !strings.Contains(page, html.EscapeString(want)) {
					t.Errorf("run page: no %q", want)
				}
			}

			// The run API names the call; its CSV has the calls of the same walk.
			var body struct {
				Op      string `json:"op"`
				Size    *int64 `json:"size"`
				Results []struct {
					Mode  string `json:"mode"`
					Stats struct {
						Calls uint64 `json:"calls"`
					} `json:"stats"`
				} `json:"results"`
			}
			if code := ts.get(t, "/api/images/demo/run?"+q.Encode(), &body); code != http.StatusOK || body.Op != s.Kind || (body.Size != nil) != (p.Range == request.RangeToSize) {
				t.Errorf("run API: %d, op %q, size %v", code, body.Op, body.Size)
			}
			rows := csvRows(t, ts, "/api/images/demo/run?"+q.Encode()+"&format=csv")
			for _, r := range body.Results {
				if got := rows[r.Mode]; uint64(got) != r.Stats.Calls || got == 0 {
					t.Errorf("CSV: %d rows of %s, the API's %s walk makes %d calls", got, r.Mode, s.Kind, r.Stats.Calls)
				}
			}

			// The writeback panel plays the op as its last operation before the unmount.
			var wb struct {
				Groups []wbGroup `json:"groups"`
			}
			if code := ts.get(t, "/api/images/demo/writeback?"+q.Encode(), &wb); code != http.StatusOK {
				t.Errorf("writeback: status %d", code)
			} else if g := wb.Groups[slices.IndexFunc(wb.Groups, func(g wbGroup) bool { return g.Played })]; g.Kind != s.Kind || g.Line != request.RunOp(target.run).OpLine(target.spec.Input.Inode.Size) {
				t.Errorf("writeback: the played group is %q %q, want %s", g.Kind, g.Line, line)
			}

			// The next panel's state is the op's: the same SIT as a fresh mount that runs its line.
			st, err := ts.afterRun(context.Background(), target, 0)
			if err != nil {
				t.Fatal(err)
			}
			fresh, err := source.NewSeq(context.Background(), target.si.Image, core.PerBlock)
			if err != nil {
				t.Fatal(err)
			}
			ops, _ := request.ParseOps(strings.NewReader(line))
			if err := source.RunOps(context.Background(), fresh, target.si.Image, ops, nil); err != nil {
				t.Fatal(err)
			}
			want := fresh.GCState()
			for seg := range st.Segments() {
				a, ab, _ := st.SegmentValidMap(seg)
				b, bb, _ := want.SegmentValidMap(seg)
				if a != b || ab != bb {
					t.Fatalf("next: segment %d has %d valid blocks after the view's run, %d after %q", seg, a, b, line)
				}
			}

			// The compare page shows the op as a side when its declaration says so.
			if p.Compare {
				cq := url.Values{"image": {"demo"}, request.FieldPath: {op.Path}}
				cmp := getBody(t, ts, "/compare?"+cq.Encode())
				if !strings.Contains(cmp, `data-op="`+s.Kind+`"`) || !strings.Contains(cmp, html.EscapeString(p.Label)) {
					t.Errorf("compare: no side for %s", s.Kind)
				}
				if i := strings.Index(cmp, "<h1>"); i < 0 || !strings.Contains(strings.ToLower(cmp[i:i+100]), p.Label) {
					t.Errorf("compare: the heading does not name %q", p.Label)
				}
			}

			// The after-check plays the op: the kernel's after-image of it agrees in both modes;
			// the same bytes played as another call do not.
			others := []string{}
			for _, o := range playable {
				if o.Kind != s.Kind && (o.Kind == request.OpZero || s.Kind == request.OpZero && o.Played.Range == p.Range) {
					others = append(others, o.Kind)
				}
			}
			if len(others) == 0 {
				t.Fatalf("no other call to hold %s's after-image against", s.Kind)
			}
			for _, m := range []struct{ mode, img string }{{"per-block", "after.img.zst"}, {"batched", "after.batched.img.zst"}} {
				id := s.Kind + "-" + m.mode
				addKernelImage(t, ts, id, filepath.Join(dir, m.img), nil)
				code, ac, msg := afterCheck(t, ts, id, playedQuery(op, m.mode))
				if code != http.StatusOK || len(ac.Modes) != 1 {
					t.Fatalf("after-check %s: status %d: %s %+v", m.mode, code, msg, ac.Modes)
				}
				if len(ac.Ops) != 1 || ac.Ops[0] != request.RunOp(target.run).OpLine(target.spec.Input.Inode.Size) {
					t.Errorf("after-check %s: ops %q, want the played %s", m.mode, ac.Ops, line)
				}
				if rep := ac.Modes[0]; !rep.Agree || rep.Total != 0 {
					t.Errorf("after-check %s: the kernel's after-image of %q: %d differences, first %+v", m.mode, line, rep.Total, rep.Differences[:min(3, len(rep.Differences))])
				}
				for _, k := range others {
					other := asKind(op, k)
					code, ac, msg := afterCheck(t, ts, id, playedQuery(other, m.mode))
					if code != http.StatusOK || len(ac.Modes) != 1 || len(ac.Ops) != 1 || !strings.HasPrefix(ac.Ops[0], k+" ") {
						t.Fatalf("after-check %s as %s: status %d: %s, ops %q", m.mode, k, code, msg, ac.Ops)
					}
					if rep := ac.Modes[0]; rep.Agree || rep.Total == 0 {
						t.Errorf("after-check %s: the kernel's after-image of %q agrees with %q", m.mode, line, ac.Ops[0])
					}
				}
			}
		})
	}
}

// withImage is q with the demo's image field, as the API's run routes set it.
func withImage(q url.Values) url.Values {
	c := cloneValues(q)
	c.Set("image", "demo")
	return c
}

// getBody fetches a page that must answer 200.
func getBody(t *testing.T, ts *testServer, path string) string {
	t.Helper()
	res, err := http.Get(ts.ts.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d, %v\n%.500s", path, res.StatusCode, err, b)
	}
	return string(b)
}

// csvRows counts the CSV's rows by mode.
func csvRows(t *testing.T, ts *testServer, path string) map[string]int {
	t.Helper()
	recs, err := csv.NewReader(strings.NewReader(getBody(t, ts, path))).ReadAll()
	if err != nil || len(recs) == 0 || strings.Join(recs[0], ",") != core.CallsCSVHeader {
		t.Fatalf("CSV: %v, %d records", err, len(recs))
	}
	n := map[string]int{}
	for _, r := range recs[1:] {
		n[r[0]]++
	}
	return n
}

var writePlayed = flag.Bool("played-vectors", false, "write static/jstest/testdata/played.json (the node tests hold chain.js's and links.js's played lines and queries to it)")

// TestPlayedVectors writes what Go makes of runs of every playable op — their ops line
// (request.Run.OpLine) and their run query (request.Played.Query) — for the node tests
// (static/jstest/played.test.js), which hold the JS's lines and queries, built from the page
// contract's played list, to them. It fails when the file is stale; -played-vectors rewrites it.
func TestPlayedVectors(t *testing.T) {
	type vector struct {
		Run   map[string]any    `json:"run"` // as the hello's run carries it
		Line  string            `json:"line"`
		Query map[string]string `json:"query"`
	}
	var out []vector
	for _, s := range request.Playable() {
		for _, keep := range []bool{false, true} {
			r := request.Run{Op: s.Played.Op, Path: "/a/b.bin", Offset: 4096, Length: 1 << 20, HasLength: true, KeepSize: keep}
			req := r.Request(0)
			run := map[string]any{"op": s.Kind, "path": r.Path, "offset": "4096", "length": "1048576", "keepSize": keep}
			if s.Played.Range == request.RangeFile {
				run["offset"], run["length"] = "0", "" // a whole-file call's hello: no range
			}
			v := vector{Run: run,
				Line: r.OpLine(0), Query: map[string]string{request.FieldPath: r.Path}}
			s.Played.Query(req, func(k, val string) { v.Query[k] = val })
			if s.Kind == request.OpZero {
				delete(v.Query, request.FieldOp) // the default: the JS leaves it out, as request.Parse reads it
			}
			out = append(out, v)
		}
	}
	checkVectors(t, "../static/jstest/testdata/played.json", map[string]any{
		"comment": "written by go test ./web -run TestPlayedVectors -played-vectors: every playable op's ops line and run query as Go writes them",
		"vectors": out,
	}, *writePlayed, "go test ./web -run TestPlayedVectors -played-vectors")
}
