package source_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
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
// full kernel-written volumes (one, two and four segments a section; on s1, s2, s5 and s7 after
// holes punched and checkpointed, so that SSR has candidates) either run, or are refused with
// core.ErrUnmodelled naming the kernel function, never another error. Each one that runs is
// checked against a fresh evaluation of need_new_seg from the segment manager before and after it
// (checkNoSilentSSR): every SSR victim is the one get_ssr_segment would take, and every new segment
// was opened where SSR had no candidate or f2fs_need_SSR may have been false. The test fails if
// the sequences never reach either side (nothing run, nothing refused, no SSR victim).
func TestNearlyFullRefusesRatherThanGuesses(t *testing.T) {
	dirs := []string{"g1-enospc-nearly-full", "g3-gc-short", "h2-gc-series-4seg", "s1-ssr-1seg", "s2-ssr-4seg", "s5-ssr-last-victim", "s7-ssr-2seg"}
	seeds := 12
	if testing.Short() {
		seeds = 4
	}
	ran, refused, ssr := 0, 0, 0
	for _, name := range dirs {
		img, err := imgio.OpenFileContext(context.Background(), testutil.RawImage(t, filepath.Join("../core/testdata/kernel-seq", name, "before.img.zst")), nil)
		if err != nil {
			t.Fatal(err)
		}
		var files []string
		for _, p := range []string{"/holes.bin", "/fill.bin", "/k.bin", "/a.bin", "/b.bin", "/d/f00", "/d/f01", "/d/f02", "/d/f03", "/d/f05", "/d/f07"} {
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
			if strings.HasPrefix(name, "s") {
				// s1, s2: a.bin's holes checkpointed first (as the kernel fixtures), so the random
				// writes after it find partly valid segments with room: SSR candidates.
				ops = append(mustOps(t, "punch /a.bin 0 1048576\npunch /a.bin 4194304 1048576\nsync\n"), randomOps(rng, files, 16)...)
			}
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
					ssr += len(st.SSR)
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
	t.Logf("%d operations ran and agreed with need_new_seg's conditions (%d SSR victims), %d sequences refused", ran, ssr, refused)
	if ran == 0 || refused == 0 || ssr == 0 {
		t.Errorf("%d ran (%d SSR victims), %d refused: the property saw only one side", ran, ssr, refused)
	}
}

// TestWritebackRefusesSSR: on the nearly full g1 volume (10 free sections, 13 reserved), an fsync
// whose pages go out of place fills the warm data log's segment: f2fs_need_SSR is certainly true
// there (10 ≤ 2 × 13), so need_new_seg is modelled (get_ssr_segment over the checkpointed maps)
// and the fsync is no longer refused for it; what stays refused is the collection
// f2fs_balance_fs runs after the first of its pages on this volume short of free sections.
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
		if !errors.As(err, &oe) || oe.Index != 2 || !errors.Is(err, core.ErrUnmodelled) || !strings.Contains(err.Error(), "f2fs_balance_fs") || strings.Contains(err.Error(), "get_ssr_segment") {
			t.Errorf("%s: %v; want the fsync refused for f2fs_balance_fs, not for SSR", mode, err)
		}
	}
}

