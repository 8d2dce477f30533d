package source_test

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/zrviz/zrviz/core"
	"github.com/zrviz/zrviz/imgio"
	"github.com/zrviz/zrviz/source"
)

const casesDir = "../core/testdata/kernel-cases"

// op is one line of an N.ops file.
type op struct {
	path string
	req  core.Request
}

func readOps(t *testing.T, name string) []op {
	t.Helper()
	var ops []op
	for _, line := range readLines(t, name) {
		f := strings.Fields(line)
		if len(f) < 4 || f[0] != "zero" {
			t.Fatalf("%s: bad op %q", name, line)
		}
		off, err1 := strconv.ParseInt(f[2], 10, 64)
		length, err2 := strconv.ParseInt(f[3], 10, 64)
		if err1 != nil || err2 != nil {
			t.Fatalf("%s: bad numbers in %q", name, line)
		}
		ops = append(ops, op{path: f[1], req: core.Request{Offset: off, Length: length,
			KeepSize: len(f) > 4 && f[4] == "keep_size"}})
	}
	return ops
}

func readLines(t *testing.T, name string) []string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	sc := bufio.NewScanner(strings.NewReader(string(b)))
	for sc.Scan() {
		if s := strings.TrimSpace(sc.Text()); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// afterFile is N.after.txt: the header and one value per slot.
type afterFile struct {
	size   int64
	blocks uint64
	inline bool
	slots  []string // "NEW", "NULL" or a decimal address
}

func readAfter(t *testing.T, name string) afterFile {
	t.Helper()
	lines := readLines(t, name)
	var a afterFile
	for _, f := range strings.Fields(strings.TrimPrefix(lines[0], "#")) {
		k, v, _ := strings.Cut(f, "=")
		switch k {
		case "size":
			a.size, _ = strconv.ParseInt(v, 10, 64)
		case "i_blocks":
			a.blocks, _ = strconv.ParseUint(v, 10, 64)
		case "inline":
			a.inline = true
		}
	}
	for i, l := range lines[1:] {
		idx, val, _ := strings.Cut(l, " ")
		if idx != strconv.Itoa(i) {
			t.Fatalf("%s: line %q out of order", name, l)
		}
		a.slots = append(a.slots, val)
	}
	return a
}

// expand turns extents into one value per slot, in after.txt's words.
func expand(ext []core.Extent) []string {
	var out []string
	for _, e := range ext {
		for k := uint64(0); k < e.Count; k++ {
			switch e.State {
			case "addr":
				out = append(out, strconv.FormatUint(uint64(e.Addr)+k, 10))
			case "new":
				out = append(out, "NEW")
			case "null":
				out = append(out, "NULL")
			default:
				out = append(out, e.State)
			}
		}
	}
	return out
}

// writeBack models what the kernel does with the pages fill_zero dirtied
// once it writes them back at unmount (docs/kernel-semantics.md §5): an existing block
// is rewritten in place (ipu_policy FORCE on small volumes), so its address
// stays; a NEW page inside i_size gets a freshly allocated block, whose
// address the engine cannot know ("FRESH" matches any block address); a
// page past EOF (KEEP_SIZE) is dropped and its slot stays NEW.
func writeBack(slots []string, fills []core.FillZero, size int64) {
	for _, f := range fills {
		if f.Index >= uint64(len(slots)) || slots[f.Index] != "NEW" {
			continue
		}
		if int64(f.Index)*4096 < size {
			slots[f.Index] = "FRESH"
		}
	}
}

func sameSlots(got, want []string) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		if got[i] == "FRESH" {
			if _, err := strconv.ParseUint(want[i], 10, 32); err != nil {
				return false
			}
			continue
		}
		if got[i] != want[i] {
			return false
		}
	}
	return true
}

func openDemo(t testing.TB) *imgio.Image {
	t.Helper()
	img, err := imgio.OpenDemo(&imgio.Options{TempDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { img.Close() })
	return img
}

// TestKernelCases replays the 12 cases the Linux kernel ran on the demo
// image and compares calls, errno, i_size, i_blocks and the slot map.
func TestKernelCases(t *testing.T) {
	img := openDemo(t)
	names, _ := filepath.Glob(filepath.Join(casesDir, "*.ops"))
	if len(names) != 12 {
		t.Fatalf("found %d kernel cases, want 12", len(names))
	}
	for _, name := range names {
		c := strings.TrimSuffix(name, ".ops")
		t.Run(filepath.Base(c), func(t *testing.T) {
			ops := readOps(t, name)
			in, err := source.Input(img, ops[0].path)
			if err != nil {
				t.Fatal(err)
			}
			// Setup operations (all succeeded in the kernel) chain the
			// engine's state; their fill_zero pages are written back too.
			var fills []core.FillZero
			for _, o := range ops[:len(ops)-1] {
				if o.path != ops[0].path {
					t.Fatalf("setup on another file %s", o.path)
				}
				r, err := core.Simulate(in, o.req, core.PerBlock)
				if err != nil || r.Errno != "" {
					t.Fatalf("setup op %+v: %v %q", o.req, err, r.Errno)
				}
				fills = append(fills, r.FillZero...)
				in = r.NextInput()
			}
			last := ops[len(ops)-1]
			wantErrno := readLines(t, c+".result")[0]
			if wantErrno == "OK" {
				wantErrno = ""
			}
			after := readAfter(t, c+".after.txt")
			var perBlock [][2]uint32
			for _, l := range readLines(t, c+".trace") {
				a, _ := strconv.ParseUint(l, 10, 32)
				perBlock = append(perBlock, [2]uint32{uint32(a), 1})
			}
			var batched [][2]uint32
			for _, l := range readLines(t, c+".trace.batched") {
				var a, n uint32
				fmt.Sscan(l, &a, &n)
				batched = append(batched, [2]uint32{a, n})
			}
			for _, mode := range core.Modes {
				r, err := core.Simulate(in, last.req, mode)
				if err != nil {
					t.Fatal(err)
				}
				want := perBlock
				if mode == core.Batched {
					want = batched
				}
				var got [][2]uint32
				for c := range r.Calls.All() {
					got = append(got, [2]uint32{c.Start, c.Len})
				}
				if !slices.Equal(got, want) {
					t.Errorf("%s: %d calls, want %d; first diff at %d", mode, len(got), len(want), firstDiff(got, want))
				}
				if r.Errno != wantErrno {
					t.Errorf("%s: errno %q, want %q", mode, r.Errno, wantErrno)
				}
				if r.SizeAfter != after.size {
					t.Errorf("%s: i_size %d, want %d", mode, r.SizeAfter, after.size)
				}
				if r.BlocksAfter != after.blocks {
					t.Errorf("%s: i_blocks %d, want %d", mode, r.BlocksAfter, after.blocks)
				}
				slots := expand(r.After.Extents)
				writeBack(slots, append(fills, r.FillZero...), r.SizeAfter)
				if !sameSlots(slots, after.slots) {
					t.Errorf("%s: slot map differs (%d slots, want %d); first diff at %d", mode, len(slots), len(after.slots), firstDiff(slots, after.slots))
				}
			}
		})
	}
}

func firstDiff[T comparable](a, b []T) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}
