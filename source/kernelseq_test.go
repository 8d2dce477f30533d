package source_test

import (
	"bytes"
	"context"
	"encoding/hex"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

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
}

type seqSeg struct {
	segno, valid uint32
	segType      int
	bitmap       [64]byte
}

func readSeqAfter(t *testing.T, name string) seqAfter {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	a := seqAfter{files: map[uint32]*seqFile{}}
	var cur *seqFile
	inSlots := false
	lines := strings.Split(string(b), "\n")
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		switch {
		case strings.HasPrefix(l, "## ino="):
			cur = &seqFile{slots: map[uint64]string{}}
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
// Node segments are not compared: node writes (checkpoint, fsync) are not modelled.
func TestKernelSeq(t *testing.T) {
	dirs, _ := filepath.Glob(filepath.Join(seqDir, "*", "result"))
	if len(dirs) == 0 {
		t.Skip("no kernel-seq fixtures")
	}
	demo := openDemo(t)
	for _, res := range dirs {
		dir := filepath.Dir(res)
		t.Run(filepath.Base(dir), func(t *testing.T) {
			// The image the operations ran on: the demo, or the case's own before.img.zst.
			img := demo
			if b, err := os.ReadFile(filepath.Join(dir, "base")); err != nil || strings.TrimSpace(string(b)) != "demo" {
				own, err := imgio.OpenFileContext(context.Background(), filepath.Join(dir, "before.img.zst"), &imgio.Options{TempDir: t.TempDir()})
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
			ops, err := request.ParseOps(bytes.NewReader(mustRead(t, filepath.Join(dir, "ops"))))
			if err != nil {
				t.Fatal(err)
			}
			for _, mode := range core.Modes {
				sfx := ""
				if mode == core.Batched {
					sfx = ".batched"
				}
				errnos := seqResult(t, filepath.Join(dir, "result"+sfx))
				if len(errnos) != len(ops) {
					t.Fatalf("%s: %d results for %d operations", mode, len(errnos), len(ops))
				}
				tr, err := ktrace.Parse(bytes.NewReader(mustRead(t, filepath.Join(dir, "ftrace"+sfx))), ktrace.Limits{})
				if err != nil {
					t.Fatal(err)
				}
				if len(tr.Ops) != len(ops) {
					t.Fatalf("%s: the ftrace log holds %d operations, the ops file %d", mode, len(tr.Ops), len(ops))
				}
				q, err := source.NewSeq(context.Background(), img, mode)
				if err != nil {
					t.Fatal(err)
				}
				for i, op := range ops {
					var f core.Input
					if op.Path != "" {
						if f, err = source.Input(img, op.Path); err != nil {
							t.Fatal(err)
						}
					}
					var errno string
					var rep *ktrace.Report
					switch op.Kind {
					case request.OpZero:
						req := op.Request(q.File(f).Inode.Size)
						r, in, _, err := q.Zero(f, req)
						if err != nil {
							t.Fatalf("%s: op %d: %v", mode, i+1, err)
						}
						errno = r.Errno
						if rep, err = ktrace.Check(tr, i, in, req, r); err != nil {
							t.Fatal(err)
						}
					default:
						var w *core.WriteResult
						switch op.Kind {
						case request.OpWrite:
							w, err = q.Write(f, op.Offset, op.Length)
						case request.OpFsync:
							w, err = q.Fsync(f)
						case request.OpSync:
							w, err = q.Sync()
						case request.OpTune:
							w, err = q.Tune(op.Name, op.Value)
						}
						if err != nil {
							t.Fatalf("%s: op %d (%s): %v", mode, i+1, op.OpLine(0), err)
						}
						errno = w.Errno
						if rep, err = ktrace.CheckOther(tr, i, mode); err != nil {
							t.Fatal(err)
						}
					}
					// The victims f2fs_balance_fs's garbage collection picked inside the op (g1
					// op 1: segment 11, greedy, cost 448), against the kernel's f2fs_get_victim
					// events; an op without a collection has none on either side.
					if d, err := ktrace.CheckVictims(tr, i, ktrace.ModelVictims(q.BalanceGC())); err != nil {
						t.Fatal(err)
					} else if d != "" {
						t.Errorf("%s: op %d (%s): %s", mode, i+1, op.OpLine(0), d)
					}
					if errno != errnos[i] {
						t.Errorf("%s: op %d (%s): errno %q, kernel %q", mode, i+1, op.OpLine(0), errno, errnos[i])
					}
					if !rep.Agree {
						d := rep.FirstDivergence
						t.Errorf("%s: op %d (%s): %d calls, kernel %d; first divergence at call %d: kernel %v, model %v",
							mode, i+1, op.OpLine(0), rep.ModelCalls, rep.Calls, d.Index, d.Kernel, d.Model)
					}
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
					fin := q.File(f)
					if fin.Inode.Size != want.size || fin.Inode.Blocks != want.blocks {
						t.Errorf("%s: %s: i_size %d i_blocks %d, kernel %d %d", mode, p, fin.Inode.Size, fin.Inode.Blocks, want.size, want.blocks)
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
				for _, sg := range after.segs {
					if sg.segType > 2 {
						continue // a node segment
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

func mustRead(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
