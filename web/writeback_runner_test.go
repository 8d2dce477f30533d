package web

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zrviz/zrviz/core"
	"github.com/zrviz/zrviz/imgio"
	"github.com/zrviz/zrviz/internal/testutil"
	"github.com/zrviz/zrviz/request"
	"github.com/zrviz/zrviz/source"
)

var wbSeed = flag.Uint64("wb-seed", 0, "the seed of TestWritebackGroupsOneRunner's random sequences (0: the clock's)")

// wbCase is a sequence the writeback view answers for: the operations before the played zero, then
// the zero (ops language lines; the last is the played one).
type wbCase struct {
	name string
	ops  string
}

// wbFixedCases hold every kind of operation the issue names (writes, fsync, a zero over dirty
// pages, sync, gc 1, checkpoint), on the demo's /cases files.
var wbFixedCases = []wbCase{
	{"write-zero-over-dirty", "write /cases/holes.bin 0 16384\nzero /cases/holes.bin 4096 8192"},
	{"partial-zero-then-zero", "zero /cases/holes.bin 67584 195560\nzero /cases/holes.bin 0 524288"},
	{"write-fsync-zero", "write /cases/holes.bin 266240 16384\nfsync /cases/holes.bin\nzero /cases/holes.bin 262144 65536"},
	{"write-sync-zero", "write /cases/contiguous.bin 1048576 65536\nsync\nzero /cases/contiguous.bin 1048576 1048576"},
	{"gc-checkpoint", "write /cases/fragmented.bin 4096 40960\nzero /cases/fragmented.bin 0 65536\nnow 30\ncheckpoint\ngc 1\nzero /cases/fragmented.bin 0 524288"},
	{"gc-greedy-then-cb", "zero /cases/rewritten.bin 0 1048576\ncheckpoint\ngc 1\nnow 60\ngc 0\nwrite /cases/rewritten.bin 4096 8192\nzero /cases/rewritten.bin 0 2097152 keep_size"},
	{"ipu-fsync", "tune ipu_policy 16\nwrite /cases/prealloc.bin 8192 12288\nfsync /cases/prealloc.bin\nzero /cases/prealloc.bin 0 1048576"},
	{"played-only", "zero /cases/indirect.bin 4190208 65536"},
	{"unaligned-write-sync-zero", "write /cases/holes.bin 1000 5000\nsync\nwrite /cases/holes.bin 700000 90000\nzero /cases/holes.bin 1000 5000"},
	{"sparse", "write /cases/sparse-9g.bin 9663676416 8192\nzero /cases/sparse-9g.bin 9663676416 4096"},
}

// wbFile is a file of an image the random sequences run on, and its size.
type wbFile struct {
	path string
	size int64
}

// wbRandomCase draws a sequence on one of files: up to six operations of
// every kind before the played zero, at page-aligned and unaligned offsets, inside the file and past
// its end.
func wbRandomCase(r *rand.Rand, files []wbFile, k int) wbCase {
	f := files[r.IntN(len(files))]
	span := func() (int64, int64) {
		off := r.Int64N(f.size + f.size/4)
		if r.IntN(2) == 0 {
			off &^= 4095
		}
		n := 1 + r.Int64N(262144)
		if r.IntN(2) == 0 {
			n = (n + 4095) &^ 4095
		}
		return off, n
	}
	zero := func() string {
		off, n := span()
		s := fmt.Sprintf("zero %s %d %d", f.path, off, n)
		if r.IntN(3) == 0 {
			s += " keep_size"
		}
		return s
	}
	var lines []string
	for range r.IntN(7) {
		switch r.IntN(9) {
		case 0, 1:
			off, n := span()
			lines = append(lines, fmt.Sprintf("write %s %d %d", f.path, off, n))
		case 2:
			lines = append(lines, "fsync "+f.path)
		case 3:
			lines = append(lines, zero())
		case 4:
			lines = append(lines, "sync")
		case 5:
			lines = append(lines, fmt.Sprintf("gc %d", r.IntN(2)))
		case 6:
			lines = append(lines, "checkpoint")
		case 7:
			lines = append(lines, fmt.Sprintf("now %d", r.IntN(600)))
		case 8:
			lines = append(lines, fmt.Sprintf("tune ipu_policy %d", []int{0, 4, 16}[r.IntN(3)]))
		}
	}
	return wbCase{fmt.Sprintf("random-%d", k), strings.Join(append(lines, zero()), "\n")}
}

