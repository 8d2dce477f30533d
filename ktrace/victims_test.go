package ktrace_test

import (
	"strings"
	"testing"

	"github.com/zrviz/zrviz/gc"
	"github.com/zrviz/zrviz/ktrace"
)

// gcTrace is the shape of kernel-seq g1's op 1 and a later gc op: the kprobe lines, f2fs_get_victim
// (foreground greedy, then background cost-benefit) and f2fs_gc_end, attributed by the markers.
const gcTrace = `# tracer: nop
 zrhelper-193 [000] ..... 40.010227: tracing_mark_write: zr_op 1
 zrhelper-193 [000] ..... 40.010300: zr: (f2fs_invalidate_blocks+0x4/0x230) addr=9728
 zrhelper-193 [000] ..... 40.365280: f2fs_get_victim: dev = (254,0), type = No TYPE, policy = (Foreground GC, LFS-mode, Greedy), victim = 11, cost = 448, ofs_unit = 1, pre_victim_secno = 11, prefree = 0, free = 11
 zrhelper-193 [000] ..... 41.014691: f2fs_gc_end: dev = (254,0), ret = -61, seg_freed = 1, sec_freed = 1, nodes = 0, dents = 0, imeta = 0, free_sec:12, free_seg:12, rsv_seg:13, prefree_seg:0
 zrhelper-193 [000] ..... 41.082617: tracing_mark_write: zr_op 2
 zrhelper-193 [000] ..... 41.1: f2fs_get_victim: dev = (254,0), type = No TYPE, policy = (Background GC, LFS-mode, Cost-Benefit), victim = 7, cost = 4294964595, ofs_unit = 1, pre_victim_secno = 7, prefree = 0, free = 30
 zrhelper-193 [000] ..... 41.2: f2fs_gc_end: dev = (254,0), ret = 0, seg_freed = 0, sec_freed = 0, nodes = 0, dents = 0, imeta = 0, free_sec:12, free_seg:12, rsv_seg:13, prefree_seg:0
 zrhelper-193 [000] ..... 41.3: tracing_mark_write: zr_op end
`

// TestVictims: the f2fs_get_victim and f2fs_gc_end events land in their operations, and
// CheckVictims holds a model's picks against them: agreement, a different victim, a different
// cost, a victim too many and one too few are all told apart.
func TestVictims(t *testing.T) {
	tr, err := ktrace.Parse(strings.NewReader(gcTrace), ktrace.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Ops) != 2 || tr.Ops[0].Calls.Len() != 1 {
		t.Fatalf("ops %+v", tr.Ops)
	}
	want0 := ktrace.Victim{Type: "FG", Policy: "greedy", Segno: 11, Cost: 448}
	want1 := ktrace.Victim{Type: "BG", Policy: "cost-benefit", Segno: 7, Cost: 4294964595}
	if len(tr.Ops[0].Victims) != 1 || tr.Ops[0].Victims[0] != want0 || len(tr.Ops[1].Victims) != 1 || tr.Ops[1].Victims[0] != want1 {
		t.Fatalf("victims %+v / %+v", tr.Ops[0].Victims, tr.Ops[1].Victims)
	}
	if g := tr.Ops[0].GCEnds; len(g) != 1 || g[0] != -61 {
		t.Errorf("gc ends %v", g)
	}
	seg := func(n uint32) *uint32 { return &n }
	pick := func(typ, policy string, v uint32, cost uint32, rounds ...gc.Round) *gc.Pick {
		return &gc.Pick{Type: typ, Policy: policy, Victim: seg(v), Cost: cost, Rounds: rounds}
	}
	for _, c := range []struct {
		name  string
		p     *gc.Pick
		agree bool
	}{
		{"the same", pick("FG", "greedy", 11, 448), true},
		{"another victim", pick("FG", "greedy", 12, 448), false},
		{"another cost", pick("FG", "greedy", 11, 447), false},
		{"another policy", pick("BG", "cost-benefit", 11, 448), false},
		{"one victim more", pick("FG", "greedy", 11, 448, gc.Round{Type: "FG", Policy: "greedy", Victim: seg(3), Cost: 10}), false},
		{"a later search that found nothing", pick("FG", "greedy", 11, 448, gc.Round{Type: "FG", Policy: "greedy"}), true},
		{"no collection", nil, false},
	} {
		d, err := ktrace.CheckVictims(tr, 0, ktrace.ModelVictims(c.p))
		if err != nil {
			t.Fatal(err)
		}
		if (d == "") != c.agree {
			t.Errorf("%s: %q", c.name, d)
		}
	}
	if d, _ := ktrace.CheckVictims(tr, 1, nil); d == "" {
		t.Error("a kernel victim the model did not pick agrees")
	}
	if _, err := ktrace.CheckVictims(tr, 2, nil); err == nil {
		t.Error("operation 3 of a trace of 2")
	}
	if _, err := ktrace.Parse(strings.NewReader(" zrhelper-193 [000] ..... 1.0: tracing_mark_write: zr_op 1\n x [000] ..... 1.1: f2fs_get_victim: dev = (254,0), policy = (Foreground GC, LFS-mode, Greedy), victim = x, cost = 1,\n"), ktrace.Limits{}); err == nil {
		t.Error("a victim that is not a number parses")
	}
}

