package source_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zrviz/zrviz/core"
	"github.com/zrviz/zrviz/gc"
	"github.com/zrviz/zrviz/imgio"
	"github.com/zrviz/zrviz/internal/testutil"
	"github.com/zrviz/zrviz/request"
	"github.com/zrviz/zrviz/source"
)

// TestNearlyFullRefusesRatherThanGuesses (issue 29): random sequences of operations on nearly
// full kernel-written volumes (one segment a section, 13 of 24 sections reserved; and four a
// section) either run, or are refused with core.ErrUnmodelled naming the kernel function, never
// another error. Each one that runs is checked against a fresh computation of need_new_seg: every
// data log the operation moved to a new segment (other than the next one of its section) was
// moved while f2fs_need_SSR was false or no partly valid data segment was there for
// get_ssr_segment, on the segment manager as the operation left it (free sections only fall
// within an operation, so this holds at the moment of the move too).
func TestNearlyFullRefusesRatherThanGuesses(t *testing.T) {
	dirs := []string{"g1-enospc-nearly-full", "g3-gc-short", "h2-gc-series-4seg"}
	seeds := 12
	if testing.Short() {
		seeds = 4
	}
	ran, refused := 0, 0
	for _, name := range dirs {
		img, err := imgio.OpenFileContext(context.Background(), testutil.RawImage(t, filepath.Join("../core/testdata/kernel-seq", name, "before.img.zst")), nil)
		if err != nil {
			t.Fatal(err)
		}
		var files []string
		for _, p := range []string{"/holes.bin", "/fill.bin", "/k.bin", "/d/f00", "/d/f01", "/d/f02", "/d/f03", "/d/f05", "/d/f07"} {
			if f, err := img.ResolveContext(context.Background(), p); err == nil && f.Inode().Type == "file" {
				files = append(files, p)
			}
		}
		if len(files) == 0 {
			t.Fatalf("%s: no file to work on", name)
		}
		for seed := range seeds {
			rng := rand.New(rand.NewPCG(uint64(seed), 29))
			ops := randomOps(rng, files, 12)
			for _, mode := range core.Modes {
				q, err := source.NewSeq(context.Background(), img, mode)
				if err != nil {
					t.Fatal(err)
				}
				before := q.GCState()
				err = source.RunOps(context.Background(), q, img, ops, func(st *source.Step) error {
					after := q.GCState()
					if err := checkNoSilentSSR(before, after, st); err != nil {
						return err
					}
					before = after
					ran++
					return nil
				})
				switch {
				case err == nil:
				case errors.Is(err, core.ErrUnmodelled):
					refused++
					if !strings.Contains(err.Error(), "f2fs_") && !strings.Contains(err.Error(), "get_ssr_segment") {
						t.Errorf("%s seed %d %s: a refusal that names no kernel function: %v", name, seed, mode, err)
					}
				default:
					t.Errorf("%s seed %d %s: %v\nops:\n%s", name, seed, mode, err, opsText(ops))
				}
			}
		}
	}
	t.Logf("%d operations ran and agreed with need_new_seg's conditions, %d sequences refused", ran, refused)
	if ran == 0 || refused == 0 {
		t.Errorf("%d ran, %d refused: the property saw only one side", ran, refused)
	}
}