// wbShortCases run on g1's nearly full volume (core/testdata/kernel-seq/g1-enospc-nearly-full:
// 11 free blocks, short of free sections from the start): f2fs_balance_fs collects inside the
// operations, writes meet ENOSPC.
var wbShortCases = []wbCase{
	{"short-g3", "gc 1\nzero /k.bin 0 8192\ngc 0\ngc 1\ncheckpoint\nzero /holes.bin 0 4096"},
	{"short-zero-enospc", "zero /holes.bin 0 786432\nsync\nzero /holes.bin 0 8192"},
	{"short-write-zero", "write /k.bin 0 8192\nzero /k.bin 0 16384"},
	{"short-write-fsync-gc", "write /holes.bin 0 4096\nfsync /holes.bin\ngc 1\ncheckpoint\nzero /holes.bin 0 4096"},
}

// TestWritebackGroupsOneRunner: the writeback view, now on the one sequence runner
// (source.RunOps), answers every sequence as its own loop did (writebackGroupsOwnLoop: the zero
// split into PrepareZero and Zero), group by group and page by page, JSON byte for byte: fixed
// sequences of every operation kind and random ones (the seed is logged; -short draws fewer), on
// the demo's /cases files and on a volume short of space, where garbage collection runs inside the
// operations.
func TestWritebackGroupsOneRunner(t *testing.T) {
	seed := *wbSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (-wb-seed replays it)", seed)
	r := rand.New(rand.NewPCG(seed, 27))
	n := 40
	if testing.Short() {
		n = 12
	}
	images := []struct {
		name  string
		image string
		fixed []wbCase
		files []wbFile
	}{
		{"demo", testutil.DemoImage(t), wbFixedCases, []wbFile{{"/cases/holes.bin", 786432}, {"/cases/contiguous.bin", 4194304},
			{"/cases/fragmented.bin", 1048576}, {"/cases/prealloc.bin", 1048576}, {"/cases/rewritten.bin", 2097152}}},
		{"short", testutil.RawImage(t, filepath.Join(kernelSeqDir, "g1-enospc-nearly-full", "before.img.zst")), wbShortCases,
			[]wbFile{{"/holes.bin", 786432}, {"/k.bin", 409600}}},
	}
	kinds := map[string]int{}
	var dirtyZero, outPlace, inPlace, checkpoints, otherSIT, refused, refusedNow int
	for _, im := range images {
		img, err := imgio.OpenFileContext(context.Background(), im.image, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { img.Close() })
		cases := append([]wbCase(nil), im.fixed...)
		for k := range n {
			cases = append(cases, wbRandomCase(r, im.files, k))
		}
		for _, c := range cases {
			t.Run(im.name+"/"+c.name, func(t *testing.T) {
				ops, err := request.ParseOps(strings.NewReader(c.ops))
				if err != nil {
					t.Fatalf("%s: %v", c.ops, err)
				}
				before, last := ops[:len(ops)-1], ops[len(ops)-1]
				played := last.Run
				base, err := source.Input(img, played.Path)
				if err != nil {
					t.Fatal(err)
				}
				ctx := context.Background()
				got, gerr := writebackGroups(ctx, img, base, before, played)
				want, werr := writebackGroupsOwnLoop(ctx, img, base, before, played)
				// The one runner's own verdict on the sequence, unmount included.
				q, err := source.NewSeq(ctx, img, core.PerBlock)
				if err != nil {
					t.Fatal(err)
				}
				rerr := source.RunOps(ctx, q, img, ops, nil)
				if rerr == nil {
					_, rerr = q.Unmount()
				}
				if rerr != nil {
					// The view refuses what the runner refuses, as the runner does.
					if gerr == nil || errors.Is(gerr, core.ErrUnmodelled) != errors.Is(rerr, core.ErrUnmodelled) {
						t.Fatalf("ops:\n%s\nthe runner refuses (%v), the view says %v", c.ops, rerr, gerr)
					}
					refused++
					if werr != nil {
						return
					}
					// Its own loop answered: it split the zero, so the pages written back before
					// the walk were no balance point of the zero's f2fs_balance_fs, and a
					// collection after the first of several went unrefused.
					var oe *source.OpError
					if !errors.As(rerr, &oe) || !errors.Is(rerr, core.ErrUnmodelled) || !ops[oe.Index].IsZero() || len(want[oe.Index].Pages) == 0 {
						t.Fatalf("ops:\n%s\nthe runner refuses (%v) where its own loop answered, not at a zero that wrote pages back", c.ops, rerr)
					}
					t.Logf("refused now, answered by its own loop (a zero's writeback was no balance point): %v", rerr)
					refusedNow++
					return
				}
				if gerr != nil || werr != nil {
					t.Fatalf("ops:\n%s\nthe runner runs it; the view says %v, its own loop %v", c.ops, gerr, werr)
				}
				gj, err := json.Marshal(got)
				if err != nil {
					t.Fatal(err)
				}
				wj, err := json.Marshal(want)
				if err != nil {
					t.Fatal(err)
				}
				if string(gj) != string(wj) {
					t.Fatalf("ops:\n%s\ngroups\n%s\nits own loop's\n%s", c.ops, gj, wj)
				}
				if len(got) != len(ops)+1 {
					t.Fatalf("%d groups for %d operations and the unmount", len(got), len(ops))
				}
				for _, g := range got {
					kinds[g.Kind]++
					if g.Kind == request.OpZero && len(g.Pages) > 0 {
						dirtyZero++
					}
					if g.Checkpoint {
						checkpoints++
					}
					if g.OtherSIT {
						otherSIT++
					}
					for _, p := range g.Pages {
						switch p.How {
						case core.WroteOutPlace:
							outPlace++
						case core.WroteInPlace:
							inPlace++
						}
					}
				}
			})
		}
	}
	t.Logf("groups by kind %v; %d zeros wrote pages back, %d pages out of place, %d in place, %d checkpoints, %d groups with other SIT changes; %d sequences refused by the runner, %d of them answered by its own loop",
		kinds, dirtyZero, outPlace, inPlace, checkpoints, otherSIT, refused, refusedNow)
	// The comparison saw every kind of operation and of writeback.
	for _, k := range []string{request.OpZero, request.OpWrite, request.OpFsync, request.OpSync, request.OpGC, request.OpCheckpoint, "unmount"} {
		if kinds[k] == 0 {
			t.Errorf("no %s compared", k)
		}
	}
	if dirtyZero == 0 || outPlace == 0 || inPlace == 0 || checkpoints == 0 {
		t.Errorf("%d zeros over dirty pages, %d pages out of place, %d in place, %d checkpoints: the test saw too little", dirtyZero, outPlace, inPlace, checkpoints)
	}
}

