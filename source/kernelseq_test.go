package source_test

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/zrviz/zrviz/internal/testutil"

	"github.com/klauspost/compress/zstd"

	"github.com/zrviz/zrviz/core"
	"github.com/zrviz/zrviz/imgio"
	"github.com/zrviz/zrviz/ktrace"
	"github.com/zrviz/zrviz/request"
	"github.com/zrviz/zrviz/source"
)

const seqDir = "../core/testdata/kernel-seq"

// seqAfter is a kernel-seq case's after.txt: per file its i_size, i_blocks and listed slots, and
// the SIT entries of the segments the operations touched.
type seqAfter struct {
	files map[uint32]*seqFile
	segs  []seqSeg
}

type seqFile struct {
	ino    uint32
	size   int64
	blocks uint64
	slots  map[uint64]string // index → "NEW", "NULL" or a decimal address
	// comprBlocks is the inode's i_compr_blocks (dump.f2fs -i), when it has the field (-1: not).
	comprBlocks int64
}

type seqSeg struct {
	segno, valid uint32
	segType      int
	bitmap       [64]byte
}

func readSeqAfter(t *testing.T, name string) seqAfter {
	t.Helper()
	b := readFtrace(t, name) // NAME or NAME.zst (s5's after.txt lists 38,144 slots)
	a := seqAfter{files: map[uint32]*seqFile{}}
	var cur *seqFile
	inSlots := false
	lines := strings.Split(string(b), "\n")
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		switch {
		case strings.HasPrefix(l, "## ino="):
			cur = &seqFile{slots: map[uint64]string{}, comprBlocks: -1}
			for _, f := range strings.Fields(strings.TrimPrefix(l, "##")) {
				k, v, _ := strings.Cut(f, "=")
				switch k {
				case "ino":
					n, _ := strconv.ParseUint(v, 10, 32)
					cur.ino = uint32(n)
				case "size":
					cur.size, _ = strconv.ParseInt(v, 10, 64)
				case "i_blocks":
					cur.blocks, _ = strconv.ParseUint(v, 10, 64)
				}
			}
			a.files[cur.ino] = cur
			inSlots = false
		case cur != nil && strings.HasPrefix(strings.TrimSpace(l), "i_compr_blocks "):
			// "  i_compr_blocks [0x 12 : 18]"
			if _, v, ok := strings.Cut(l, ":"); ok {
				cur.comprBlocks, _ = strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "]")), 10, 64)
			}
		case strings.HasPrefix(l, "# slots"):
			inSlots = cur != nil
		case strings.HasPrefix(l, "segno "):
			// segno S vblocks A -> B seg_type T -> U (blocks …), then "  map xx xx …"
			f := strings.Fields(l)
			var sg seqSeg
			n, _ := strconv.ParseUint(f[1], 10, 32)
			sg.segno = uint32(n)
			n, _ = strconv.ParseUint(f[5], 10, 32)
			sg.valid = uint32(n)
			sg.segType, _ = strconv.Atoi(f[9])
			if i+1 < len(lines) && strings.TrimSpace(lines[i+1]) == "map (no entry)" {
				i++ // dump.f2fs shows no entry: no valid block, an empty map
			} else if i+1 < len(lines) && strings.HasPrefix(strings.TrimSpace(lines[i+1]), "map") {
				i++
				hx := strings.Join(strings.Fields(strings.TrimPrefix(strings.TrimSpace(lines[i]), "map")), "")
				m, err := hex.DecodeString(hx)
				if sg.valid == 0 && (err != nil || len(m) != 64) {
					// dump.f2fs prints no map for an entry with no valid block; seqdump.py then
					// picked a stray word up (h1's segment 247: "map 22"). 0 valid is an empty map.
					a.segs = append(a.segs, sg)
					inSlots = false
					continue
				}
				if err != nil || len(m) != 64 {
					t.Fatalf("%s: bad map line %q", name, lines[i])
				}
				copy(sg.bitmap[:], m)
			}
			a.segs = append(a.segs, sg)
			inSlots = false
		case strings.HasPrefix(l, "#"):
			inSlots = false
		case inSlots && strings.TrimSpace(l) != "":
			idx, val, ok := strings.Cut(strings.TrimSpace(l), " ")
			n, err := strconv.ParseUint(idx, 10, 64)
			if !ok || err != nil {
				continue
			}
			cur.slots[n] = strings.TrimSpace(val)
		}
	}
	return a
}

