package gc_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/zrviz/zrviz/internal/testutil"

	"github.com/klauspost/compress/zstd"

	"github.com/zrviz/zrviz/core"
	"github.com/zrviz/zrviz/gc"
	"github.com/zrviz/zrviz/imgio"
	"github.com/zrviz/zrviz/request"
	"github.com/zrviz/zrviz/source"
)

// The kernel fixtures (testdata/README.md): an image, an ops file run on it by Linux 6.12 with
// zr-oracle, and what the kernel did: each op's result, the f2fs_get_victim tracepoint's picks
// and the in-memory segment_info at each snap.
// The b set's 2 GiB images take seconds to expand: -short leaves them out.
var kernelCases = []struct {
	name, image, ops string
	big              bool
	mountSeconds     uint64 // gc.Volume.MountSeconds: the mount crossed a second boundary
}{
	{"a-fg", "a.img.zst", "fg.ops", false, 0},
	{"a-bg", "a.img.zst", "bg.ops", false, 0},
	{"b-fg", "b.img.zst", "fg.ops", true, 0},
	{"b-bg", "b.img.zst", "bg.ops", true, 0},
	{"a-rr", "a.img.zst", "rr.ops", false, 0},
	{"b-rr", "b.img.zst", "rr.ops", true, 0},
	{"empty", "empty.img.zst", "empty.ops", false, 0},
}

// testdataDir is where the fixtures are; ZRVIZ_GC_TESTDATA points elsewhere (a fresh
// make-fixtures.sh run before its output is copied in).
func testdataDir() string {
	if d := os.Getenv("ZRVIZ_GC_TESTDATA"); d != "" {
		return d
	}
	return "testdata"
}

// kernelPick is one f2fs_get_victim event of GC (LFS mode).
type kernelPick struct {
	op     int
	typ    string // "FG" or "BG"
	policy string
	victim uint32
	cost   uint32
}

var victimRE = regexp.MustCompile(`f2fs_get_victim: .*policy = \((Foreground|Background) GC, LFS-mode, ([A-Za-z-]+)\), victim = (\d+), cost = (\d+),`)
var opRE = regexp.MustCompile(`zr_op (\d+|end)`)

func readTrace(t *testing.T, name string) map[int][]kernelPick {
	t.Helper()
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[int][]kernelPick{}
	op := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if m := opRE.FindStringSubmatch(line); m != nil && strings.Contains(line, "tracing_mark_write") {
			if m[1] == "end" {
				op = -1
			} else {
				op, _ = strconv.Atoi(m[1])
			}
			continue
		}
		m := victimRE.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		v, _ := strconv.ParseUint(m[3], 10, 32)
		c, _ := strconv.ParseUint(m[4], 10, 32)
		p := kernelPick{op: op, typ: "BG", policy: "cost-benefit", victim: uint32(v), cost: uint32(c)}
		if m[1] == "Foreground" {
			p.typ = "FG"
		}
		if m[2] == "Greedy" {
			p.policy = "greedy"
		}
		out[op] = append(out[op], p)
	}
	return out
}

// readResults returns each op's line and result (OK, ENODATA, ...), by op number.
func readResults(t *testing.T, name string) map[int][2]string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	out := map[int][2]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		f := strings.Split(line, "\t")
		if len(f) != 4 {
			t.Fatalf("%s: bad line %q", name, line)
		}
		n, _ := strconv.Atoi(f[0])
		out[n] = [2]string{f[3], f[1]}
	}
	return out
}

// readSnaps reads SET-SERIES.snaps.zst: the snap files of the series, each after a line
// "== N.segment_info" or "== N.victim_bits", and returns the text of each by name.
func readSnaps(t *testing.T, name string) map[string]string {
	t.Helper()
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	d, err := zstd.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	b, err := io.ReadAll(d)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	var cur string
	for _, line := range strings.SplitAfter(string(b), "\n") {
		if n, ok := strings.CutPrefix(line, "== "); ok {
			cur = strings.TrimSpace(n)
			continue
		}
		out[cur] += line
	}
	return out
}