// writebackGroupsOwnLoop is writebackGroups as it was before it ran on source.RunOps (its own loop
// over the operations, the zero split into core.Seq.PrepareZero and core.Seq.Zero), kept as the
// reference the one runner's view must equal. It runs the sequence (the operations before the played zero, the zero, the unmount)
// on one mount of img in per-block mode, as the player resolves it (source.NewSeq, with the
// segment manager: checkpoint and gc run too; both modes write back the same pages) and says what
// writeback did at each operation.
func writebackGroupsOwnLoop(ctx context.Context, img *imgio.Image, base core.Input, before []request.Op, played request.Run) ([]wbGroup, error) {
	q, err := source.NewSeq(ctx, img, core.PerBlock)
	if err != nil {
		return nil, err
	}
	var out []wbGroup
	// prevSIT is the SIT before the next operation: frozen, as every state the Seq leaves.
	prevSIT := func() core.SITSource {
		if vol, _, ok := q.State(); ok {
			return vol.SIT
		}
		return base.SIT
	}
	add := func(g wbGroup, prev core.SITSource, ps []core.PageWrite) error {
		g.Pages = []wbPage{}
		if err := sitChangesOwnLoop(q, prev, &g, ps); err != nil {
			return err
		}
		if g.Via == "" {
			g.Via = wbVia[g.Kind]
		}
		if g.Via == "" {
			g.Via = g.Kind
		}
		g.Dirtied = uint64(len(q.File(base).Inode.Dirty))
		out = append(out, g)
		return ctx.Err()
	}
	zero := func(n int, line string, req core.Request, isPlayed bool) error {
		prev := prevSIT()
		_, ps, err := q.PrepareZero(base, req)
		if err != nil {
			return err
		}
		if err := add(wbGroup{Op: n, Line: line, Kind: request.OpZero, Played: isPlayed}, prev, ps); err != nil {
			return err
		}
		// The pages of the range are clean now: Zero's own PrepareZero writes none.
		res, _, _, err := q.Zero(base, req)
		if err != nil {
			return err
		}
		g := &out[len(out)-1]
		g.Errno = res.Errno
		// fill_zero's partial pages are dirty from the walk on.
		g.Dirtied = uint64(len(q.File(base).Inode.Dirty))
		return nil
	}
	for i, op := range before {
		if op.IsZero() {
			if err := zero(i+1, op.OpLine(0), op.Request(q.File(base).Inode.Size), false); err != nil {
				return nil, fmt.Errorf("operation %d (%s): %w", i+1, op.OpLine(0), err)
			}
			continue
		}
		prev := prevSIT()
		res, err := op.ApplyOther(q, base)
		if err != nil {
			return nil, fmt.Errorf("operation %d (%s): %w", i+1, op.OpLine(0), err)
		}
		g := wbGroup{Op: i + 1, Line: op.OpLine(0), Kind: op.Kind, Errno: res.Errno, Checkpoint: res.Checkpoint}
		if err := add(g, prev, res.Pages); err != nil {
			return nil, err
		}
	}
	n := len(before) + 1
	req := played.Request(q.File(base).Inode.Size)
	line := request.Run{Path: played.Path, Offset: req.Offset, Length: req.Length, HasLength: true, KeepSize: req.KeepSize}.OpLine(0)
	if err := zero(n, line, req, true); err != nil {
		return nil, fmt.Errorf("the played zero (%s): %w", line, err)
	}
	prev := prevSIT()
	res, err := q.Unmount()
	if err != nil {
		return nil, fmt.Errorf("unmount: %w", err)
	}
	if err := add(wbGroup{Op: n + 1, Line: "unmount", Kind: "unmount", Checkpoint: res.Checkpoint}, prev, res.Pages); err != nil {
		return nil, err
	}
	return out, nil
}