// seqResult reads result / result.batched: one line per operation, "N<TAB>ERRNO<TAB>µs<TAB>op".
func seqResult(t *testing.T, name string) []string {
	t.Helper()
	var out []string
	for _, l := range readLines(t, name) {
		f := strings.Split(l, "\t")
		if len(f) < 2 {
			t.Fatalf("%s: bad line %q", name, l)
		}
		e := f[1]
		if e == "OK" {
			e = ""
		}
		out = append(out, e)
	}
	return out
}

// slotAt returns the model's slot at index in after.txt's words.
func slotAt(ext []core.Extent, index uint64) string {
	for _, e := range ext {
		if index >= e.Index && index < e.Index+e.Count {
			switch e.State {
			case "addr":
				return strconv.FormatUint(uint64(e.Addr)+index-e.Index, 10)
			case "new":
				return "NEW"
			case "null":
				return "NULL"
			case "compress":
				return "COMPRESS" // seqdump.py's word for COMPRESS_ADDR
			}
			return e.State
		}
	}
	return "NULL"
}

// TestKernelSeq replays every kernel-written sequence in core/testdata/kernel-seq (Linux 6.12.117,
// stock and batched modules, on the demo image) on a core.Seq in the matching mode and checks, op by
// op, the errno and the f2fs_invalidate_blocks calls against the kernel's own ftrace log (zr_op
// markers around every operation), and after an unmount the i_size, i_blocks and slots of every
// file the after-image lists and the SIT (valid count and map) of every data segment it lists.
// Node segments are compared only where the model placed every node write (gc.State.NodeSlack 0):
// the node pages a checkpoint, sync or fsync writes are not placed, and what they could change is
// refused (gc/nodes.go).
func TestKernelSeq(t *testing.T) {
	dirs := testutil.NeedFixtures(t, filepath.Join(seqDir, "*", "result"))
	demo := openDemo(t)
	nodeCompared, nodeRefused := 0, 0
	defer func() {
		t.Logf("node segments of the after-images: %d compared, %d refused (node pages written where the model does not place them)", nodeCompared, nodeRefused)
	}()
	for _, res := range dirs {
		dir := filepath.Dir(res)
		t.Run(filepath.Base(dir), func(t *testing.T) {
			// The image the operations ran on: the demo, or the case's own before.img.zst.
			img := demo
			if b, err := os.ReadFile(filepath.Join(dir, "base")); err != nil || strings.TrimSpace(string(b)) != "demo" {
				own, err := imgio.OpenFileContext(context.Background(), testutil.RawImage(t, filepath.Join(dir, "before.img.zst")), nil)
				if err != nil {
					t.Fatalf("no base: %v", err)
				}
				t.Cleanup(func() { own.Close() })
				img = own
			}
			paths := map[uint32]string{}
			entries, err := img.Files()
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range entries {
				if e.Type == imgio.FileType("file") {
					paths[e.Ino] = e.Path
				}
			}
			ops, at := seqOps(t, filepath.Join(dir, "ops"))
			for _, mode := range core.Modes {
				sfx := ""
				if mode == core.Batched {
					sfx = ".batched"
				}
				errnos := seqResult(t, filepath.Join(dir, "result"+sfx))
				kernelOps := len(errnos)
				if len(ops) > 0 && at[len(ops)-1] >= kernelOps {
					t.Fatalf("%s: %d results for %d operations", mode, len(errnos), at[len(ops)-1]+1)
				}
				tr, err := ktrace.Parse(bytes.NewReader(readFtrace(t, filepath.Join(dir, "ftrace"+sfx))), ktrace.Limits{})
				if err != nil {
					t.Fatal(err)
				}
				if len(tr.Ops) != kernelOps {
					t.Fatalf("%s: the ftrace log holds %d operations, the result file %d", mode, len(tr.Ops), kernelOps)
				}
				clock := seqClock(t, dir, sfx)
				q, err := source.NewSeq(context.Background(), img, mode)
				if err != nil {
					t.Fatal(err)
				}
				// crossed: an op that changed mtimes ran across a second boundary, so the clock of its
				// later blocks (and max_mtime) is not known to the second: cost-benefit costs after it
				// are reported, not failed (victims, policies and greedy costs must agree).
				crossed := false
				// The sequence runs through the one runner (source.RunOps), the kernel's clock before
				// each op given as a now op (the ops language's own clock), so every fixture holds the
				// runner to the kernel: calls, errnos and victims op by op.
				var seq []request.Op
				var kernelAt []int // per op of seq: its number in the kernel's run; -1 for a clock op
				// Mount options the image does not record (the case's `mount` file: ZR_MOUNT_OPTS).
				if b, err := os.ReadFile(filepath.Join(dir, "mount")); err == nil {
					for _, o := range strings.Fields(string(b)) {
						seq = append(seq, request.Op{Kind: request.OpMount, Name: o})
						kernelAt = append(kernelAt, -1)
					}
				}
				for j, op := range ops {
					if c, ok := clock[at[j]+1]; ok {
						seq = append(seq, request.Op{Kind: request.OpNow, Value: c[0]})
						kernelAt = append(kernelAt, -1)
					}
					seq = append(seq, op)
					kernelAt = append(kernelAt, at[j])
				}
				err = source.RunOps(context.Background(), q, img, seq, func(st *source.Step) error {
					i, op := kernelAt[st.Index], st.Op
					if i < 0 {
						return nil
					}
					var errno string
					var rep *ktrace.Report
					var err error
					if op.Walks() {
						errno = st.Walk.Errno
						if rep, err = ktrace.Check(tr, i, st.File, st.Request, st.Walk); err != nil {
							t.Fatal(err)
						}
					} else {
						errno = st.Other.Errno
						if rep, err = ktrace.CheckOther(tr, i, mode); err != nil {
							t.Fatal(err)
						}
					}
					// The victims of a gc op, or of f2fs_balance_fs's collection inside another op
					// (g1 op 1: segment 11, greedy, cost 448), against the kernel's f2fs_get_victim
					// events in order; an op without a collection has none on either side.
					kv, mv := tr.Ops[i].Victims, ktrace.ModelVictims(st.Victim())
					if len(kv) != len(mv) {
						t.Errorf("%s: op %d (%s): %d victims, kernel %d (%+v, kernel %+v)", mode, i+1, op.OpLine(0), len(mv), len(kv), mv, kv)
					}
					for k := range min(len(kv), len(mv)) {
						m, kk := mv[k], kv[k]
						switch {
						case m.Type != kk.Type || m.Policy != kk.Policy || m.Segno != kk.Segno:
							t.Errorf("%s: op %d (%s): victim %d: %+v, kernel %+v", mode, i+1, op.OpLine(0), k+1, m, kk)
						case m.Cost != kk.Cost && (m.Policy == "greedy" || !crossed):
							t.Errorf("%s: op %d (%s): victim %d cost %d, kernel %d", mode, i+1, op.OpLine(0), k+1, m.Cost, kk.Cost)
						case m.Cost != kk.Cost:
							t.Logf("%s: op %d (%s): victim %d cost %d, kernel %d (the clock crossed a second in an earlier op)", mode, i+1, op.OpLine(0), k+1, m.Cost, kk.Cost)
						}
					}
					// The SSR searches of the op (need_new_seg → get_ssr_segment, f2fs_get_victim in
					// SSR mode): type searched, segment and ckpt_valid_blocks, in order (s1, s2).
					if ks, ms := tr.Ops[i].SSR, ktrace.ModelSSR(st.SSR); !reflect.DeepEqual(ks, ms) {
						t.Errorf("%s: op %d (%s): SSR victims %+v, kernel %+v", mode, i+1, op.OpLine(0), ms, ks)
					}
					if c, ok := clock[i+1]; ok && c[0] != c[1] && op.Kind != request.OpTune && op.Kind != request.OpNow {
						crossed = true
					}
					if errno != errnos[i] {
						t.Errorf("%s: op %d (%s): errno %q, kernel %q", mode, i+1, op.OpLine(0), errno, errnos[i])
					}
					if !rep.Agree {
						d := rep.FirstDivergence
						t.Errorf("%s: op %d (%s): %d calls, kernel %d; first divergence at call %d: kernel %v, model %v",
							mode, i+1, op.OpLine(0), rep.ModelCalls, rep.Calls, d.Index, d.Kernel, d.Model)
					}
					return nil
				})
				if refused, ok := testutil.KernelSeqRefusal(t, dir); ok {
					// The model refuses this operation (ErrUnmodelled naming the kernel function)
					// rather than guess: the operations before it were held to the kernel above;
					// no after-state is left to compare.
					var oe *source.OpError
					if !errors.As(err, &oe) || !errors.Is(err, core.ErrUnmodelled) || kernelAt[oe.Index]+1 != refused.Op || !strings.Contains(err.Error(), refused.Function) {
						t.Fatalf("%s: want operation %d refused naming %s, got %v", mode, refused.Op, refused.Function, err)
					}
					t.Logf("%s: operation %d refused as the case says: %v", mode, refused.Op, err)
					continue
				}
				if err != nil {
					t.Fatalf("%s: %v", mode, err)
				}
				if _, err := q.Unmount(); err != nil {
					t.Fatal(err)
				}
				after := readSeqAfter(t, filepath.Join(dir, "after"+sfx+".txt"))
				if len(after.files) == 0 {
					t.Fatalf("%s: after%s.txt lists no file", mode, sfx)
				}
				for ino, want := range after.files {
					p, ok := paths[ino]
					if !ok {
						t.Fatalf("inode %d is not a file of the demo", ino)
					}
					f, err := source.Input(img, p)
					if err != nil {
						t.Fatal(err)
					}
					if q.Unlinked(ino) {
						// The sequence unlinked it: its NAT entry is free in the after-image, which
						// dump.f2fs reads as an inode of size 0 and no block (its slots are whatever
						// the freed block held).
						if want.size != 0 || want.blocks != 0 {
							t.Errorf("%s: %s: unlinked by the model; the kernel's after-image has i_size %d i_blocks %d", mode, p, want.size, want.blocks)
						}
						continue
					}
					fin := q.File(f)
					if fin.Inode.Size != want.size || fin.Inode.Blocks != want.blocks {
						t.Errorf("%s: %s: i_size %d i_blocks %d, kernel %d %d", mode, p, fin.Inode.Size, fin.Inode.Blocks, want.size, want.blocks)
					}
					if want.comprBlocks >= 0 && fin.Inode.Flags&core.FlagCompressed != 0 && int64(fin.Inode.ComprBlocks) != want.comprBlocks {
						t.Errorf("%s: %s: i_compr_blocks %d, kernel %d", mode, p, fin.Inode.ComprBlocks, want.comprBlocks)
					}
					ext, err := core.SlotMap(fin)
					if err != nil {
						t.Fatal(err)
					}
					bad := 0
					for idx, v := range want.slots {
						if got := slotAt(ext, idx); got != v {
							if bad < 5 {
								t.Errorf("%s: %s: slot %d = %s, kernel %s", mode, p, idx, got, v)
							}
							bad++
						}
					}
					if bad > 0 {
						t.Errorf("%s: %s: %d of %d listed slots differ", mode, p, bad, len(want.slots))
					}
				}
				vol, _, ok := q.State()
				if !ok {
					t.Fatal("no state after the operations")
				}
				// A segment the model changed that the after-image does not list was left as it was
				// by the kernel: the model must leave it so too.
				listed := map[uint32]bool{}
				for _, sg := range after.segs {
					listed[sg.segno] = true
				}
				for _, no := range q.Touched() {
					if listed[no] {
						continue
					}
					valid, bm, err := vol.SIT.SegmentValidMap(no)
					if err != nil {
						t.Fatal(err)
					}
					v0, bm0, err := img.SegmentValidMap(no)
					if err != nil {
						t.Fatal(err)
					}
					if valid != v0 || bm != bm0 {
						t.Errorf("%s: segment %d: the model changed it (%d → %d valid); the kernel did not", mode, no, v0, valid)
					}
				}
				// Node segments: compared where the model says it knows them — no node page was
				// written where it does not place it (gc.State.NodeSlack 0); otherwise the after-image's
				// node SIT is refused (f2fs_sync_node_pages → f2fs_do_write_node_page).
				nodesKnown := q.GCState().NodeSlack() == 0
				for _, sg := range after.segs {
					if sg.segType > 2 && !nodesKnown {
						nodeRefused++
						continue
					}
					if sg.segType > 2 {
						nodeCompared++
					}
					valid, bm, err := vol.SIT.SegmentValidMap(sg.segno)
					if err != nil {
						t.Fatal(err)
					}
					if valid != sg.valid || bm != sg.bitmap {
						t.Errorf("%s: segment %d: %d valid, map %x; kernel %d, %x", mode, sg.segno, valid, bm, sg.valid, sg.bitmap)
					}
				}
			}
		})
	}
}

