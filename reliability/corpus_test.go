package reliability

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"
	"time"
)

// corpusSeed seeds the random part of the corpus; ZRVIZ_SEED overrides it
// (a failure names the seed and the case index to replay).
func corpusSeed(t *testing.T) uint64 {
	if s := os.Getenv("ZRVIZ_SEED"); s != "" {
		var v uint64
		if _, err := fmt.Sscan(s, &v); err != nil {
			t.Fatalf("ZRVIZ_SEED: %v", err)
		}
		return v
	}
	return 20261130
}

// perImageTimeout: no corrupt image may keep the reader or the engine
// busy longer than this (a hang is a bug, not a slow machine).
const perImageTimeout = 20 * time.Second

// perImageAlloc bounds the bytes allocated while exercising one image.
const perImageAlloc = 512 << 20

func corpusBases(t *testing.T) []*Base {
	t.Helper()
	var bases []*Base
	add := func(name string, data []byte) {
		b, err := NewBase(name, data)
		if err != nil {
			t.Fatal(err)
		}
		bases = append(bases, b)
	}
	add("demo", mustDemo(t))
	for _, n := range []string{"basic", "features", "segs4"} {
		add(n, gunzipFile(t, filepath.Join("../imgio/testdata", n+".img.gz")))
	}
	src := t.TempDir()
	populate(t, src)
	for _, v := range []struct {
		name string
		args []string
	}{
		{"mkfs-default", nil},
		{"mkfs-features", []string{"-O", "extra_attr,inode_checksum,sb_checksum,inode_crtime"}},
	} {
		img := mkfsImage(t, t.TempDir(), 128, src, v.args...)
		data, err := mapFile(img)
		if err != nil {
			t.Fatal(err)
		}
		add(v.name, data)
	}
	return bases
}

// TestCorruptCorpus drives every corrupt variant of every base through
// imgio, sim and core. Each must end in a result or a typed error, within
// perImageTimeout and perImageAlloc.
func TestCorruptCorpus(t *testing.T) {
	seed := corpusSeed(t)
	bases := corpusBases(t)
	lim := Limits{MaxFiles: 16, EngineRuns: true, EngineMaxSize: 128 << 20}
	only := os.Getenv("ZRVIZ_CASE") // "base/index" to replay one case
	// The default run takes a seeded sample of each base's cases (every
	// structural kind is represented); ZRVIZ_SOAK=1 runs them all; -short
	// (the fast tier) a smaller seeded sample of the same cases.
	perBase := 1750
	if testing.Short() {
		perBase = 100
	}
	if os.Getenv("ZRVIZ_SOAK") != "" || only != "" {
		perBase = 1 << 30
	}

	type stat struct {
		n, opened, viol int
		maxAlloc        uint64
		maxDur          time.Duration
	}
	stats := map[string]*stat{}
	viols := map[string][]string{} // key: stage/kind/first line → case names
	total := 0
	typed := map[string]int{}
	errnos := map[string]int{}
	start := time.Now()
	for _, b := range bases {
		random := 600
		all := Generate(b, seed, random)
		cases := sample(all, perBase, seed)
		st := &stat{}
		stats[b.Name] = st
		t.Logf("base %s: %d cases generated, %d run", b.Name, len(all), len(cases))
		for i := range cases {
			c := &cases[i]
			if only != "" && only != fmt.Sprintf("%s/%d", b.Name, c.Index) {
				continue
			}
			ov := c.Overlay(b.Data)
			var ms0, ms1 runtime.MemStats
			runtime.ReadMemStats(&ms0)
			t0 := time.Now()
			type res struct {
				o Outcome
				v *Violation
			}
			done := make(chan res, 1)
			go func() {
				o, v := Exercise(ov, c.Size, lim)
				done <- res{o, v}
			}()
			var r res
			select {
			case r = <-done:
			case <-time.After(perImageTimeout):
				buf := make([]byte, 1<<20)
				n := runtime.Stack(buf, true)
				t.Fatalf("case %s (seed %d, index %d) did not finish in %v:\n%s", c.Name, seed, c.Index, perImageTimeout, buf[:n])
			}
			d := time.Since(t0)
			runtime.ReadMemStats(&ms1)
			alloc := ms1.TotalAlloc - ms0.TotalAlloc
			st.n++
			total++
			st.maxAlloc = max(st.maxAlloc, alloc)
			st.maxDur = max(st.maxDur, d)
			if r.o.OpenErr == nil {
				st.opened++
			}
			for k, n := range r.o.TypedErrs {
				typed[k] += n
			}
			for k, n := range r.o.Errnos {
				errnos[k] += n
			}
			if alloc > perImageAlloc {
				t.Errorf("case %s (seed %d, index %d): %d bytes allocated, bound %d", c.Name, seed, c.Index, alloc, perImageAlloc)
			}
			if r.v != nil {
				st.viol++
				key := r.v.Stage + " " + r.v.Kind + ": " + firstLine(r.v.Err)
				if r.v.Kind == "panic" {
					key += "\n" + panicSite(r.v.Stack)
				}
				viols[key] = append(viols[key], fmt.Sprintf("%s (index %d)", c.Name, c.Index))
			}
		}
	}
	names := make([]string, 0, len(stats))
	for n := range stats {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		s := stats[n]
		t.Logf("base %-14s %6d cases, %6d opened, %4d violations, max %6.1f MiB allocated, slowest %v",
			n, s.n, s.opened, s.viol, float64(s.maxAlloc)/(1<<20), s.maxDur.Round(time.Millisecond))
	}
	t.Logf("total %d corrupt images in %v (seed %d)", total, time.Since(start).Round(time.Millisecond), seed)
	t.Logf("typed errors: %v", typed)
	t.Logf("engine errnos: %v", errnos)
	want := 10000
	if testing.Short() {
		want = perBase * len(bases)
	}
	if only == "" && total < want {
		t.Errorf("only %d corrupt images, want at least %d", total, want)
	}
	keys := make([]string, 0, len(viols))
	for k := range viols {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		cs := viols[k]
		ex := cs
		if len(ex) > 3 {
			ex = ex[:3]
		}
		t.Errorf("%d cases: %s\n    e.g. %s", len(cs), k, strings.Join(ex, "; "))
	}
}

// sample returns at most n of cases, chosen by a seeded shuffle and kept
// in generation order.
func sample(cases []Case, n int, seed uint64) []Case {
	if len(cases) <= n {
		return cases
	}
	r := rand.New(rand.NewPCG(seed, uint64(len(cases))))
	idx := r.Perm(len(cases))[:n]
	sort.Ints(idx)
	out := make([]Case, n)
	for i, k := range idx {
		out[i] = cases[k]
	}
	return out
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if len(s) > 300 {
		s = s[:300]
	}
	return s
}

// panicSite is the first stack frame inside the project below the panic.
func panicSite(stack string) string {
	lines := strings.Split(stack, "\n")
	for i, l := range lines {
		if strings.Contains(l, "panic(") || strings.Contains(l, "runtime/panic.go") {
			for _, m := range lines[i+1:] {
				if strings.Contains(m, "zrviz/") && !strings.Contains(m, "reliability") && strings.Contains(m, ".go:") {
					return strings.TrimSpace(m)
				}
			}
		}
	}
	return ""
}