// sitChangesOwnLoop is sitChanges as writebackGroupsOwnLoop called it: it fills g.Pages from ps, the pages an operation wrote back just now on q, with the SIT
// bits each changed and the segment's valid count around it: counted on from prev, the SIT before
// the operation (a frozen state: later operations do not change it), page by page. Where the
// counts do not reach q's SIT after the operation, the operation changed those segments otherwise
// too (garbage collection inside it): g.OtherSIT says so.
func sitChangesOwnLoop(q *core.Seq, prev core.SITSource, g *wbGroup, ps []core.PageWrite) error {
	vol, _, ok := q.State()
	if !ok {
		for _, p := range ps {
			g.Pages = append(g.Pages, wbPage{PageWrite: p, Func: pageFunc(p.How), SIT: []wbBit{}})
		}
		return nil
	}
	v := vol.Volume
	now := map[uint32]uint32{}
	count := func(segno uint32) (uint32, error) {
		if n, ok := now[segno]; ok {
			return n, nil
		}
		n, _, err := prev.SegmentValidMap(segno)
		if err != nil {
			return 0, fmt.Errorf("segment %d: %w", segno, err)
		}
		return n, nil
	}
	bit := func(a uint32, set bool) (wbBit, error) {
		r := a - v.MainBlkaddr
		b := wbBit{Segno: r / v.BlocksPerSeg, Bit: r % v.BlocksPerSeg, Addr: a, Set: set}
		n, err := count(b.Segno)
		if err != nil {
			return b, err
		}
		b.Before, b.After = n, n+1
		if !set {
			if n == 0 {
				return b, fmt.Errorf("segment %d: a bit cleared by writeback, yet the model counts 0 valid blocks", b.Segno)
			}
			b.After = n - 1
		}
		now[b.Segno] = b.After
		return b, nil
	}
	for _, p := range ps {
		wp := wbPage{PageWrite: p, Func: pageFunc(p.How), SIT: []wbBit{}}
		if p.How == core.WroteOutPlace {
			if isAddrValue(p.Old) && p.Old >= v.MainBlkaddr {
				b, err := bit(p.Old, false)
				if err != nil {
					return err
				}
				wp.SIT = append(wp.SIT, b)
			}
			b, err := bit(p.New, true)
			if err != nil {
				return err
			}
			wp.SIT = append(wp.SIT, b)
		}
		g.Pages = append(g.Pages, wp)
	}
	for segno, n := range now {
		after, _, err := vol.SIT.SegmentValidMap(segno)
		if err != nil {
			return fmt.Errorf("segment %d: %w", segno, err)
		}
		if after != n {
			g.OtherSIT = true
		}
	}
	return nil
}

