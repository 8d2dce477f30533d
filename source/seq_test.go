package source_test

import (
	"testing"

	"github.com/zrviz/zrviz/core"
	"github.com/zrviz/zrviz/source"
)

// TestSeqDirtyPagesWrittenBack: fill_zero dirties page 16 (over data) and page 64 (a hole, reserved
// NEW) of /cases/holes.bin; a second zero over both writes them back first, as
// filemap_write_and_wait_range does: page 16 in place (the demo is a small volume: ipu_policy FORCE),
// page 64 out of place to the hot data log's next free block (a file with at most 16 dirty pages), which the walk then invalidates.
// Under ipu_policy 16 page 16 goes out of place too, and the walk names its new block.
func TestSeqDirtyPagesWrittenBack(t *testing.T) {
	img := openDemo(t)
	f, err := source.Input(img, "/cases/holes.bin")
	if err != nil {
		t.Fatal(err)
	}
	v := f.Volume
	// Two dirty pages: f2fs_write_cache_pages sets FI_HOT_DATA (at most 16), so the hot data log.
	hot := v.MainBlkaddr + v.HotDataSegno*512 + v.HotDataBlkoff
	for _, tc := range []struct {
		name  string
		ipu   int64 // -1: the default
		calls uint64
		first uint32 // the call for slot 16
	}{
		{"default", -1, 18, 0},
		{"ipu_policy 16", 16, 18, hot},
	} {
		for _, mode := range core.Modes {
			q := core.NewSeq(mode)
			if tc.ipu >= 0 {
				if _, err := q.Tune("ipu_policy", uint64(tc.ipu)); err != nil {
					t.Fatal(err)
				}
			}
			r1, _, pages, err := q.Zero(f, core.Request{Offset: 67584, Length: 195560})
			if err != nil || r1.Errno != "" || len(pages) != 0 || len(r1.FillZero) != 2 {
				t.Fatalf("%s %s: first zero: %v %+v %v", tc.name, mode, err, r1, pages)
			}
			old16 := r1.FillZero[0].Addr
			r2, in2, pages, err := q.Zero(f, core.Request{Offset: 0, Length: 524288})
			if err != nil || r2.Errno != "" {
				t.Fatalf("%s %s: second zero: %v %+v", tc.name, mode, err, r2)
			}
			if len(pages) != 2 || pages[0].Index != 16 || pages[1].Index != 64 || pages[1].How != core.WroteOutPlace {
				t.Fatalf("%s %s: writeback %+v", tc.name, mode, pages)
			}
			if len(in2.Inode.Dirty) != 0 {
				t.Errorf("%s %s: dirty after writeback %v", tc.name, mode, in2.Inode.Dirty)
			}
			want16, want64 := old16, hot
			if tc.ipu == 16 {
				want16, want64 = hot, hot+1
			}
			if pages[0].New != want16 || pages[1].New != want64 {
				t.Errorf("%s %s: pages written to %d, %d; want %d, %d", tc.name, mode, pages[0].New, pages[1].New, want16, want64)
			}
			var blocks uint64
			for c := range r2.Calls.All() {
				blocks += uint64(c.Len)
			}
			if blocks != tc.calls {
				t.Errorf("%s %s: %d blocks invalidated, want %d", tc.name, mode, blocks, tc.calls)
			}
			if mode == core.PerBlock {
				var got []uint32
				for c := range r2.Calls.All() {
					got = append(got, c.Start)
				}
				if got[16] != want16 || got[17] != want64 {
					t.Errorf("%s: calls 17, 18 name %d, %d; want %d, %d", tc.name, got[16], got[17], want16, want64)
				}
			}
		}
	}
}
