package web

import (
	"context"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/zrviz/zrviz/internal/testutil"

	"github.com/zrviz/zrviz/core"
	"github.com/zrviz/zrviz/imgio"
	"github.com/zrviz/zrviz/request"
	"github.com/zrviz/zrviz/source"
)

// seqPages runs ops on path of img on a fresh core.Seq as zrviz run --ops does (each zero's
// writeback before its walk, the other operations' writeback, the unmount's) and returns the pages
// each wrote back, and the valid count of every segment they touched as the writeback left it (for
// a zero: before its walk, on a second Seq that stops there: core.Seq.PrepareZero).
func seqPages(t *testing.T, img *imgio.Image, path string, ops []request.Op) ([][]core.PageWrite, []map[uint32]uint32, []int) {
	t.Helper()
	base, err := source.Input(img, path)
	if err != nil {
		t.Fatal(err)
	}
	q, err := source.NewSeq(context.Background(), img, core.PerBlock)
	if err != nil {
		t.Fatal(err)
	}
	split, err := source.NewSeq(context.Background(), img, core.PerBlock)
	if err != nil {
		t.Fatal(err)
	}
	var pages [][]core.PageWrite
	var valid []map[uint32]uint32
	var dirty []int
	counts := func(s *core.Seq, ps []core.PageWrite) map[uint32]uint32 {
		vol, _, _ := s.State()
		m := map[uint32]uint32{}
		for _, p := range ps {
			for _, a := range []uint32{p.Old, p.New} {
				if p.How != core.WroteOutPlace || !isAddrValue(a) {
					continue
				}
				segno := (a - vol.Volume.MainBlkaddr) / 512
				n, _, err := vol.SIT.SegmentValidMap(segno)
				if err != nil {
					t.Fatal(err)
				}
				m[segno] = n
			}
		}
		return m
	}
	for _, op := range ops {
		if op.IsZero() {
			_, _, ps, err := q.Zero(base, op.Request(q.File(base).Inode.Size))
			if err != nil {
				t.Fatal(err)
			}
			req := op.Request(split.File(base).Inode.Size)
			_, sp, err := split.PrepareZero(base, req)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(sp, ps) {
				t.Fatalf("%s: PrepareZero wrote %+v, Zero %+v", op.OpLine(0), sp, ps)
			}
			pages, valid = append(pages, ps), append(valid, counts(split, sp))
			if _, _, _, err := split.Zero(base, req); err != nil {
				t.Fatal(err)
			}
			dirty = append(dirty, len(q.File(base).Inode.Dirty))
			continue
		}
		if op.Walks() {
			// A punch or a truncate writes nothing back (it drops the pages it covers).
			for _, s := range []*core.Seq{q, split} {
				if _, _, _, err := s.Walk(base, op.Request(s.File(base).Inode.Size)); err != nil {
					t.Fatal(err)
				}
			}
			pages, valid = append(pages, []core.PageWrite{}), append(valid, map[uint32]uint32{})
			dirty = append(dirty, len(q.File(base).Inode.Dirty))
			continue
		}
		w, err := op.ApplyOther(q, base)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := op.ApplyOther(split, base); err != nil {
			t.Fatal(err)
		}
		pages, valid = append(pages, w.Pages), append(valid, counts(q, w.Pages))
		dirty = append(dirty, len(q.File(base).Inode.Dirty))
	}
	w, err := q.Unmount()
	if err != nil {
		t.Fatal(err)
	}
	pages, valid = append(pages, w.Pages), append(valid, counts(q, w.Pages))
	return pages, valid, append(dirty, len(q.File(base).Inode.Dirty))
}