// ssrTrace is the shape of kernel-seq s3's op 7: a foreground gc's victim, then the SSR search its
// cold data log made when it filled (into a warm data segment).
const ssrTrace = ` zrhelper-204 [000] ..... 4.6: tracing_mark_write: zr_op 1
 zrhelper-204 [000] ..... 4.7: f2fs_get_victim: dev = (254,0), type = No TYPE, policy = (Foreground GC, LFS-mode, Greedy), victim = 4, cost = 384, ofs_unit = 1, pre_victim_secno = 4, prefree = 1, free = 15
 zrhelper-204 [000] ..... 4.8: f2fs_get_victim: dev = (254,0), type = Warm DATA, policy = (Background GC, SSR-mode, Greedy), victim = 6, cost = 448, ofs_unit = 1, pre_victim_secno = 4, prefree = 1, free = 15
 zrhelper-204 [000] ..... 4.9: tracing_mark_write: zr_op end
`

// TestSSRVictims: an SSR-mode f2fs_get_victim event is kept apart from garbage collection's
// victims (Op.SSR, with the type searched), and Report.CheckSSR holds the model's SSR victims to it:
// the same type, segment and cost in order agree; any other, one more or one fewer do not.
func TestSSRVictims(t *testing.T) {
	tr, err := ktrace.Parse(strings.NewReader(ssrTrace), ktrace.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	o := tr.Ops[0]
	if len(o.Victims) != 1 || o.Victims[0] != (ktrace.Victim{Type: "FG", Policy: "greedy", Segno: 4, Cost: 384}) {
		t.Fatalf("gc victims %+v", o.Victims)
	}
	want := ktrace.Victim{Type: "BG", Policy: "greedy", Segno: 6, Cost: 448, Mode: "SSR", Log: "Warm DATA"}
	if len(o.SSR) != 1 || o.SSR[0] != want {
		t.Fatalf("SSR victims %+v, want %+v", o.SSR, want)
	}
	ok := gc.SSRVictim{Type: gc.WarmData, Segno: 6, Cost: 448, Log: gc.ColdData}
	for _, c := range []struct {
		name  string
		vs    []gc.SSRVictim
		agree bool
	}{
		{"the same", []gc.SSRVictim{ok}, true},
		{"another type", []gc.SSRVictim{{Type: gc.ColdData, Segno: 6, Cost: 448}}, false},
		{"another segment", []gc.SSRVictim{{Type: gc.WarmData, Segno: 7, Cost: 448}}, false},
		{"another cost", []gc.SSRVictim{{Type: gc.WarmData, Segno: 6, Cost: 447}}, false},
		{"none", nil, false},
		{"one more", []gc.SSRVictim{ok, ok}, false},
	} {
		rep := &ktrace.Report{Op: 1, Agree: true}
		if err := rep.CheckSSR(tr, c.vs); err != nil {
			t.Fatal(err)
		}
		if rep.Agree != c.agree || (rep.SSRDivergence == "") != c.agree {
			t.Errorf("%s: agree %v (%q), want %v", c.name, rep.Agree, rep.SSRDivergence, c.agree)
		}
	}
}