// parseSegmentInfo reads /proc/fs/f2fs/DEV/segment_info: type|valid of every main segment.
func parseSegmentInfo(t *testing.T, name, text string) (types, valid []int) {
	t.Helper()
	lines := strings.Split(text, "\n")
	if len(lines) < 3 {
		t.Fatalf("%s: %d lines", name, len(lines))
	}
	for _, line := range lines[2:] {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		for _, tv := range f[1:] {
			a, c, ok := strings.Cut(tv, "|")
			if !ok {
				t.Fatalf("%s: bad entry %q", name, tv)
			}
			x, _ := strconv.Atoi(a)
			y, _ := strconv.Atoi(c)
			types, valid = append(types, x), append(valid, y)
		}
	}
	return types, valid
}

// segsPerSec is the state's section size.
func segsPerSec(s *gc.State) uint32 { return s.SegsPerSec() }

func mountImage(t *testing.T, name string, mountSeconds uint64) *gc.State {
	t.Helper()
	img, err := imgio.OpenFileContext(context.Background(), testutil.RawImage(t, name), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer img.Close()
	v, err := source.GCVolume(img)
	if err != nil {
		t.Fatal(err)
	}
	v.MountSeconds = mountSeconds
	s, err := gc.Mount(v)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// replay runs the ops of series name (its result.txt) on s and checks every gc op and snap
// against the kernel's; hook, if not nil, sees each op first and returns true for one it handled.
func replay(t *testing.T, s *gc.State, dir, name string, hook func(n int, f []string) bool) {
	t.Helper()
	results := readResults(t, filepath.Join(dir, name+".result.txt"))
	picks := readTrace(t, filepath.Join(dir, name+".trace"))
	snapFiles := readSnaps(t, filepath.Join(dir, name+".snaps.zst"))
	clock := readClock(t, dir, name)
	checked, enodata, snaps, unsure := 0, 0, 0, 0
	// crossed: an op that changed mtimes (a zero range, a move) ran across a second boundary, so
	// the clock of its later blocks, and with it max_mtime, is not known to the second; a
	// cost-benefit cost that differs after it is reported, not failed (the victim still must agree).
	crossed, crossing := false, false
	for n := 1; n <= len(results); n++ {
		line, res := results[n][0], results[n][1]
		f := strings.Fields(line)
		crossed = crossed || crossing
		c, ok := clock[n]
		if ok {
			s.Now = c[0]
		}
		crossing = ok && c[0] != c[1] && (f[0] == "zero" || f[0] == "checkpoint" || f[0] == "sync" || line == "gc 1")
		if f[0] == "show" {
			continue
		}
		if hook != nil && hook(n, f) {
			continue
		}
		switch f[0] {
		case "snap":
			sn := fmt.Sprintf("%d.segment_info", n)
			_, kvalid := parseSegmentInfo(t, sn, snapFiles[sn])
			if len(kvalid) != int(s.Segments()) {
				t.Fatalf("op %d: segment_info has %d segments, the model %d", n, len(kvalid), s.Segments())
			}
			snaps++
			// victim_bits: one digit per section (victim_secmap), ten to a line after a header.
			vb := fmt.Sprintf("%d.victim_bits", n)
			secno := uint32(0)
			for _, line := range strings.Split(snapFiles[vb], "\n")[1:] {
				f := strings.Fields(line)
				for _, d := range f[min(1, len(f)):] {
					if k, m := d == "1", s.VictimMarked(secno*segsPerSec(s)); k != m {
						t.Errorf("op %d (snap): section %d: model marked %v, kernel %v", n, secno, m, k)
					}
					secno++
				}
			}
			if secno*segsPerSec(s) != s.Segments() {
				t.Errorf("op %d (snap): victim_bits has %d sections", n, secno)
			}
			for segno, kv := range kvalid {
				if mv := s.Segment(uint32(segno)).Valid; int(mv) != kv {
					t.Errorf("op %d (snap): segment %d: model %d valid blocks, kernel %d", n, segno, mv, kv)
				}
			}
			continue
		case "sleep", "sysctl":
			continue
		}
		op, err := request.ParseGCOp(strings.Join(f, " "))
		if err != nil {
			t.Fatalf("op %d %q: %v", n, line, err)
		}
		got := s.Apply(op)
		if op.Verb != "gc" {
			continue
		}
		p := got.(*gc.Pick)
		var kp []kernelPick
		for _, k := range picks[n] {
			kp = append(kp, k)
		}
		errno := "OK"
		if p.Errno != nil {
			errno = *p.Errno
		}
		if errno != res {
			t.Errorf("op %d %s: model %s, kernel %s", n, line, errno, res)
		} else if errno == gc.ENODATA {
			enodata++
		}
		switch {
		case p.Victim == nil && len(kp) != 0:
			t.Errorf("op %d %s: model picks nothing, kernel picks %d (cost %d)", n, line, kp[0].victim, kp[0].cost)
		case p.Victim != nil && len(kp) != 1:
			t.Errorf("op %d %s: model picks %d, kernel %d picks %v", n, line, *p.Victim, len(kp), kp)
		case p.Victim != nil:
			k := kp[0]
			if *p.Victim == k.victim && p.Type == k.typ && p.Policy == k.policy && p.Cost != k.cost && crossed && p.Policy == "cost-benefit" {
				t.Logf("op %d %s: victim %d agrees; cost %d, kernel %d, after an op that crossed a second", n, line, k.victim, p.Cost, k.cost)
				unsure++
			} else if *p.Victim != k.victim || p.Cost != k.cost || p.Type != k.typ || p.Policy != k.policy {
				t.Errorf("op %d %s: model %s %s victim %d cost %d, kernel %s %s victim %d cost %d",
					n, line, p.Type, p.Policy, *p.Victim, p.Cost, k.typ, k.policy, k.victim, k.cost)
			} else {
				checked++
			}
		}
	}
	t.Logf("%d picks (victim, policy, cost), %d ENODATA and %d SIT snapshots agree with the kernel; %d victims agree at a cost the clock left unsure", checked, enodata, snaps, unsure)
}

// readClock returns the kernel's seconds since mount at each op of series name, when the series
// recorded them: NAME.show.txt's mounted_time_sec (sit_i->mounted_time) and NAME.clock.txt's
// CLOCK_BOOTTIME seconds before and after each op (the guest helper's; ktime_get_boottime_seconds
// is f2fs's clock). Nil without them.
func readClock(t *testing.T, dir, name string) map[int][2]uint64 {
	t.Helper()
	show, err := os.ReadFile(filepath.Join(dir, name+".show.txt"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var mounted uint64
	found := false
	for _, line := range strings.Split(string(show), "\n") {
		if f := strings.Fields(line); len(f) == 3 && f[1] == "mounted_time_sec" {
			if mounted, err = strconv.ParseUint(f[2], 10, 64); err != nil {
				t.Fatal(err)
			}
			found = true
		}
	}
	if !found {
		t.Fatalf("%s.show.txt: no mounted_time_sec", name)
	}
	cb, err := os.ReadFile(filepath.Join(dir, name+".clock.txt"))
	if err != nil {
		t.Fatal(err)
	}
	clock := map[int][2]uint64{}
	for _, line := range strings.Split(strings.TrimSpace(string(cb)), "\n") {
		var n int
		var before, after uint64
		if _, err := fmt.Sscanf(line, "%d\t%d\t%d", &n, &before, &after); err != nil || before < mounted || after < before {
			t.Fatalf("%s.clock.txt %q: %v", name, line, err)
		}
		clock[n] = [2]uint64{before - mounted, after - mounted}
	}
	return clock
}

// TestKernelPicks replays every fixture's ops on the model and holds each op against what Linux
// 6.12 did: every gc call's victim, policy and cost (the tracepoint's) and errno, in order, and
// the valid blocks of every segment at each snap (the kernel's in-memory SIT after the moves).
func TestKernelPicks(t *testing.T) {
	dir := testdataDir()
	for _, kc := range kernelCases {
		t.Run(kc.name, func(t *testing.T) {
			if kc.big && testing.Short() {
				t.Skip("-short: no 2 GiB image")
			}
			img := filepath.Join(dir, kc.image)
			testutil.NeedFixture(t, img)
			replay(t, mountImage(t, img, kc.mountSeconds), dir, kc.name, nil)
		})
	}
}

// TestKernelAfterImage holds the model's SIT after a foreground series, a checkpoint and the
// unmount's checkpoint against the SIT the kernel wrote (the after-image): every data segment's
// valid map bit for bit, and the node segments' valid blocks in total (the unmount rewrites the
// dnodes the moves dirtied, which the model does not place).
func TestKernelAfterImage(t *testing.T) {
	dir := testdataDir()
	for _, kc := range kernelCases {
		if !strings.HasSuffix(kc.name, "-fg") {
			continue
		}
		t.Run(kc.name, func(t *testing.T) {
			if kc.big && testing.Short() {
				t.Skip("-short: no 2 GiB image")
			}
			img := filepath.Join(dir, kc.image)
			testutil.NeedFixture(t, img)
			s := mountImage(t, img, kc.mountSeconds)
			f, err := os.Open(filepath.Join(dir, kc.ops))
			if err != nil {
				t.Fatal(err)
			}
			ops, _, err := request.ParseOracleOps(f)
			f.Close()
			if err != nil {
				t.Fatal(err)
			}
			for _, op := range ops {
				g, ok := op.GCOp()
				if !ok {
					t.Fatalf("%s: %s is not an op of the segment map", kc.ops, op.OpLine(0))
				}
				s.Apply(g)
			}
			s.Sync() // umount: sync_filesystem, then the last checkpoint
			after, err := imgio.OpenFileContext(context.Background(), testutil.RawImage(t, filepath.Join(dir, kc.name+".after.img.zst")), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer after.Close()
			segs, err := after.Segments()
			if err != nil {
				t.Fatal(err)
			}
			var kNode, mNode uint32
			data := 0
			for _, k := range segs {
				m := s.Segment(k.Segno)
				isNode := func(typ int) bool { return typ >= gc.HotNode && typ <= gc.ColdNode }
				if k.ValidBlocks > 0 && isNode(k.Type) {
					kNode += k.ValidBlocks
				}
				if m.Valid > 0 && isNode(m.Type) {
					mNode += m.Valid
				}
				if (k.ValidBlocks > 0 && !isNode(k.Type)) || (m.Valid > 0 && !isNode(m.Type)) {
					data++
					if k.ValidBlocks != m.Valid || k.Map != m.Map {
						t.Errorf("data segment %d: model %d valid, kernel %d (maps equal: %v)", k.Segno, m.Valid, k.ValidBlocks, k.Map == m.Map)
					}
				}
			}
			if kNode != mNode {
				t.Errorf("node segments hold %d valid blocks in the model, %d in the kernel's image", mNode, kNode)
			}
			t.Logf("%d data segments agree bit for bit; %d node blocks", data, kNode)
		})
	}
}

// TestKernelZeroSeries: zero ranges in the same mount (the core engine's f2fs_invalidate_blocks
// calls, per-block mode, handed to State.Invalidate), then background calls, a checkpoint,
// foreground calls, more background calls: a-zero's picks, costs and snapshots, each op at the
// kernel's clock (readClock).
func TestKernelZeroSeries(t *testing.T) {
	dir := testdataDir()
	name := filepath.Join(dir, "a.img.zst")
	testutil.NeedFixture(t, name)
	img, err := imgio.OpenFileContext(context.Background(), testutil.RawImage(t, name), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer img.Close()
	v, err := source.GCVolume(img)
	if err != nil {
		t.Fatal(err)
	}
	s, err := gc.Mount(v)
	if err != nil {
		t.Fatal(err)
	}
	main := img.Volume().MainBlkaddr
	var last *core.Input
	files := map[uint32]core.Input{}
	zeros := 0
	replay(t, s, dir, "a-zero", func(n int, f []string) bool {
		if f[0] != "zero" {
			return false
		}
		run, err := request.ParseOp(strings.Join(f, " "))
		if err != nil {
			t.Fatalf("op %d: %v", n, err)
		}
		in, err := source.Input(img, run.Path)
		if err != nil {
			t.Fatalf("op %d: %v", n, err)
		}
		if last != nil {
			if fi, ok := files[in.Inode.Ino]; ok {
				in = fi
			}
			in = last.WithFile(in)
		}
		res, err := core.Simulate(in, run.Request(in.Inode.Size), core.PerBlock)
		if err != nil || res.Errno != "" {
			t.Fatalf("op %d: %v %s", n, err, res.Errno)
		}
		for c := range res.Calls.All() {
			for a := c.Start; a < c.Start+c.Len; a++ {
				if err := s.Invalidate((a-main)/gc.BlocksPerSeg, (a-main)%gc.BlocksPerSeg); err != nil {
					t.Fatalf("op %d: %v", n, err)
				}
			}
		}
		next := res.NextInput()
		last, files[next.Inode.Ino] = &next, next
		zeros++
		return true
	})
	if zeros != 4 {
		t.Errorf("%d zero ops, want 4", zeros)
	}
}