// TestWritebackRefusesWithTheRunner: on a volume short of space, the writeback view answers what
// the one runner runs and refuses (422, core.ErrUnmodelled) what it refuses, as the player's next
// panel, which runs the same sequence, does: a write's dirty pages written back by the played zero
// before its walk are balance points of the zero's f2fs_balance_fs, and a collection after the
// first of several is not modelled. Its own loop answered that sequence.
func TestWritebackRefusesWithTheRunner(t *testing.T) {
	ts := mustOpenServer(t, Config{})
	img, err := imgio.OpenFileContext(context.Background(), testutil.RawImage(t, filepath.Join(kernelSeqDir, "g1-enospc-nearly-full", "before.img.zst")), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ts.AddImage("short", "before.img", img); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		run    url.Values
		status int
	}{
		// g3's operations on one file: f2fs_balance_fs collects after the zero's one chunk.
		{"gc, zero, gc", url.Values{"path": {"/holes.bin"}, "offset": {"0"}, "length": {"4096"},
			FieldBefore: {"gc 1", "zero /holes.bin 0 8192", "gc 0", "gc 1", "checkpoint"}}, http.StatusOK},
		{"write, zero over it", url.Values{"path": {"/k.bin"}, "offset": {"0"}, "length": {"16384"},
			FieldBefore: {"write /k.bin 0 8192"}}, http.StatusUnprocessableEntity},
	} {
		t.Run(c.name, func(t *testing.T) {
			var wb wbBody
			code := ts.get(t, "/api/images/short/writeback?"+c.run.Encode(), &wb)
			if code != c.status {
				t.Fatalf("writeback: status %d, want %d", code, c.status)
			}
			if code == http.StatusOK && len(wb.Groups) != len(c.run[FieldBefore])+2 {
				t.Errorf("writeback: %d groups for %d operations, the played zero and the unmount", len(wb.Groups), len(c.run[FieldBefore]))
			}
			var next nextBody
			if code := ts.get(t, "/api/images/short/next?"+c.run.Encode(), &next); code != c.status {
				t.Errorf("next panel: status %d, the writeback view's %d", code, c.status)
			}
			// Its own loop answered both.
			ops := []request.Op{}
			for _, line := range c.run[FieldBefore] {
				op, err := request.ParseOp(line)
				if err != nil {
					t.Fatal(err)
				}
				ops = append(ops, op)
			}
			played, err := request.Parse(c.run.Get)
			if err != nil {
				t.Fatal(err)
			}
			base, err := source.Input(img, played.Path)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := writebackGroupsOwnLoop(context.Background(), img, base, ops, played); err != nil {
				t.Errorf("its own loop: %v", err)
			}
		})
	}
}

// BenchmarkWritebackGroups measures the writeback view on the one runner against its own loop, on
// the fixed sequence of every operation kind on /cases/fragmented.bin.
func BenchmarkWritebackGroups(b *testing.B) {
	img, err := imgio.OpenFileContext(context.Background(), testutil.DemoImage(b), nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { img.Close() })
	ops, err := request.ParseOps(strings.NewReader(wbFixedCases[4].ops))
	if err != nil {
		b.Fatal(err)
	}
	before, played := ops[:len(ops)-1], ops[len(ops)-1].Run
	base, err := source.Input(img, played.Path)
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name string
		f    func(context.Context, *imgio.Image, core.Input, []request.Op, request.Run) ([]wbGroup, error)
	}{{"runner", writebackGroups}, {"own-loop", writebackGroupsOwnLoop}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.f(context.Background(), img, base, before, played); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
