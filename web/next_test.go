package web

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"testing"

	"github.com/zrviz/zrviz/internal/testutil"

	"github.com/zrviz/zrviz/core"
	"github.com/zrviz/zrviz/imgio"
	"github.com/zrviz/zrviz/request"
	"github.com/zrviz/zrviz/source"
)

// nextRun is the demo's whole-file run of /seed/bench64.bin: it leaves 32 segments prefree and
// three dirty.
const nextRun = "path=/seed/bench64.bin&offset=0&length=67108864"

func nextGet(t *testing.T, ts *testServer, query string) (nextBody, int) {
	t.Helper()
	var b nextBody
	code := ts.get(t, "/api/images/demo/next?"+query, &b)
	return b, code
}

// TestNextAPI: the timeline after the run begins with the run's state and a checkpoint that frees
// its prefree segments; each call's search ranks candidates without naming the victim, the victim
// frame names it (the cheapest), the move frame leaves it prefree; the quiz veils the ranking.
func TestNextAPI(t *testing.T) {
	t.Parallel()
	ts := mustOpenServer(t, Config{})
	b, code := nextGet(t, ts, nextRun)
	if code != 200 || b.At != 0 || b.Frame.Kind != "start" || b.Policy != "greedy" || b.Call != "gc 1" {
		t.Fatalf("status %d, body %+v", code, b.Frame)
	}
	pre := strings.Count(b.Frame.Classes, "p")
	if pre == 0 || b.Segments != len(b.Frame.Classes) || len(b.Frame.Valid) != b.Segments {
		t.Fatalf("start: %d prefree of %d segments (%d valid counts)", pre, b.Segments, len(b.Frame.Valid))
	}
	if len(b.Frames) < 5 || b.Frames[1].Kind != "checkpoint" {
		t.Fatalf("frames %+v", b.Frames)
	}
	ck, _ := nextGet(t, ts, nextRun+"&at=1")
	if len(ck.Frame.Freed) != pre || strings.Count(ck.Frame.Classes, "p") != 0 {
		t.Errorf("checkpoint freed %d segments, %d left prefree; the run left %d", len(ck.Frame.Freed), strings.Count(ck.Frame.Classes, "p"), pre)
	}
	for _, seg := range ck.Frame.Freed {
		if b.Frame.Classes[seg] != 'p' || ck.Frame.Classes[seg] != 'f' {
			t.Errorf("segment %d: %c before the checkpoint, %c after; want p then f", seg, b.Frame.Classes[seg], ck.Frame.Classes[seg])
		}
	}
	rounds, asked := 0, 0
	for k, h := range b.Frames {
		if h.Kind != "search" {
			continue
		}
		rounds++
		s, _ := nextGet(t, ts, fmt.Sprintf("%s&at=%d", nextRun, k))
		v, _ := nextGet(t, ts, fmt.Sprintf("%s&at=%d", nextRun, k+1))
		m, _ := nextGet(t, ts, fmt.Sprintf("%s&at=%d", nextRun, k+2))
		if s.Frame.Victim != nil || len(s.Frame.Candidates) == 0 || s.Frame.Other == nil || s.Frame.Other.Policy != "cost-benefit" {
			t.Fatalf("search frame %d: victim %v, %d candidates, other %+v", k, s.Frame.Victim, len(s.Frame.Candidates), s.Frame.Other)
		}
		for i, c := range s.Frame.Candidates {
			if c.Rank != i+1 || c.Cost == nil || *c.Cost != c.Valid || i > 0 && *c.Cost < *s.Frame.Candidates[i-1].Cost {
				t.Errorf("search frame %d candidate %d: %+v: want ranked by greedy cost (valid blocks)", k, i, c)
			}
		}
		if v.Frame.Kind != "victim" || v.Frame.Victim == nil || *v.Frame.Victim != s.Frame.Candidates[0].Segno {
			t.Fatalf("victim frame %d: %+v, want the cheapest candidate %d", k+1, v.Frame.Victim, s.Frame.Candidates[0].Segno)
		}
		vs := *v.Frame.Victim
		if v.Frame.Classes != s.Frame.Classes || s.Frame.Classes[vs] != 'd' {
			t.Errorf("victim frame %d: the map changed before the moves, or the victim %d was %c", k+1, vs, s.Frame.Classes[vs])
		}
		moved := 0
		for _, mv := range m.Frame.Moves {
			moved += mv.Count
			if mv.From != vs || mv.Log != 2 && mv.Log < 3 {
				t.Errorf("move frame %d: %+v, want from %d to the cold data log or a node log", k+2, mv, vs)
			}
		}
		if m.Frame.Classes[vs] != 'p' || moved != int(s.Frame.Valid[vs]) || m.Frame.Valid[vs] != 0 {
			t.Errorf("move frame %d: victim %d is %c with %d valid, %d moved of %d", k+2, vs, m.Frame.Classes[vs], m.Frame.Valid[vs], moved, s.Frame.Valid[vs])
		}
		// The quiz asks at the first calls with a choice: the candidates in segment order, no
		// ranking or cost.
		if s.Frame.Round > maxNextQuestions || len(s.Frame.Candidates) < 2 {
			continue
		}
		asked++
		qz, _ := nextGet(t, ts, fmt.Sprintf("%s&at=%d&quiz=1", nextRun, k))
		if !qz.Frame.Veiled || qz.Frame.Other != nil || qz.Frame.Victim != nil || strings.Contains(qz.Frame.Narration, "cheapest first") {
			t.Errorf("quiz at frame %d: veiled %v, other %v, narration %q", k, qz.Frame.Veiled, qz.Frame.Other, qz.Frame.Narration)
		}
		checkVeiledTerms(t, k, qz.Frame.Candidates, s.Frame.Candidates)
	}
	if asked == 0 {
		t.Error("no question asked")
	}
	if late, code := nextGet(t, ts, nextRun+"&at=999"); code != 200 || late.At != len(b.Frames)-1 || late.Frame.Kind != b.Frames[len(b.Frames)-1].Kind {
		t.Errorf("at=999: status %d, frame %d (%s), want the last, %d", code, late.At, late.Frame.Kind, len(b.Frames)-1)
	}
	if rounds == 0 || b.Frames[len(b.Frames)-1].Kind != "none" {
		t.Errorf("%d calls; last frame %s, want the timeline to end at ENODATA", rounds, b.Frames[len(b.Frames)-1].Kind)
	}
	// Cost-benefit's question shows the terms it weighs, age among them (issue 30).
	cbAsked := 0
	cbRun, _ := nextGet(t, ts, nextRun+"&policy=cost-benefit")
	for k, h := range cbRun.Frames {
		if h.Kind != "search" || cbAsked > 0 {
			continue
		}
		s, _ := nextGet(t, ts, fmt.Sprintf("%s&policy=cost-benefit&at=%d", nextRun, k))
		if s.Frame.Round > maxNextQuestions || len(s.Frame.Candidates) < 2 {
			continue
		}
		qz, _ := nextGet(t, ts, fmt.Sprintf("%s&policy=cost-benefit&at=%d&quiz=1", nextRun, k))
		if !qz.Frame.Veiled {
			t.Errorf("cost-benefit quiz at frame %d: not veiled", k)
		}
		checkVeiledTerms(t, k, qz.Frame.Candidates, s.Frame.Candidates)
		cbAsked++
	}
	if cbAsked == 0 {
		t.Error("no cost-benefit question asked")
	}
	// Cost-benefit: background calls mark, the sync after each moves and frees.
	cb, _ := nextGet(t, ts, nextRun+"&policy=cost-benefit&at=3")
	if cb.Call != "gc 0" || cb.Frame.Kind != "victim" || cb.Frame.Victim == nil || len(cb.Frame.Marked) != 1 || cb.Frame.Marked[0] != *cb.Frame.Victim {
		t.Fatalf("cost-benefit victim frame: %+v", cb.Frame)
	}
	sy, _ := nextGet(t, ts, nextRun+"&policy=cost-benefit&at=4")
	if sy.Frame.Kind != "sync" || sy.Frame.Classes[*cb.Frame.Victim] != 'f' || len(sy.Frame.Moves) == 0 {
		t.Errorf("cost-benefit sync frame: %s, victim %c, %d move runs", sy.Frame.Kind, sy.Frame.Classes[*cb.Frame.Victim], len(sy.Frame.Moves))
	}
	for _, bad := range []string{nextRun + "&policy=lru", nextRun + "&now=-1", nextRun + "&at=x",
		"path=/nope&offset=0&length=4096"} {
		var e errorBody
		if code := ts.get(t, "/api/images/demo/next?"+bad, &e); code/100 != 4 || e.Error == "" {
			t.Errorf("GET next?%s = %d %q, want a 4xx with a reason", bad, code, e.Error)
		}
	}
}

