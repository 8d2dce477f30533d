package source_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/zrviz/zrviz/internal/testutil"

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

func openDemo(t testing.TB) *imgio.Image {
	t.Helper()
	img, err := imgio.OpenFileContext(context.Background(), testutil.DemoImage(t), nil)
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
			for _, o := range ops {
				if o.path != ops[0].path {
					t.Fatalf("an operation on another file %s", o.path)
				}
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
				// Setup operations (all succeeded in the kernel) run on the same mount; the pages
				// fill_zero dirtied are written back when the kernel would: before a later zero over
				// them, and at unmount.
				q := core.NewSeq(mode)
				for _, o := range ops[:len(ops)-1] {
					r, _, _, err := q.Zero(in, o.req)
					if err != nil || r.Errno != "" {
						t.Fatalf("setup op %+v: %v %q", o.req, err, r.Errno)
					}
				}
				r, _, _, err := q.Zero(in, last.req)
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
				if _, err := q.Unmount(); err != nil {
					t.Fatal(err)
				}
				fin := q.File(in)
				if fin.Inode.Size != after.size {
					t.Errorf("%s: i_size %d, want %d", mode, fin.Inode.Size, after.size)
				}
				if fin.Inode.Blocks != after.blocks {
					t.Errorf("%s: i_blocks %d, want %d", mode, fin.Inode.Blocks, after.blocks)
				}
				ext, err := core.SlotMap(fin)
				if err != nil {
					t.Fatal(err)
				}
				// The slot map after unmount, fresh blocks of the pages written back included.
				if slots := expand(ext); !slices.Equal(slots, after.slots) {
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