// TestLFSNeverRefusesSSR: on the nearly full g2 volume an fsync fills the warm data log's segment.
// Without mode=lfs f2fs_need_SSR is true (11 free sections ≤ 2 × 13) but get_ssr_segment finds no
// victim: the volume's only partly valid data segments are the ones this fsync's own pages left,
// whose blocks are still checkpointed (ckpt_valid_blocks 512), so the log opens segment 11 as the
// kernel did on the same base (LFS or not). Under `mount mode=lfs` (f2fs_need_SSR false) every page
// goes out of place (kernel-seq l1 holds that sequence to the kernel); a mount after the first
// operation is refused (a remount).
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
		var opened []uint32
		err = source.RunOps(context.Background(), plain, img, mustOps(t, "write /holes.bin 0 400KiB\nfsync /holes.bin\n"), func(st *source.Step) error {
			if len(st.SSR) != 0 {
				t.Errorf("%s: %s: SSR victims %+v, want none (every partly valid segment is checkpointed full)", mode, st.Op.OpLine(0), st.SSR)
			}
			if st.Other != nil {
				for _, p := range st.Other.Pages {
					if p.How == core.WroteOutPlace && !slices.Contains(opened, p.Segno) {
						opened = append(opened, p.Segno)
					}
				}
			}
			return nil
		})
		if err != nil || !slices.Equal(opened, []uint32{12, 11}) {
			t.Errorf("%s: without mode=lfs: %v, the warm log wrote to segments %v; want 12, then 11", mode, err, opened)
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

// checkNoSilentSSR holds one operation to need_new_seg, computed afresh from the states before and
// after it (see TestNearlyFullRefusesRatherThanGuesses). Within an operation that writes no
// checkpoint, ckpt_valid_blocks only grows by the blocks a log writes (and a log writes only into
// its current segment), and free sections only fall; so a segment dirty both before and after the
// operation, never current, never a victim and in no section a log or a victim was in, was a
// candidate of every SSR search the operation made, at its cost before. Then:
//
//   - every SSR victim the operation reports (f2fs_get_victim in SSR mode) cost its checkpointed
//     blocks before the operation, fewer than a segment's, and was taken when f2fs_need_SSR was
//     certainly true (the free sections after ≤ 2 × reserved); no candidate of its type was
//     cheaper, and no candidate of a type get_ssr_segment searches first had room;
//   - a data log that moved to another segment without an SSR victim either took the next segment
//     of its section (is_next_segment_free) or found no candidate with room: f2fs_need_SSR false
//     needs more free sections than 2 × reserved, and where the dirty metadata bound (2 sections)
//     left it open the model may only go on when no candidate had room.
func checkNoSilentSSR(before, after *gc.State, st *source.Step) error {
	p := st.Victim()
	if st.Op.Kind == request.OpCheckpoint || p != nil && len(p.Checkpoints) > 0 {
		return nil // a checkpoint before an allocation resets ckpt_valid_map: not this reference's
	}
	// sync writes back (and moves the blocks background gc marked) before its checkpoint, so its
	// allocations see the maps before it; but its checkpoint frees sections after them.
	sync := st.Op.Kind == request.OpSync
	per := after.SegsPerSec()
	busy := map[uint32]bool{} // sections a log or a victim was in
	for _, s := range []*gc.State{before, after} {
		for _, c := range s.Current() {
			busy[c.Segno/per] = true
		}
	}
	for _, v := range st.SSR {
		busy[v.Segno/per] = true
	}
	if p != nil {
		for _, v := range victimsOf(p) {
			busy[v/per] = true
		}
	}
	candidate := func(segno uint32, typ int) bool {
		return before.Segment(segno).Type == typ && before.Class(segno) == "dirty" && after.Class(segno) == "dirty" &&
			!busy[segno/per] && !before.VictimMarked(segno) && !after.VictimMarked(segno) && before.CkptValid(segno) < gc.BlocksPerSeg
	}
	cheapest := func(typ int) (uint32, uint32, bool) {
		best, cost, found := uint32(0), uint32(gc.BlocksPerSeg), false
		for segno := range after.Segments() {
			if candidate(segno, typ) && before.CkptValid(segno) < cost {
				best, cost, found = segno, before.CkptValid(segno), true
			}
		}
		return best, cost, found
	}
	// Free sections only fall until a checkpoint: at any allocation of the operation there were at
	// most as many as before it, and (without a checkpoint) at least as many as after it.
	free, rsv := after.FreeSections(), after.ReservedSections()
	freeHi := before.FreeSections()
	for _, v := range st.SSR {
		if v.Cost >= gc.BlocksPerSeg || v.Cost != before.CkptValid(v.Segno) {
			return fmt.Errorf("operation %d (%s): SSR victim %+v: cost %d, its checkpointed blocks before %d", st.Index+1, st.Op.OpLine(0), v, v.Cost, before.CkptValid(v.Segno))
		}
		if !sync && free > 2*rsv {
			return fmt.Errorf("operation %d (%s): SSR victim %+v with %d free sections after > 2 × %d reserved: f2fs_need_SSR was not certainly true", st.Index+1, st.Op.OpLine(0), v, free, rsv)
		}
		if x, c, ok := cheapest(v.Type); ok && c < v.Cost {
			return fmt.Errorf("operation %d (%s): SSR victim %+v, but segment %d of the same type cost %d", st.Index+1, st.Op.OpLine(0), v, x, c)
		}
		for _, typ := range ssrOrder(v.Log) {
			if typ == v.Type {
				break
			}
			if x, c, ok := cheapest(typ); ok {
				return fmt.Errorf("operation %d (%s): SSR victim %+v of type %d, but segment %d of type %d (searched first) had room (cost %d)", st.Index+1, st.Op.OpLine(0), v, v.Type, x, typ, c)
			}
		}
	}
	for log := range 3 { // the data logs
		old, now := before.Current()[log].Segno, after.Current()[log].Segno
		if old == now || slices.ContainsFunc(st.SSR, func(v gc.SSRVictim) bool { return v.Log == log }) {
			continue
		}
		if nextFreeHops(before, log, old, now) {
			continue // is_next_segment_free, once or more within the section
		}
		if freeHi > 2*rsv+2 {
			continue // f2fs_need_SSR may have been false, whatever the dirty metadata
		}
		for _, typ := range ssrOrder(log) {
			if x, c, ok := cheapest(typ); ok {
				return fmt.Errorf("operation %d (%s) moved data log %d from segment %d to the new segment %d with at most %d free sections ≤ 2 × %d reserved + 2, and segment %d (type %d, %d checkpointed blocks) had room: get_ssr_segment would have taken it, and the model neither did nor refused",
					st.Index+1, st.Op.OpLine(0), log, old, now, freeHi, rsv, x, typ, c)
			}
		}
	}
	return nil
}

// nextFreeHops reports whether a log in LFS allocation can have gone from segment old to now by
// is_next_segment_free alone: now later in old's section, and every segment in between free before.
func nextFreeHops(before *gc.State, log int, old, now uint32) bool {
	per := before.SegsPerSec()
	if before.SSRLog(log) || now <= old || now/per != old/per {
		return false
	}
	for segno := old + 1; segno <= now; segno++ {
		if before.Class(segno) != "free" {
			return false
		}
	}
	return true
}

// ssrOrder is the order get_ssr_segment (segment.c:3108) searches the data types for a data log:
// its own, then from cold down (warm and cold logs) or from hot up (the hot log).
func ssrOrder(log int) []int {
	switch log {
	case gc.HotData:
		return []int{gc.HotData, gc.WarmData, gc.ColdData}
	case gc.WarmData:
		return []int{gc.WarmData, gc.ColdData, gc.HotData}
	}
	return []int{gc.ColdData, gc.WarmData, gc.HotData}
}

// victimsOf lists the sections' first segments a gc pick collected, every round.
func victimsOf(p *gc.Pick) []uint32 {
	var out []uint32
	if p.Victim != nil {
		out = append(out, *p.Victim)
	}
	for _, r := range p.Rounds {
		if r.Victim != nil {
			out = append(out, *r.Victim)
		}
	}
	return out
}

// randomOps draws n operations on files: writes, zeros (some keep_size), fsyncs, syncs,
// checkpoints, gc calls and the clock.
func randomOps(rng *rand.Rand, files []string, n int) []request.Op {
	var lines []string
	for range n {
		f := files[rng.IntN(len(files))]
		off := int64(rng.IntN(2048)) * 4096
		length := int64(1+rng.IntN(1024)) * 4096
		switch rng.IntN(11) {
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
		case 10: // holes in partly valid segments: after a checkpoint, room for SSR
			lines = append(lines, fmt.Sprintf("punch %s %d %d", f, off, length))
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

// TestGCVolumeAllocType: the checkpoint's alloc_type[] is read at mount (source.GCVolume). The
// kernel left s1's warm data log in SSR allocation (its fsync moved it into segment 11 by
// change_curseg, and no new segment followed), so the checkpoint of its after-image says SSR for that
// log and LFS for the others; its base image, written before any SSR, says LFS for all six.
func TestGCVolumeAllocType(t *testing.T) {
	for _, tc := range []struct {
		file string
		want [gc.NumLogs]bool
	}{
		{"before.img.zst", [gc.NumLogs]bool{}},
		{"after.img.zst", [gc.NumLogs]bool{gc.WarmData: true}},
		{"after.batched.img.zst", [gc.NumLogs]bool{gc.WarmData: true}},
	} {
		img, err := imgio.OpenFileContext(context.Background(), testutil.RawImage(t, "../core/testdata/kernel-seq/s1-ssr-1seg/"+tc.file), nil)
		if err != nil {
			t.Fatal(err)
		}
		v, err := source.GCVolume(img)
		img.Close()
		if err != nil {
			t.Fatal(err)
		}
		if v.AllocSSR != tc.want {
			t.Errorf("%s: alloc_type SSR %v, want %v", tc.file, v.AllocSSR, tc.want)
		}
		s, err := gc.Mount(v)
		if err != nil {
			t.Fatal(err)
		}
		if s.SSRLog(gc.WarmData) != tc.want[gc.WarmData] {
			t.Errorf("%s: the mounted warm log's SSR %v", tc.file, s.SSRLog(gc.WarmData))
		}
	}
}

// TestIPUSSR: ipu_policy 2 (F2FS_IPU_SSR alone) writes a page in place exactly when f2fs_need_SSR
// holds (check_inplace_update_policy). On s1's base (18 free sections ≤ 2 × 13) it does, as the
// kernel did (kernel-seq s8); on the demo (free sections to spare) it does not (s9); on s6's base,
// 44 free sections with 2 × 21 reserved, the answer depends on the dirty metadata the model only
// bounds, and the fsync is refused naming f2fs_need_SSR.
func TestIPUSSR(t *testing.T) {
	for _, tc := range []struct {
		base, path string
		how        string // "" : refused
	}{
		{"s1-ssr-1seg", "/b.bin", core.WroteInPlace},
		{"demo", "/cases/contiguous.bin", core.WroteOutPlace},
		{"s6-ssr-open", "/b.bin", ""},
	} {
		var img *imgio.Image
		if tc.base == "demo" {
			img = openDemo(t)
		} else {
			own, err := imgio.OpenFileContext(context.Background(), testutil.RawImage(t, "../core/testdata/kernel-seq/"+tc.base+"/before.img.zst"), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer own.Close()
			img = own
		}
		for _, mode := range core.Modes {
			q, err := source.NewSeq(context.Background(), img, mode)
			if err != nil {
				t.Fatal(err)
			}
			var pages []core.PageWrite
			err = source.RunOps(context.Background(), q, img, mustOps(t, fmt.Sprintf("tune ipu_policy 2\nwrite %s 0 4096\nfsync %s\n", tc.path, tc.path)), func(st *source.Step) error {
				if st.Op.Kind == request.OpFsync {
					pages = st.Other.Pages
				}
				return nil
			})
			switch {
			case tc.how == "":
				if !errors.Is(err, core.ErrUnmodelled) || !errors.Is(err, gc.ErrSSRUnknown) || !strings.Contains(err.Error(), "f2fs_need_SSR") {
					t.Errorf("%s %s: %v, want the fsync refused naming f2fs_need_SSR", tc.base, mode, err)
				}
			case err != nil || len(pages) != 1 || pages[0].How != tc.how:
				t.Errorf("%s %s: %v, pages %+v; want page 0 written %s", tc.base, mode, err, pages, tc.how)
			}
		}
	}
}
