package source_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/zrviz/zrviz/core"
	"github.com/zrviz/zrviz/imgio"
	"github.com/zrviz/zrviz/internal/testutil"
	"github.com/zrviz/zrviz/request"
	"github.com/zrviz/zrviz/source"
)

// runLines runs ops (lines of the ops language) on a fresh mount of img in mode and returns every
// step and the runner's error.
func runLines(t *testing.T, img *imgio.Image, mode core.Mode, lines ...string) (*core.Seq, []*source.Step, error) {
	t.Helper()
	var ops []request.Op
	for _, l := range lines {
		op, err := request.ParseOp(l)
		if err != nil {
			t.Fatalf("%q: %v", l, err)
		}
		ops = append(ops, op)
	}
	q, err := source.NewSeq(context.Background(), img, mode)
	if err != nil {
		t.Fatal(err)
	}
	var steps []*source.Step
	err = source.RunOps(context.Background(), q, img, ops, func(st *source.Step) error {
		steps = append(steps, st)
		return nil
	})
	return q, steps, err
}

// TestUnlinkRefuses holds every path of an unlink the model does not follow to a refusal that
// names the kernel function (or to the kernel's errno), never to an answer.
func TestUnlinkRefuses(t *testing.T) {
	demo := openDemo(t)
	root, err := imgio.OpenFileContext(context.Background(), testutil.RawImage(t, seqDir+"/x3-compressed/before.img.zst"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { root.Close() })
	for _, c := range []struct {
		name  string
		img   *imgio.Image
		lines []string
		want  string // the kernel function the refusal names; "" for an errno
		errno string
	}{
		{"dentry block", root, []string{"unlink /c.bin"}, "f2fs_delete_entry", ""},
		{"symlink", demo, []string{"unlink /docs/contiguous.link"}, "f2fs_evict_inode", ""},
		{"inode written by sync", demo, []string{"write /cases/holes.bin 0 4096", "sync", "unlink /cases/holes.bin"}, "f2fs_write_node_page", ""},
		{"inode written by fsync", demo, []string{"write /cases/holes.bin 0 4096", "fsync /cases/holes.bin", "unlink /cases/holes.bin"}, "f2fs_write_node_page", ""},
		{"zero after unlink", demo, []string{"unlink /cases/tiny.txt", "zero /cases/tiny.txt 0 4096"}, "f2fs_lookup", ""},
		{"write after unlink", demo, []string{"unlink /cases/holes.bin", "write /cases/holes.bin 0 4096"}, "f2fs_lookup", ""},
		{"unlink twice", demo, []string{"unlink /cases/holes.bin", "unlink /cases/holes.bin"}, "f2fs_lookup", ""},
		{"directory", demo, []string{"unlink /docs/a"}, "", "EISDIR"},
	} {
		t.Run(c.name, func(t *testing.T) {
			for _, mode := range core.Modes {
				_, steps, err := runLines(t, c.img, mode, c.lines...)
				if c.want == "" {
					if err != nil {
						t.Fatal(err)
					}
					last := steps[len(steps)-1]
					if last.Walk.Errno != c.errno || last.Walk.Calls.Len() != 0 {
						t.Errorf("%s: errno %q with %d calls, want %s and none", mode, last.Walk.Errno, last.Walk.Calls.Len(), c.errno)
					}
					continue
				}
				var oe *source.OpError
				if !errors.As(err, &oe) || oe.Index != len(c.lines)-1 || !errors.Is(err, core.ErrUnmodelled) || !strings.Contains(err.Error(), c.want) {
					t.Fatalf("%s: want the last operation refused naming %s, got %v", mode, c.want, err)
				}
			}
		})
	}
}

// TestUnlinkProperty: on random paths of operations over the demo's files, an unlink's calls are
// a fresh truncate to 0's of the same state followed by one call for the inode's own block, and
// the unlink takes exactly the file's i_blocks (data blocks, NEW slots, nodes and the inode) out
// of valid_block_count; a later sync leaves no page of it.
func TestUnlinkProperty(t *testing.T) {
	img := openDemo(t)
	entries, err := img.Files()
	if err != nil {
		t.Fatal(err)
	}
	var files []imgio.Inode
	for _, e := range entries {
		if e.Type != imgio.TypeFile || !strings.HasPrefix(e.Path, "/cases/") && !strings.HasPrefix(e.Path, "/docs/a/") {
			continue // the demo's /seed and /docs are directories whose dentries are inline too; these suffice
		}
		f, err := img.Lookup(e.Path)
		if err != nil {
			t.Fatal(err)
		}
		in := f.Inode()
		in.Name = e.Path
		files = append(files, in)
	}
	if len(files) < 10 {
		t.Fatalf("only %d files", len(files))
	}
	rng := rand.New(rand.NewPCG(36, 1))
	n := 40
	if testing.Short() {
		n = 12
	}
	for i := range n {
		f := files[rng.IntN(len(files))]
		p := f.Name
		var prefix []string
		for range rng.IntN(3) {
			off, length := rng.Int64N(max(f.Size, 1)+8192), 1+rng.Int64N(64<<10)
			switch rng.IntN(4) {
			case 0:
				prefix = append(prefix, fmt.Sprintf("write %s %d %d", p, off, length))
			case 1:
				prefix = append(prefix, fmt.Sprintf("zero %s %d %d", p, off, length))
			case 2:
				prefix = append(prefix, fmt.Sprintf("punch %s %d %d", p, off, length))
			default:
				prefix = append(prefix, fmt.Sprintf("truncate %s %d", p, off))
			}
		}
		mode := core.Modes[rng.IntN(len(core.Modes))]
		name := fmt.Sprintf("%d %s %s %v", i, mode, p, prefix)
		q, steps, err := runLines(t, img, mode, append(slices.Clone(prefix), "unlink "+p)...)
		if err != nil {
			if errors.Is(err, core.ErrUnmodelled) {
				t.Logf("%s: refused: %v", name, err)
				continue
			}
			t.Fatalf("%s: %v", name, err)
		}
		un := steps[len(steps)-1]
		q0, steps0, err := runLines(t, img, mode, append(slices.Clone(prefix), "truncate "+p+" 0")...)
		if err != nil {
			t.Fatalf("%s: the fresh truncate: %v", name, err)
		}
		tr := steps0[len(steps0)-1]
		want := slices.Collect(tr.Walk.Calls.All())
		want = append(want, core.Call{Start: f.Blkaddr, Len: 1, Reason: core.ActNodeFree})
		if got := slices.Collect(un.Walk.Calls.All()); !slices.Equal(got, want) {
			t.Errorf("%s: %d calls, the truncate to 0 and the inode block %d", name, len(got), len(want))
		}
		// valid_block_count: what the truncate to 0 left of the file's i_blocks (its inode) goes too.
		v, _, _ := q.State()
		v0, _, _ := q0.State()
		if got, want := v.Volume.ValidBlockCount, v0.Volume.ValidBlockCount-tr.Walk.BlocksAfter; got != want {
			t.Errorf("%s: valid_block_count %d after the unlink, want %d (the truncate to 0's %d less its %d blocks left)", name, got, want, v0.Volume.ValidBlockCount, tr.Walk.BlocksAfter)
		}
		if got, want := v.Volume.ValidNodeCount, v0.Volume.ValidNodeCount-1; got != want {
			t.Errorf("%s: valid_node_count %d after the unlink, want %d", name, got, want)
		}
		if un.Walk.BlocksAfter != 0 || un.Walk.SizeAfter != 0 {
			t.Errorf("%s: i_blocks %d i_size %d after the unlink", name, un.Walk.BlocksAfter, un.Walk.SizeAfter)
		}
		if !q.Unlinked(f.Ino) {
			t.Errorf("%s: the sequence still has the file", name)
		}
		res, err := q.Sync()
		if err != nil {
			t.Fatalf("%s: sync: %v", name, err)
		}
		for _, pg := range res.Pages {
			if pg.Path == p {
				t.Errorf("%s: the sync wrote page %d of the unlinked file", name, pg.Index)
			}
		}
	}
}