// seqOps reads a case's ops file in the model's language. Lines only the oracle's guest helper
// knows (sysctl, show, snap, sleep: they change nothing the model holds) are skipped but keep
// their number, since the kernel's markers and result lines count them; the helper's buffered
// pattern write `pwrite PATH OFF LEN pattern nosync` is the language's `write PATH OFF LEN`.
// at[j] is op j's 0-based number in the kernel's run.
func seqOps(t *testing.T, name string) (ops []request.Op, at []int) {
	t.Helper()
	n := 0
	for _, l := range strings.Split(string(mustRead(t, name)), "\n") {
		if i := strings.Index(l, "#"); i >= 0 {
			l = l[:i]
		}
		f := strings.Fields(l)
		if len(f) == 0 {
			continue
		}
		n++
		switch {
		case f[0] == "sysctl" || f[0] == "show" || f[0] == "snap" || f[0] == "sleep":
			continue
		case f[0] == "pwrite" && len(f) == 6 && f[4] == "pattern" && f[5] == "nosync":
			l = strings.Join([]string{"write", f[1], f[2], f[3]}, " ")
		}
		op, err := request.ParseOp(l)
		if err != nil {
			t.Fatalf("%s: op %d: %v", name, n, err)
		}
		ops, at = append(ops, op), append(at, n-1)
	}
	return ops, at
}