// TestWritebackRefusesSSR: on the nearly full g1 volume (10 free sections, 13 reserved), an
// fsync whose pages go out of place fills the warm data log's segment while partly valid data
// segments exist: the kernel may take SSR there (need_new_seg → get_ssr_segment), so the model
// refuses the fsync, naming them, instead of opening segment 13.
func TestWritebackRefusesSSR(t *testing.T) {
	img, err := imgio.OpenFileContext(context.Background(), testutil.RawImage(t, "../core/testdata/kernel-seq/g1-enospc-nearly-full/before.img.zst"), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, mode := range core.Modes {
		q, err := source.NewSeq(context.Background(), img, mode)
		if err != nil {
			t.Fatal(err)
		}
		err = source.RunOps(context.Background(), q, img, mustOps(t, "tune ipu_policy 0\nwrite /k.bin 0 400KiB\nfsync /k.bin\n"), nil)
		var oe *source.OpError
		if !errors.As(err, &oe) || oe.Index != 2 || !errors.Is(err, core.ErrUnmodelled) || !strings.Contains(err.Error(), "need_new_seg → get_ssr_segment") {
			t.Errorf("%s: %v; want the fsync refused as SSR", mode, err)
		}
	}
}

// TestLFSNeverRefusesSSR: on the nearly full g2 volume an fsync that fills the warm data log's
// segment is refused without mode=lfs (SSR possible) and runs under `mount mode=lfs` (f2fs_need_SSR
// is false in LFS mode), every page out of place (kernel-seq l1 holds the same sequence to the
// kernel); a mount after the first operation is refused (a remount).
func TestLFSNeverRefusesSSR(t *testing.T) {
	img, err := imgio.OpenFileContext(context.Background(), testutil.RawImage(t, "../core/testdata/kernel-seq/l1-lfs-nearly-full/before.img.zst"), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, mode := range core.Modes {
		q, err := source.NewSeq(context.Background(), img, mode)
		if err != nil {
			t.Fatal(err)
		}
		plain, _ := source.NewSeq(context.Background(), img, mode)
		if err := source.RunOps(context.Background(), plain, img, mustOps(t, "write /holes.bin 0 400KiB\nfsync /holes.bin\n"), nil); !errors.Is(err, core.ErrUnmodelled) || !strings.Contains(err.Error(), "get_ssr_segment") {
			t.Errorf("%s: without mode=lfs: %v, want the fsync refused as SSR", mode, err)
		}
		var pages []core.PageWrite
		err = source.RunOps(context.Background(), q, img, mustOps(t, "mount mode=lfs\nwrite /holes.bin 0 400KiB\nfsync /holes.bin\n"), func(st *source.Step) error {
			if st.Op.Kind == request.OpFsync {
				pages = st.Other.Pages
			}
			return nil
		})
		if err != nil || len(pages) == 0 {
			t.Fatalf("%s: %v, %d pages", mode, err, len(pages))
		}
		for _, p := range pages {
			if p.How != core.WroteOutPlace {
				t.Errorf("%s: page %d written %s under mode=lfs (f2fs_should_update_outplace)", mode, p.Index, p.How)
			}
		}
		for _, bad := range []string{"sync\nmount mode=lfs\n"} {
			q, _ := source.NewSeq(context.Background(), img, mode)
			if err := source.RunOps(context.Background(), q, img, mustOps(t, bad), nil); !errors.Is(err, core.ErrUnmodelled) || !strings.Contains(err.Error(), "remount") {
				t.Errorf("%s: %q: %v, want a remount refused", mode, bad, err)
			}
		}
	}
}

// checkNoSilentSSR holds one operation's log moves to need_new_seg, computed afresh on the state
// it left (after) from the logs before it: see TestNearlyFullRefusesRatherThanGuesses.
func checkNoSilentSSR(before, after *gc.State, st *source.Step) error {
	for log := range 3 { // the data logs core's allocator opens segments for
		old, now := before.Current()[log].Segno, after.Current()[log].Segno
		if old == now || now == old+1 && now%after.SegsPerSec() != 0 {
			continue
		}
		free, rsv := after.FreeSections(), after.ReservedSections()
		// The largest dirty metadata core could count: two sections (node and inode pages of
		// fewer than a section's worth) is what these sequences leave.
		if free > 2*rsv+2 {
			continue
		}
		for segno := range after.Segments() {
			if after.Class(segno) == "dirty" && after.Segment(segno).Type <= gc.ColdData {
				return fmt.Errorf("operation %d (%s) moved data log %d from segment %d to %d with %d free sections ≤ 2 × %d reserved + 2 and segment %d partly valid: the kernel may have taken SSR, and the model did not refuse",
					st.Index+1, st.Op.OpLine(0), log, old, now, free, rsv, segno)
			}
		}
	}
	return nil
}

// randomOps draws n operations on files: writes, zeros (some keep_size), fsyncs, syncs,
// checkpoints, gc calls and the clock.
func randomOps(rng *rand.Rand, files []string, n int) []request.Op {
	var lines []string
	for range n {
		f := files[rng.IntN(len(files))]
		off := int64(rng.IntN(2048)) * 4096
		length := int64(1+rng.IntN(1024)) * 4096
		switch rng.IntN(10) {
		case 0, 1:
			lines = append(lines, fmt.Sprintf("write %s %d %d", f, off, length))
		case 2, 3:
			lines = append(lines, fmt.Sprintf("zero %s %d %d", f, off, length))
		case 4:
			lines = append(lines, fmt.Sprintf("zero %s %d %d keep_size", f, off+int64(rng.IntN(4096)), length))
		case 5:
			lines = append(lines, "fsync "+f)
		case 6:
			lines = append(lines, []string{"sync", "checkpoint"}[rng.IntN(2)])
		case 7:
			lines = append(lines, fmt.Sprintf("gc %d", rng.IntN(2)))
		case 8:
			lines = append(lines, fmt.Sprintf("now %d", rng.IntN(600)))
		case 9: // out of place from here on (no in-place updates): writeback opens segments
			lines = append(lines, "tune ipu_policy 0")
		}
	}
	ops, err := request.ParseOps(strings.NewReader(strings.Join(lines, "\n")))
	if err != nil {
		panic(err)
	}
	return ops
}

func opsText(ops []request.Op) string {
	var b strings.Builder
	for _, op := range ops {
		b.WriteString(op.OpLine(0) + "\n")
	}
	return b.String()
}
