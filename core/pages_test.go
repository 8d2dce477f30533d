package core

import (
	"math/rand/v2"
	"testing"
)

// TestPagesOfRefused: a request the VFS or f2fs refuses before f2fs_zero_range (length 0 or a
// negative offset: vfs_fallocate's -EINVAL; past s_maxbytes: -EFBIG; a directory: open(2)'s
// -EISDIR) has no pages at all, and a request it lets through has exactly its pages.
func TestPagesOfRefused(t *testing.T) {
	in := newState([]uint32{5000, 5001, 5002}, 3).input()
	for _, c := range []struct {
		req   Request
		errno string
	}{
		{Request{Offset: 0, Length: 0}, "EINVAL"},
		{Request{Offset: -1, Length: 4096}, "EINVAL"},
		{Request{Offset: 999999999999999, Length: 4096}, "EFBIG"},
		{Request{Offset: 1 << 40, Length: 1 << 40}, ""},
		{Request{Offset: 1 << 62, Length: 4096}, "EFBIG"},
		{Request{Offset: maxBytes, Length: 1}, "EFBIG"},
		{Request{Offset: 1<<63 - 1, Length: 1}, "EFBIG"},
	} {
		p := PagesOf(in, c.req)
		if got := ArgCheck(in, c.req); got != c.errno {
			t.Errorf("%+v: ArgCheck %q, want %q", c.req, got, c.errno)
		}
		if c.errno != "" && p != (Pages{}) {
			t.Errorf("%+v: refused with %s but pages %+v", c.req, c.errno, p)
		}
		if c.errno == "" && (p.Start != uint64(c.req.Offset)>>12 || p.End != (uint64(c.req.Offset+c.req.Length)+4095)>>12) {
			t.Errorf("%+v: pages %+v", c.req, p)
		}
	}
	dir := in
	dir.Inode.Type = "dir"
	if p := PagesOf(dir, Request{Length: 4096}); p != (Pages{}) || ArgCheck(dir, Request{Length: 4096}) != "EISDIR" {
		t.Errorf("a directory: pages %+v", p)
	}
}

// TestReachBoundsTheWalk: whatever the range, no event of a run is about a slot at or past
// Pages.Reach's end, and a range past the free space is cut to a few thousand pages.
func TestReachBoundsTheWalk(t *testing.T) {
	r := rand.New(rand.NewPCG(16, 1))
	for k := range 300 {
		st, req := randomStateN(r, 3000)
		// Long ranges past the end of the file, and little free space.
		if r.IntN(2) == 0 {
			req.Length = int64(1+r.IntN(1<<22)) * 4096
		}
		st.vol.ValidBlockCount = st.vol.UserBlockCount - uint64(r.IntN(5000))
		in := st.input()
		p := PagesOf(in, req)
		reach := p.Reach(in)
		if reach.Start != p.Start || reach.End > p.End {
			t.Fatalf("case %d: reach %+v of %+v", k, reach, p)
		}
		for _, m := range []Mode{PerBlock, Batched} {
			_, err := Walk(in, req, m, func(ev *Event) bool {
				if ev.Kind != EvStart && ev.Kind != EvDone && ev.Kind != EvSize && ev.Slot >= reach.End {
					t.Fatalf("case %d %v: %v event at slot %d, reach %+v ", k, m, ev.Kind, ev.Slot, reach)
				}
				return true
			})
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	// A 1 TiB zero-range of a 4 MiB file on a volume with 30,000 free blocks.
	st := newState(make([]uint32, 1024), 1024)
	p := PagesOf(st.input(), Request{Length: 1 << 40})
	if r := p.Reach(st.input()); p.End-p.Start != 1<<28 || r.End-r.Start > 40000 {
		t.Errorf("1 TiB: pages %+v, reach %+v", p, p.Reach(st.input()))
	}
}