// TestNextAfterEarlierOps: the panel starts from what the earlier operations and the run leave: a
// zero range of the first 32 MiB then a sync free its segments before the run (of the rest) starts,
// so the run's start frame has only the run's own prefree segments; and on the last, the two zero
// ranges together leave what the whole-file run leaves, once checkpointed.
func TestNextAfterEarlierOps(t *testing.T) {
	t.Parallel()
	ts := mustOpenServer(t, Config{})
	whole, _ := nextGet(t, ts, nextRun)
	first := "before=" + url.QueryEscape("zero /seed/bench64.bin 0 33554432")
	half, code := nextGet(t, ts, first+"&path=/seed/bench64.bin&offset=33554432&length=33554432")
	synced, code2 := nextGet(t, ts, first+"&before=sync&path=/seed/bench64.bin&offset=33554432&length=33554432")
	if code != 200 || code2 != 200 {
		t.Fatalf("status %d, %d", code, code2)
	}
	p := func(b nextBody) int { return strings.Count(b.Frame.Classes, "p") }
	if p(half) != p(whole) || p(synced) == 0 || p(synced) >= p(whole) {
		t.Errorf("prefree at the start: whole file %d, two halves %d, two halves with a sync between %d", p(whole), p(half), p(synced))
	}
	// After the checkpoint the three agree: the same segments are free.
	a, _ := nextGet(t, ts, nextRun+"&at=1")
	b, _ := nextGet(t, ts, first+"&before=sync&path=/seed/bench64.bin&offset=33554432&length=33554432&at=1")
	if a.Frame.Classes != b.Frame.Classes {
		t.Errorf("after the checkpoint the maps differ:\n%s\n%s", a.Frame.Classes, b.Frame.Classes)
	}
}