// TestWritebackMatchesSeq: what the player says writeback did, operation by operation and page by
// page, is core.Seq's own events by value (page, how, old and new block, log, segment), and the SIT
// figures are the model's: every out-of-place page clears its old block's bit and sets its new
// one's, each count one off the one before, the last the segment's count after the operation —
// for every kernel-written sequence on one file the player can play, and the single cases whose
// zero dirties partial pages.
func TestWritebackMatchesSeq(t *testing.T) {
	ts := mustOpenServer(t, Config{})
	// The model's own run reads a copy of the demo of its own.
	img, err := imgio.OpenFileContext(context.Background(), testutil.DemoImage(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { img.Close() })
	files, _ := filepath.Glob(filepath.Join(kernelSeqDir, "*", "ops"))
	files = append(files, filepath.Join(kernelCasesDir, "3.ops"), filepath.Join(kernelCasesDir, "4.ops"), filepath.Join(kernelCasesDir, "9.ops"))
	// The operations of the language no kernel sequence on the demo holds: a write written back
	// by fsync, a checkpoint, garbage collection and the clock between the zeros.
	more := filepath.Join(t.TempDir(), "more.ops")
	if err := os.WriteFile(more, []byte("write /cases/holes.bin 266240 16384\nfsync /cases/holes.bin\n"+
		"zero /cases/holes.bin 67584 195560\nnow 30\ncheckpoint\ngc 1\nzero /cases/holes.bin 0 524288\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	files = append(files, more)
	var played, outPlace, inPlace, checkpoints, dirtied int
	for _, name := range files {
		// The model's ops where the oracle's hold lines for its guest only.
		if m := filepath.Join(filepath.Dir(name), "model.ops"); strings.HasPrefix(name, kernelSeqDir) {
			if _, err := os.Stat(m); err == nil {
				name = m
			}
		}
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(name, kernelSeqDir) {
			if base, _ := os.ReadFile(filepath.Join(filepath.Dir(name), "base")); strings.TrimSpace(string(base)) != "demo" {
				continue // a sequence of another before-image (whose ops may hold the oracle's sysctl lines)
			}
		}
		ops, err := request.ParseOps(strings.NewReader(string(b)))
		if err != nil {
			t.Fatal(err)
		}
		// The player plays one file, and a zero last.
		path, one := "", true
		for _, op := range ops {
			if op.Path != "" && path != "" && op.Path != path {
				one = false
			}
			if op.Path != "" {
				path = op.Path
			}
		}
		if !one || !ops[len(ops)-1].IsZero() {
			continue
		}
		played++
		t.Run(filepath.Base(filepath.Dir(name))+"/"+filepath.Base(name), func(t *testing.T) {
			q := seqQuery(t, name, "both")
			var body wbBody
			if code := ts.get(t, "/api/images/demo/writeback?"+q.Encode(), &body); code != http.StatusOK {
				t.Fatalf("status %d", code)
			}
			want, valid, dirty := seqPages(t, img, path, ops)
			if len(body.Groups) != len(ops)+1 {
				t.Fatalf("%d groups, want one per operation and the unmount (%d)", len(body.Groups), len(ops)+1)
			}
			for i, g := range body.Groups {
				kind := "unmount"
				if i < len(ops) {
					kind = ops[i].Kind
				}
				if int(g.Dirtied) != dirty[i] {
					t.Errorf("group %d (%s): %d dirty pages after it, core.Seq has %d", i, g.Line, g.Dirtied, dirty[i])
				}
				dirtied += dirty[i]
				if g.Op != i+1 || g.Kind != kind || g.Played != (i == len(ops)-1) || g.Via == "" {
					t.Errorf("group %d: op %d kind %q played %v via %q", i, g.Op, g.Kind, g.Played, g.Via)
				}
				var got []core.PageWrite
				for _, p := range g.Pages {
					got = append(got, p.PageWrite)
				}
				if !reflect.DeepEqual(got, want[i]) && (len(got) > 0 || len(want[i]) > 0) {
					t.Errorf("group %d (%s): pages\n%+v\nwant core.Seq's\n%+v", i, g.Line, got, want[i])
				}
				if g.OtherSIT {
					t.Errorf("group %d (%s): the SIT changed otherwise too, on the demo where no garbage collection runs", i, g.Line)
				}
				last := map[uint32]uint32{}
				for _, p := range g.Pages {
					if p.Func == "" {
						t.Errorf("page %d: no kernel function", p.Index)
					}
					switch p.How {
					case core.WroteOutPlace:
						outPlace++
						if n := len(p.SIT); n == 0 || !p.SIT[n-1].Set || p.SIT[n-1].Addr != p.New || (isAddrValue(p.Old) && (n != 2 || p.SIT[0].Set || p.SIT[0].Addr != p.Old)) {
							t.Errorf("page %d %d → %d: SIT %+v", p.Index, p.Old, p.New, p.SIT)
						}
					case core.WroteInPlace:
						inPlace++
						if len(p.SIT) != 0 {
							t.Errorf("page %d in place changes the SIT: %+v", p.Index, p.SIT)
						}
					}
					for _, s := range p.SIT {
						d := int64(s.After) - int64(s.Before)
						if (s.Set && d != 1) || (!s.Set && d != -1) {
							t.Errorf("segment %d bit %d set=%v: valid %d → %d", s.Segno, s.Bit, s.Set, s.Before, s.After)
						}
						if n, ok := last[s.Segno]; ok && n != s.Before {
							t.Errorf("segment %d: valid %d after one page, %d before the next", s.Segno, n, s.Before)
						}
						if s.Addr != 4096+s.Segno*512+s.Bit {
							t.Errorf("bit %+v: not the address's", s)
						}
						last[s.Segno] = s.After
					}
				}
				if !reflect.DeepEqual(last, valid[i]) && (len(last) > 0 || len(valid[i]) > 0) {
					t.Errorf("group %d: valid counts %v after it, core.Seq's SIT says %v", i, last, valid[i])
				}
				checkpoints += map[bool]int{true: 1}[g.Checkpoint]
			}
		})
	}
	// The class is covered: sequences with writeback out of place and in place, and checkpoints.
	if played < 8 || outPlace == 0 || inPlace == 0 || checkpoints == 0 || dirtied == 0 {
		t.Errorf("%d sequences played, %d pages out of place, %d in place, %d checkpoints, %d dirty pages left: the test saw too little", played, outPlace, inPlace, checkpoints, dirtied)
	}
	// A sandbox run has nothing to write back.
	if code := ts.get(t, "/api/images/demo/writeback?"+url.Values{"sandbox": {"1,2"}}.Encode(), nil); code != http.StatusBadRequest {
		t.Errorf("sandbox: status %d", code)
	}
}
