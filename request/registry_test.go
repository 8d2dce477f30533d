package request

import (
	"reflect"
	"strings"
	"testing"
)

// TestRegistryRoundTrip: every line every form makes parses, and OpLine writes it back to a line
// that parses to the same operation; every kind is declared once, with its help and kernel
// function, and applies through the registry unless it is a walk (zero, punch, truncate) the
// runner walks.
func TestRegistryRoundTrip(t *testing.T) {
	seen := map[string]bool{}
	for _, s := range Ops() {
		if seen[s.Kind] {
			t.Errorf("%q declared twice", s.Kind)
		}
		seen[s.Kind] = true
		if s.Help == "" || s.Kernel == "" {
			t.Errorf("%q: no help or kernel function", s.Kind)
		}
		if (s.apply == nil) != s.walks {
			t.Errorf("%q: apply declared %t, walks %t: a walked op (zero, punch, truncate) is run by core.Seq.Walk, any other by apply", s.Kind, s.apply != nil, s.walks)
		}
		if (s.Effects&NamesFile != 0) != (len(s.Args) > 0 && s.Args[0].Name == "PATH") {
			t.Errorf("%q: NamesFile is %t, its first word %+v", s.Kind, s.Effects&NamesFile != 0, s.Args)
		}
		for _, f := range Forms() {
			if f.Kind != s.Kind {
				continue
			}
			for _, l := range lines(f) {
				op, err := ParseOp(l)
				if err != nil {
					t.Errorf("%q: %v", l, err)
					continue
				}
				back, err := ParseOp(op.OpLine(-1))
				if err != nil || !reflect.DeepEqual(back, op) {
					t.Errorf("%q: OpLine %q parses as %+v, %v; want %+v", l, op.OpLine(-1), back, err, op)
				}
			}
		}
	}
}

// TestHelpListsEveryOp: the help text and the grammar name every operation.
func TestHelpListsEveryOp(t *testing.T) {
	help, grammar := HelpLines("  "), Grammar()
	for _, s := range Ops() {
		for name, text := range map[string]string{"help": help, "grammar": grammar} {
			if !strings.Contains(text, s.Form()) {
				t.Errorf("%s lacks %q", name, s.Form())
			}
		}
	}
	if !strings.Contains(help, "tune ipu_policy|reserved_blocks|max_victim_search N") {
		t.Errorf("help:\n%s", help)
	}
}

// TestOracleWords: the oracle helper's fixture-only words are refused by ParseOps with a reason,
// skipped (with their line numbers) by ParseOracleOps; a word that changes the kernel's state and
// not the model's (sleep) is refused by both.
func TestOracleWords(t *testing.T) {
	in := "snap\ngc 1\nshow mounted_time_sec\nsysctl vm/dirty_ratio 95\ncheckpoint\n"
	if _, err := ParseOps(strings.NewReader(in)); err == nil || !strings.Contains(err.Error(), "oracle helper") {
		t.Errorf("ParseOps: %v", err)
	}
	ops, skipped, err := ParseOracleOps(strings.NewReader(in))
	if err != nil || len(ops) != 2 || ops[0].Kind != OpGC || ops[1].Kind != OpCheckpoint || !reflect.DeepEqual(skipped, []int{1, 3, 4}) {
		t.Errorf("ParseOracleOps = %+v, %v, %v", ops, skipped, err)
	}
	if _, _, err := ParseOracleOps(strings.NewReader("gc 1\nsleep 1\n")); err == nil {
		t.Error("sleep skipped")
	}
}

// TestGCOps: every operation of the segment map converts to package gc's op, which GCOpLine writes
// back to the same line; the file operations and the other tunables are refused, naming the ones taken.
func TestGCOps(t *testing.T) {
	for _, l := range []string{"checkpoint", "sync", "gc 1", "gc 0", "now 30", "tune max_victim_search 3"} {
		g, err := ParseGCOp(l)
		if err != nil || GCOpLine(g) != l {
			t.Errorf("%q: %+v (%q), %v", l, g, GCOpLine(g), err)
		}
	}
	for _, l := range []string{"zero /a 0 1", "write /a 0 1", "fsync /a", "tune ipu_policy 16", "tune max_victim_search 0", "gc 2"} {
		if g, err := ParseGCOp(l); err == nil {
			t.Errorf("%q: %+v", l, g)
		}
	}
	if g := SegmentMapGrammar(); g != "sync, tune max_victim_search N, checkpoint, gc 1|0, now SECONDS" {
		t.Errorf("SegmentMapGrammar = %q", g)
	}
}

// TestParseArgs: command-line words split into operations by their forms (an optional keyword
// taken only when written), the gc command's OPs among them.
func TestParseArgs(t *testing.T) {
	ops, err := ParseArgs(strings.Fields("gc 1 gc 0 checkpoint now 30 sync tune max_victim_search 3 zero /a 0 1 keep_size zero /a 0 1 write /a 0 1 fsync /a"))
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, o := range ops {
		lines = append(lines, o.OpLine(0))
	}
	want := "gc 1,gc 0,checkpoint,now 30,sync,tune max_victim_search 3,zero /a 0 1 keep_size,zero /a 0 1,write /a 0 1,fsync /a"
	if got := strings.Join(lines, ","); got != want {
		t.Errorf("ops %s\nwant %s", got, want)
	}
	for _, bad := range []string{"gc", "gc 2", "now x", "tune max_victim_search 0", "tune ipu_policy", "zero /a 0", "snap", "gc 1 sleep 1"} {
		if ops, err := ParseArgs(strings.Fields(bad)); err == nil {
			t.Errorf("%q parsed: %+v", bad, ops)
		}
	}
}

// TestCosts: what each op can make the engine hold comes from its declaration: a write dirties its
// pages and two partial ones and grows the file to its end; a zero walks the file, dirties
// fill_zero's two edge pages and grows the file unless keep_size; the rest hold nothing that grows.
func TestCosts(t *testing.T) {
	for line, want := range map[string]Cost{
		"write /a 4096 1MiB":          {Dirties: 256 + 2, GrowsTo: 4096 + 1<<20},
		"zero /a 8192 4096":           {Dirties: 2, Walks: true, GrowsTo: 12288},
		"zero /a 8192 4096 keep_size": {Dirties: 2, Walks: true},
		"fsync /a":                    {},
		"sync":                        {},
		"gc 1":                        {},
		"checkpoint":                  {},
		"now 5":                       {},
		"tune ipu_policy 16":          {},
	} {
		op, err := ParseOp(line)
		if err != nil {
			t.Fatal(err)
		}
		if got := op.Cost(); got != want {
			t.Errorf("%q: cost %+v, want %+v", line, got, want)
		}
	}
}