// TestNextAfterWrites: after earlier writes, fsyncs, syncs and gc, the panel starts from the segment
// manager of one mount that ran them and the run (source.NewSeq, per block), block for block: every
// segment's class and valid count at the start frame are that state's. The writes' blocks change
// the map: each list writes past the run, so blocks it leaves valid (the test fails if the panel
// left them out).
func TestNextAfterWrites(t *testing.T) {
	t.Parallel()
	ts := mustOpenServer(t, Config{})
	img, err := imgio.OpenFileContext(context.Background(), testutil.DemoImage(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { img.Close() })
	whole, _ := nextGet(t, ts, nextRun)
	for _, ops := range [][]string{
		{"write /seed/bench64.bin 0 40960", "write /seed/bench64.bin 67108864 40960", "fsync /seed/bench64.bin"},
		{"write /seed/bench64.bin 4096 8192", "sync", "gc 1", "write /seed/bench64.bin 70000000 4096", "fsync /seed/bench64.bin"},
	} {
		q := nextRun
		for _, op := range ops {
			q += "&before=" + url.QueryEscape(op)
		}
		got, code := nextGet(t, ts, q)
		if code != 200 {
			t.Fatalf("%v: status %d", ops, code)
		}
		seq, err := source.NewSeq(context.Background(), img, core.PerBlock)
		if err != nil {
			t.Fatal(err)
		}
		base, err := source.Input(img, "/seed/bench64.bin")
		if err != nil {
			t.Fatal(err)
		}
		parsed, err := request.ParseOps(strings.NewReader(strings.Join(append(ops, "zero /seed/bench64.bin 0 67108864"), "\n")))
		if err != nil {
			t.Fatal(err)
		}
		for _, op := range parsed {
			if op.IsZero() {
				_, _, _, err = seq.Zero(base, op.Request(seq.File(base).Inode.Size))
			} else {
				_, err = op.ApplyOther(seq, base)
			}
			if err != nil {
				t.Fatalf("%s: %v", op.OpLine(0), err)
			}
		}
		want := seq.GCState().Snap()
		if got.Frame.Classes != want.Classes || !reflect.DeepEqual(got.Frame.Valid, want.Valid) {
			t.Errorf("%v: the start frame is not the mount's state:\n got %s\nwant %s", ops, got.Frame.Classes, want.Classes)
		}
		if reflect.DeepEqual(got.Frame.Valid, whole.Frame.Valid) {
			t.Errorf("%v: the map is the run's alone; the writes left no block", ops)
		}
	}
}

// TestNextAnyPathIsAFreshLoad is the player's truth property for the timeline: a random path of
// the panel's actions (step, back, seek, home, end, a policy or clock change, the quiz) on one
// server, whose timelines are cached from earlier requests, shows at every position what a fresh
// server, asked once for that position, shows.
func TestNextAnyPathIsAFreshLoad(t *testing.T) {
	t.Parallel()
	ts := mustOpenServer(t, Config{})
	r := rand.New(rand.NewPCG(22, 2))
	runs := []string{nextRun, "path=/seed/bench64.bin&offset=4096&length=33554432", "path=/cases/fragmented.bin&offset=0&length=1048576"}
	type pos struct {
		run, policy string
		now         uint64
		at          int
		quiz        bool
	}
	query := func(p pos) string {
		q := p.run + "&policy=" + p.policy + "&now=" + fmt.Sprint(p.now) + "&at=" + fmt.Sprint(p.at)
		if p.quiz {
			q += "&quiz=1"
		}
		return q
	}
	raw := func(ts *testServer, q string) []byte {
		res, err := http.Get(ts.ts.URL + "/api/images/demo/next?" + q)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var v any
		if err := json.NewDecoder(res.Body).Decode(&v); err != nil || res.StatusCode != 200 {
			t.Fatalf("GET next?%s: %d %v", q, res.StatusCode, err)
		}
		b, _ := json.Marshal(v)
		return b
	}
	var seen []pos
	for path := range 6 {
		p := pos{run: runs[path%len(runs)], policy: "greedy"}
		total := len(func() nextBody { b, _ := nextGet(t, ts, query(p)); return b }().Frames)
		for range 14 {
			switch a := r.IntN(8); a {
			case 0, 1:
				p.at = min(p.at+1, total-1)
			case 2:
				p.at = max(p.at-1, 0)
			case 3:
				p.at = r.IntN(total)
			case 4:
				p.at = 0
			case 5:
				p.at = total - 1
			case 6:
				p.policy = map[string]string{"greedy": "cost-benefit", "cost-benefit": "greedy"}[p.policy]
				p.now = []uint64{0, 1, 60, 100000}[r.IntN(4)]
				b, _ := nextGet(t, ts, query(pos{run: p.run, policy: p.policy, now: p.now}))
				total = len(b.Frames)
				p.at = min(p.at, total-1)
			case 7:
				p.quiz = !p.quiz
			}
			raw(ts, query(p)) // the path's request, on the warm server
			seen = append(seen, p)
		}
	}
	for _, p := range seen[len(seen)-4:] {
		fresh := mustOpenServer(t, Config{})
		if got, want := raw(ts, query(p)), raw(fresh, query(p)); !reflect.DeepEqual(got, want) {
			t.Errorf("next?%s after a path differs from a fresh load:\n%s\n%s", query(p), got, want)
		}
	}
	// And every position the paths went through equals a fresh build of its timeline (a new
	// server's cache misses once per timeline).
	fresh := mustOpenServer(t, Config{})
	for _, p := range seen {
		if got, want := raw(ts, query(p)), raw(fresh, query(p)); string(got) != string(want) {
			t.Fatalf("next?%s: the path's server and a second server disagree", query(p))
		}
	}
	if u, _ := url.ParseQuery(query(seen[0])); u.Get("at") == "" {
		t.Fatal("query without a position")
	}
	t.Logf("%d positions on %d paths; the fresh server built %d timelines", len(seen), 6, fresh.next.builds)
}

// checkVeiledTerms: while a question is open the candidates come in segment order with every term
// the policy weighs — valid blocks, mtime, u and age, as the unveiled frame has them — and without
// their cost or rank, which are the answer.
func checkVeiledTerms(t *testing.T, k int, veiled, open []nextCandidate) {
	t.Helper()
	terms := map[uint32]nextCandidate{}
	for _, c := range open {
		terms[c.Segno] = c
	}
	if len(veiled) != len(open) {
		t.Errorf("quiz at frame %d: %d candidates, %d unveiled", k, len(veiled), len(open))
	}
	for i, c := range veiled {
		w, ok := terms[c.Segno]
		if c.Cost != nil || c.Rank != 0 || i > 0 && c.Segno < veiled[i-1].Segno {
			t.Errorf("quiz at frame %d: candidate %+v shows its ranking", k, c)
		}
		if !ok || c.U == nil || c.Age == nil || w.U == nil || w.Age == nil || c.Valid != w.Valid || c.Mtime != w.Mtime || *c.U != *w.U || *c.Age != *w.Age {
			t.Errorf("quiz at frame %d: candidate %+v does not show the terms %+v", k, c, w)
		}
	}
}