// seqClock reads a case's clock (clock.txt: op, CLOCK_BOOTTIME seconds before and after it;
// show.txt: mounted_time_sec) as seconds since mount per 1-based op; nil without them.
func seqClock(t *testing.T, dir, sfx string) map[int][2]uint64 {
	t.Helper()
	sb, err := os.ReadFile(filepath.Join(dir, "show"+sfx+".txt"))
	if err != nil {
		return nil
	}
	var mounted uint64
	found := false
	for _, l := range strings.Split(string(sb), "\n") {
		if f := strings.Fields(l); len(f) == 3 && f[1] == "mounted_time_sec" {
			mounted, err = strconv.ParseUint(f[2], 10, 64)
			found = err == nil
		}
	}
	if !found {
		t.Fatalf("%s/show%s.txt: no mounted_time_sec", dir, sfx)
	}
	out := map[int][2]uint64{}
	for _, l := range readLines(t, filepath.Join(dir, "clock"+sfx+".txt")) {
		var n int
		var b0, b1 uint64
		if _, err := fmt.Sscanf(l, "%d\t%d\t%d", &n, &b0, &b1); err != nil || b0 < mounted || b1 < b0 {
			t.Fatalf("%s/clock%s.txt %q: %v", dir, sfx, l, err)
		}
		out[n] = [2]uint64{b0 - mounted, b1 - mounted}
	}
	return out
}

// readFtrace reads a case's raw ftrace, NAME or its zstd-compressed NAME.zst (the later cases,
// whose gc moves make the logs large); after.txt files are read with it too.
func readFtrace(t *testing.T, name string) []byte {
	t.Helper()
	if _, err := os.Stat(name); err == nil {
		return mustRead(t, name)
	}
	zr, err := zstd.NewReader(bytes.NewReader(mustRead(t, name+".zst")))
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	b, err := io.ReadAll(zr)
	if err != nil {
		t.Fatalf("%s.zst: %v", name, err)
	}
	return b
}

func mustRead(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
